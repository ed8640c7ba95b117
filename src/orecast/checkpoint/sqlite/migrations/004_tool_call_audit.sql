-- Tool-call audit with timings: one row per attempt of a tool call, written as the call runs by the
-- agent's tool-call middleware (orecast.agent.audit) through the saver (`abegin_tool_call` …).
-- The `tool_calls` view (migration 002) stays: the calls read back from the stored messages.

-- status: running (started, not ended: still running, or its process died), ok, error, rejected and
-- edited (a human's decision), cancelled. `attempt` counts the rows of the same call id in the thread.
CREATE TABLE IF NOT EXISTS tool_call_audit (
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
CREATE INDEX IF NOT EXISTS tool_call_audit_thread ON tool_call_audit (thread_id, call_id);
CREATE INDEX IF NOT EXISTS tool_call_audit_started_at ON tool_call_audit (started_at);
CREATE INDEX IF NOT EXISTS tool_call_audit_tool ON tool_call_audit (tool, started_at);
