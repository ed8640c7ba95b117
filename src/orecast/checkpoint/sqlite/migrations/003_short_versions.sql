-- Channel versions are stored without the leading zeros of their count (core.py, `version_key`):
-- "00000000000000000000000000000015.5719447354942698" becomes "15.5719447354942698". Checkpoint rows
-- say which form they hold; the `version` column of channel values holds the short form only.
UPDATE channel_values
SET version = COALESCE(NULLIF(ltrim(substr(version, 1, 32), '0'), ''), '0') || substr(version, 33)
WHERE length(version) = 49
  AND substr(version, 33, 1) = '.'
  AND substr(version, 1, 32) NOT GLOB '*[^0-9]*'
  AND substr(version, 34) NOT GLOB '*[^0-9]*';
