-- Channel versions are stored without the leading zeros of their count (core.py, `version_key`):
-- "00000000000000000000000000000015.5719447354942698" becomes "15.5719447354942698". Checkpoint rows
-- say which form they hold; the `version` column of channel values holds the short form only.
UPDATE channel_values
SET version = COALESCE(NULLIF(ltrim(split_part(version, '.', 1), '0'), ''), '0') || '.' || split_part(version, '.', 2)
WHERE version ~ '^[0-9]{32}\.[0-9]{16}$';

-- The checkpoint document (versions, no values) is read whole by the saver and only by `->` in SQL:
-- as `json` it keeps our compact text, ~100 B a row smaller than JSONB's binary form of so small a
-- document. Metadata stays JSONB (`metadata @> …` filters).
ALTER TABLE checkpoints ALTER COLUMN checkpoint TYPE json USING checkpoint::json;
