-- Tool-call audit with timings: one row per attempt of a tool call, written as the call runs by the
-- agent's tool-call middleware (orecast.agent.audit) through the saver (`abegin_tool_call` …).
-- The `tool_calls` view (migration 002) stays: the calls read back from the stored messages.

-- status: running (started, not ended: still running, or its process died), ok, error, rejected and
-- edited (a human's decision), cancelled. `attempt` counts the rows of the same call id in the thread.
-- Ids are VARBINARY as in 001 (byte-for-byte, and a 1,024-byte id fits an index key).
CREATE TABLE IF NOT EXISTS tool_call_audit (
    audit_id      CHAR(32) CHARACTER SET ascii NOT NULL,
    thread_id     VARBINARY(1024) NOT NULL,
    checkpoint_ns VARBINARY(1024) NOT NULL DEFAULT '',
    checkpoint_id VARBINARY(256),
    run_id        VARBINARY(256),
    call_id       VARBINARY(1024) NOT NULL,
    tool          VARBINARY(1024) NOT NULL,
    args          JSON NOT NULL,
    result        MEDIUMTEXT,
    status        VARCHAR(16) CHARACTER SET ascii NOT NULL,
    error         MEDIUMTEXT,
    started_at    DATETIME(6) NOT NULL,
    ended_at      DATETIME(6),
    duration_ms   DOUBLE,
    attempt       INT NOT NULL DEFAULT 1,
    PRIMARY KEY (audit_id),
    INDEX tool_call_audit_thread (thread_id, call_id),
    INDEX tool_call_audit_started_at (started_at),
    INDEX tool_call_audit_tool (tool(255), started_at)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;
