-- orecast service tables, PostgreSQL, version 1: assistants (configurations of served graphs) and runs.
CREATE TABLE IF NOT EXISTS service_assistants (
    assistant_id TEXT PRIMARY KEY,
    graph_id     TEXT NOT NULL,
    name         TEXT NOT NULL,
    description  TEXT,
    config       TEXT NOT NULL DEFAULT '{}',
    context      TEXT NOT NULL DEFAULT '{}',
    metadata     TEXT NOT NULL DEFAULT '{}',
    version      INTEGER NOT NULL DEFAULT 1,
    owner        TEXT,
    created_at   TEXT NOT NULL,
    updated_at   TEXT NOT NULL
);

CREATE TABLE IF NOT EXISTS service_runs (
    run_id             TEXT PRIMARY KEY,
    thread_id          TEXT NOT NULL,
    assistant_id       TEXT NOT NULL,
    status             TEXT NOT NULL,
    metadata           TEXT NOT NULL DEFAULT '{}',
    kwargs             TEXT NOT NULL DEFAULT '{}',
    multitask_strategy TEXT NOT NULL,
    owner              TEXT,
    cancel_action      TEXT,
    cancel_reason      TEXT,
    error              TEXT,
    heartbeat_at       TEXT,
    created_at         TEXT NOT NULL,
    updated_at         TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS service_runs_thread ON service_runs (thread_id, created_at);
-- The admission rule itself: at most one running run per thread, whichever process claims it.
CREATE UNIQUE INDEX IF NOT EXISTS service_runs_one_running
    ON service_runs (thread_id) WHERE status = 'running';
