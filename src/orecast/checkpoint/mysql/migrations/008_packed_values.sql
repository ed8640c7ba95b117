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
-- that is not a short-form string (a padded one, or another writer's number) is left as it is. No
-- helper tables (their DROP … IF EXISTS would log a note on every new store): each statement reads a
-- checkpoint's versions with JSON_TABLE over JSON_KEYS. The script may run again: it changes nothing
-- then.

-- (1) "vals" at the end of each document; the document's text is kept as it is (key order, compact
-- form). A version's value is the row stored under the version's text (short versions: their key).
UPDATE checkpoints AS c
SET c.checkpoint = CONCAT(
        LEFT(RTRIM(c.checkpoint), CHAR_LENGTH(RTRIM(c.checkpoint)) - 1),
        ',"vals":',
        COALESCE(
            (SELECT JSON_OBJECTAGG(
                        CONVERT(k.channel USING utf8mb4),
                        CASE WHEN cv.`blob` IS NULL AND cv.kind <> 'delta'
                                  AND CHAR_LENGTH(COALESCE(CAST(cv.value AS CHAR CHARACTER SET utf8mb4), '')) <= 200
                             THEN JSON_ARRAY(cv.kind, CAST(cv.value AS CHAR CHARACTER SET utf8mb4)) END)
             FROM JSON_TABLE(JSON_KEYS(c.checkpoint, '$.channel_versions'),
                             '$[*]' COLUMNS (channel VARBINARY(768) PATH '$')) AS k
               -- (the row of each version by the primary key: left to itself the optimiser read all rows)
               STRAIGHT_JOIN channel_values AS cv
                 ON cv.thread_id = c.thread_id AND cv.checkpoint_ns = c.checkpoint_ns AND cv.channel = k.channel
                AND cv.version = JSON_UNQUOTE(JSON_EXTRACT(c.checkpoint,
                        CONCAT('$.channel_versions.', JSON_QUOTE(CONVERT(k.channel USING utf8mb4)))))),
            '{}'),
        '}')
WHERE JSON_TYPE(c.checkpoint) = 'OBJECT' AND JSON_EXTRACT(c.checkpoint, '$.vals') IS NULL
  AND JSON_TYPE(JSON_EXTRACT(c.checkpoint, '$.channel_versions')) = 'OBJECT'
  AND NOT EXISTS (
    SELECT 1
    FROM JSON_TABLE(JSON_KEYS(c.checkpoint, '$.channel_versions'),
                    '$[*]' COLUMNS (channel VARBINARY(768) PATH '$')) AS k
    WHERE COALESCE(JSON_TYPE(JSON_EXTRACT(c.checkpoint,
                       CONCAT('$.channel_versions.', JSON_QUOTE(CONVERT(k.channel USING utf8mb4))))), '') <> 'STRING'
       OR JSON_UNQUOTE(JSON_EXTRACT(c.checkpoint,
              CONCAT('$.channel_versions.', JSON_QUOTE(CONVERT(k.channel USING utf8mb4))))) REGEXP '^[0-9]{32}[.]'
  );

-- (2) A small value's row goes once every checkpoint that names it keeps it in "vals" (a checkpoint
-- left without "vals" that has the channel may still read it).
DELETE cv FROM (
    SELECT c.thread_id, c.checkpoint_ns, k.channel,
           JSON_UNQUOTE(JSON_EXTRACT(c.checkpoint,
               CONCAT('$.channel_versions.', JSON_QUOTE(CONVERT(k.channel USING utf8mb4))))) AS version
    FROM checkpoints AS c
      JOIN JSON_TABLE(JSON_KEYS(c.checkpoint, '$.vals'), '$[*]' COLUMNS (channel VARBINARY(768) PATH '$')) AS k
    GROUP BY 1, 2, 3, 4
    HAVING MIN(JSON_TYPE(JSON_EXTRACT(c.checkpoint,
               CONCAT('$.vals.', JSON_QUOTE(CONVERT(k.channel USING utf8mb4))))) = 'ARRAY') = 1
  ) AS kept
  -- (from each kept value to its row by the primary key, not the other way round)
  STRAIGHT_JOIN channel_values AS cv
    ON cv.thread_id = kept.thread_id AND cv.checkpoint_ns = kept.checkpoint_ns AND cv.channel = kept.channel
   AND cv.version = kept.version
  LEFT JOIN (
    SELECT DISTINCT c.thread_id, c.checkpoint_ns, k.channel
    FROM checkpoints AS c
      JOIN JSON_TABLE(JSON_KEYS(c.checkpoint, '$.channel_versions'),
                      '$[*]' COLUMNS (channel VARBINARY(768) PATH '$')) AS k
    WHERE JSON_EXTRACT(c.checkpoint, '$.vals') IS NULL
  ) AS unpacked
    ON unpacked.thread_id = cv.thread_id AND unpacked.checkpoint_ns = cv.checkpoint_ns
   AND unpacked.channel = cv.channel
WHERE unpacked.thread_id IS NULL;
