-- Fewer, larger rows: at 200 turns of a chat, 1,600 channel-value rows of a few bytes each (`null` for
-- the branch channels, `[[1,52]]` for the messages) and 1,400 write rows paid PostgreSQL's per-row and
-- per-index cost, about 250 B and 450 B a row for 5-50 B of payload.
--
-- 1. A checkpoint's small channel values (JSON text up to 200 B, no blob, not a DeltaChannel snapshot) live in its own row, in the
--    checkpoint document under "vals": {channel: [kind, JSON text]} — inherited ones too, so a read
--    needs no other row. Larger values keep their row in `channel_values`, one per version, and are
--    named in "vals" with null. A channel with a version but absent from "vals" has no value.
-- 2. One row per task and checkpoint in `task_writes` (a JSON array of [idx, channel, kind, JSON text,
--    base64 blob]), and `writes` a view with the old columns, so SQL on writes reads as before.

-- (1) Existing values, for every checkpoint that refers to them. Versions are compared in their short
-- form (migration 004); a checkpoint holding a version of another form (an earlier orecast's floats)
-- is left as it is, without "vals", and is read the old way.
CREATE TEMPORARY TABLE inline_values AS
SELECT c.thread_id, c.checkpoint_ns, c.checkpoint_id, cv.channel, cv.version,
       CASE WHEN cv.blob IS NULL AND cv.kind <> 'delta' AND octet_length(COALESCE(cv.value::text, '')) <= 200
            THEN json_build_array(cv.kind, cv.value::text) END AS entry
FROM checkpoints AS c
CROSS JOIN LATERAL json_each_text(c.checkpoint->'channel_versions') AS v (channel, version)
JOIN channel_values AS cv
  ON cv.thread_id = c.thread_id AND cv.checkpoint_ns = c.checkpoint_ns AND cv.channel = v.channel
 AND cv.version = CASE
        WHEN v.version ~ '^[0-9]{32}\.[0-9]{16}$'
        THEN COALESCE(NULLIF(ltrim(split_part(v.version, '.', 1), '0'), ''), '0') || '.' || split_part(v.version, '.', 2)
        ELSE v.version
     END
WHERE json_typeof(c.checkpoint) = 'object' AND c.checkpoint->'vals' IS NULL;

-- The document's text is kept as it is (key order, compact form); "vals" is added at its end.
UPDATE checkpoints AS c
SET checkpoint = (rtrim(rtrim(c.checkpoint::text), '}') || ',"vals":' || COALESCE(
        (SELECT json_object_agg(i.channel, i.entry)::text FROM inline_values AS i
         WHERE i.thread_id = c.thread_id AND i.checkpoint_ns = c.checkpoint_ns AND i.checkpoint_id = c.checkpoint_id),
        '{}') || '}')::json
WHERE json_typeof(c.checkpoint) = 'object' AND c.checkpoint->'vals' IS NULL
  AND json_typeof(c.checkpoint->'channel_versions') = 'object'
  AND NOT EXISTS (
    SELECT 1 FROM json_each(c.checkpoint->'channel_versions') AS v
    WHERE json_typeof(v.value) <> 'string' OR v.value #>> '{}' ~ '^[0-9]{32}\.[0-9]{6}$'
  );

-- A small value's row goes: every checkpoint given "vals" holds it; one left without (other versions)
-- may still read it.
DELETE FROM channel_values AS cv
USING (SELECT DISTINCT thread_id, checkpoint_ns, channel, version FROM inline_values WHERE entry IS NOT NULL) AS i
WHERE cv.thread_id = i.thread_id AND cv.checkpoint_ns = i.checkpoint_ns
  AND cv.channel = i.channel AND cv.version = i.version
  AND NOT EXISTS (
    SELECT 1 FROM checkpoints AS c
    WHERE c.thread_id = cv.thread_id AND c.checkpoint_ns = cv.checkpoint_ns
      AND c.checkpoint->'vals' IS NULL AND c.checkpoint->'channel_versions'->cv.channel IS NOT NULL
  );

DROP TABLE inline_values;

-- (2) Writes, packed per task.
CREATE TABLE IF NOT EXISTS task_writes (
    thread_id     TEXT NOT NULL,
    checkpoint_ns TEXT NOT NULL DEFAULT '',
    checkpoint_id TEXT NOT NULL,
    task_id       TEXT NOT NULL,
    task_path     TEXT NOT NULL DEFAULT '',
    writes        JSON NOT NULL,  -- [[idx, channel, kind, JSON text or null, base64 blob or null], …]
    PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id, task_id)
);

-- Converted only while `writes` is still the table (the script may run again on a converted store).
DO $$ BEGIN IF (SELECT relkind FROM pg_class WHERE oid = to_regclass('writes')) = 'r' THEN
    INSERT INTO task_writes (thread_id, checkpoint_ns, checkpoint_id, task_id, task_path, writes)
    SELECT thread_id, checkpoint_ns, checkpoint_id, task_id, max(task_path),
           json_agg(json_build_array(idx, channel, kind, value::text, translate(encode(blob, 'base64'), E'\n', ''))
                    ORDER BY idx)
    FROM writes
    GROUP BY thread_id, checkpoint_ns, checkpoint_id, task_id; DROP TABLE writes; END IF; END $$;

CREATE OR REPLACE VIEW writes AS
SELECT w.thread_id, w.checkpoint_ns, w.checkpoint_id, w.task_id, (e.value->>0)::integer AS idx,
       e.value->>1 AS channel, w.task_path, e.value->>2 AS kind, (e.value->>3)::jsonb AS value,
       decode(e.value->>4, 'base64') AS blob
FROM task_writes AS w CROSS JOIN LATERAL json_array_elements(w.writes) AS e (value);
