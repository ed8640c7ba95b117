-- Version 8 on MySQL: a checkpoint's small channel values live in its own row, as on PostgreSQL since
-- its 007. Most values are a few bytes (`null` for the branch channels, `[[1,52]]` for the messages),
-- and a row of their own cost a row and an index entry each; a put also inserted them with a statement
-- of its own, and a read looked them up. Now a checkpoint's values of up to 200 characters of JSON text
-- (no blob, not a DeltaChannel snapshot) are kept in its document under "vals": {channel: [kind, JSON
-- text]}, inherited ones too, so a read needs no other row. Larger values keep their row in
-- `channel_values`, one per version, and are named in "vals" with null. A channel with a version but
-- absent from "vals" has no value. A document without "vals" is read as before (every value a row).
--
-- Existing checkpoints get "vals" here, and the small values' rows go. A checkpoint holding a version
-- that is not a short-form string (a padded one, or another writer's number) is left as it is.
DROP TABLE IF EXISTS orecast_m8_values;
DROP TABLE IF EXISTS orecast_m8_versions;

-- Every channel version of every checkpoint without "vals".
CREATE TABLE orecast_m8_versions ENGINE = InnoDB AS
SELECT c.thread_id, c.checkpoint_ns, c.checkpoint_id, k.channel,
       JSON_UNQUOTE(JSON_EXTRACT(c.checkpoint, CONCAT('$.channel_versions.', JSON_QUOTE(CONVERT(k.channel USING utf8mb4)))))
           AS version,
       JSON_TYPE(JSON_EXTRACT(c.checkpoint, CONCAT('$.channel_versions.', JSON_QUOTE(CONVERT(k.channel USING utf8mb4)))))
           AS version_type
FROM checkpoints AS c
  JOIN JSON_TABLE(JSON_KEYS(c.checkpoint, '$.channel_versions'),
                  '$[*]' COLUMNS (channel VARBINARY(768) PATH '$')) AS k
WHERE JSON_TYPE(c.checkpoint) = 'OBJECT' AND JSON_EXTRACT(c.checkpoint, '$.vals') IS NULL;

-- The stored value of each, for the checkpoints whose versions all have the short form: [kind, JSON
-- text] when small, NULL when it keeps its row.
CREATE TABLE orecast_m8_values ENGINE = InnoDB AS
SELECT v.thread_id, v.checkpoint_ns, v.checkpoint_id, v.channel, cv.version,
       CASE WHEN cv.`blob` IS NULL AND cv.kind <> 'delta'
                 AND CHAR_LENGTH(COALESCE(CAST(cv.value AS CHAR CHARACTER SET utf8mb4), '')) <= 200
            THEN JSON_ARRAY(cv.kind, CAST(cv.value AS CHAR CHARACTER SET utf8mb4)) END AS entry
FROM orecast_m8_versions AS v
  JOIN channel_values AS cv
    ON cv.thread_id = v.thread_id AND cv.checkpoint_ns = v.checkpoint_ns AND cv.channel = v.channel
   AND cv.version = v.version
WHERE NOT EXISTS (
    SELECT 1 FROM orecast_m8_versions AS b
    WHERE b.thread_id = v.thread_id AND b.checkpoint_ns = v.checkpoint_ns AND b.checkpoint_id = v.checkpoint_id
      AND (b.version_type <> 'STRING' OR b.version REGEXP '^[0-9]{32}[.]')
);

-- The document's text is kept as it is (key order, compact form); "vals" is added at its end.
UPDATE checkpoints AS c
SET c.checkpoint = CONCAT(
        LEFT(RTRIM(c.checkpoint), CHAR_LENGTH(RTRIM(c.checkpoint)) - 1),
        ',"vals":',
        COALESCE(
            (SELECT JSON_OBJECTAGG(CONVERT(i.channel USING utf8mb4), JSON_EXTRACT(i.entry, '$'))
             FROM orecast_m8_values AS i
             WHERE i.thread_id = c.thread_id AND i.checkpoint_ns = c.checkpoint_ns
               AND i.checkpoint_id = c.checkpoint_id),
            '{}'),
        '}')
WHERE JSON_TYPE(c.checkpoint) = 'OBJECT' AND JSON_EXTRACT(c.checkpoint, '$.vals') IS NULL
  AND JSON_TYPE(JSON_EXTRACT(c.checkpoint, '$.channel_versions')) = 'OBJECT'
  AND NOT EXISTS (
    SELECT 1 FROM orecast_m8_versions AS b
    WHERE b.thread_id = c.thread_id AND b.checkpoint_ns = c.checkpoint_ns AND b.checkpoint_id = c.checkpoint_id
      AND (b.version_type <> 'STRING' OR b.version REGEXP '^[0-9]{32}[.]')
  );

-- A small value's row goes: every checkpoint given "vals" holds it; one left without (other versions)
-- may still read it.
DELETE cv FROM channel_values AS cv
  JOIN (SELECT DISTINCT thread_id, checkpoint_ns, channel, version FROM orecast_m8_values
        WHERE entry IS NOT NULL) AS i
    ON cv.thread_id = i.thread_id AND cv.checkpoint_ns = i.checkpoint_ns AND cv.channel = i.channel
   AND cv.version = i.version
WHERE NOT EXISTS (
    SELECT 1 FROM checkpoints AS c
    WHERE c.thread_id = cv.thread_id AND c.checkpoint_ns = cv.checkpoint_ns
      AND JSON_EXTRACT(c.checkpoint, '$.vals') IS NULL
      AND JSON_CONTAINS_PATH(c.checkpoint, 'one',
                             CONCAT('$.channel_versions.', JSON_QUOTE(CONVERT(cv.channel USING utf8mb4))))
);

DROP TABLE orecast_m8_values;
DROP TABLE orecast_m8_versions;
