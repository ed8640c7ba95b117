-- Tool-call audit with timings: one row per attempt of a tool call, written as the call runs by the
-- agent's tool-call middleware (orecast.agent.audit) through the saver (`abegin_tool_call` …).
-- The calls read back from the stored messages (migration 002) stay a view, `tool_calls_in_messages`;
-- SQLite cannot rename a view, so it is made again under its new name.
DROP VIEW IF EXISTS tool_calls;

CREATE VIEW IF NOT EXISTS tool_calls_in_messages AS
SELECT
    call.thread_id                                  AS thread_id,
    call.item_no                                    AS item_no,
    c.key                                           AS position,
    json_extract(c.value, '$.id')                   AS call_id,
    json_extract(c.value, '$.name')                 AS tool,
    c.value -> '$.args'                             AS args,
    result.item_no                                  AS result_item_no,
    result.value -> '$.data.content'                AS result,
    CASE WHEN result.item_no IS NULL THEN 'pending'
         ELSE COALESCE(json_extract(result.value, '$.data.status'), 'success') END AS status
FROM items AS call
JOIN json_each(call.value, '$.data.tool_calls') AS c
LEFT JOIN items AS result
  ON result.thread_id = call.thread_id
 AND json_extract(result.value, '$.cls') IN ('ToolMessage', 'ToolMessageChunk')
 AND json_extract(result.value, '$.data.tool_call_id') = json_extract(c.value, '$.id')
WHERE json_extract(call.value, '$.cls') IN ('AIMessage', 'AIMessageChunk');

-- status: running (started, not ended: still running, or its process died), ok, error, rejected and
-- edited (a human's decision), cancelled. `attempt` counts the rows of the same call id in the thread.
CREATE TABLE IF NOT EXISTS tool_calls (
    audit_id      TEXT PRIMARY KEY,
    thread_id     TEXT NOT NULL,
    checkpoint_ns TEXT NOT NULL DEFAULT '',
    checkpoint_id TEXT,
    run_id        TEXT,
    call_id       TEXT NOT NULL,
    tool          TEXT NOT NULL,
    args          TEXT NOT NULL DEFAULT '{}',
    result        TEXT,
    status        TEXT NOT NULL,
    error         TEXT,
    started_at    TEXT NOT NULL,
    ended_at      TEXT,
    duration_ms   REAL,
    attempt       INTEGER NOT NULL DEFAULT 1
);
CREATE INDEX IF NOT EXISTS tool_calls_thread ON tool_calls (thread_id, call_id);
CREATE INDEX IF NOT EXISTS tool_calls_started_at ON tool_calls (started_at);
CREATE INDEX IF NOT EXISTS tool_calls_tool ON tool_calls (tool, started_at);
