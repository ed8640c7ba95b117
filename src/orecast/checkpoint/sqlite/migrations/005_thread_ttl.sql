-- Thread TTL (checkpoint/sweep.py): a thread's own time to live and strategy (NULL: the settings'
-- default), the `updated_at` a `keep_latest` sweep last pruned it at (so an idle thread is pruned once,
-- not at every sweep), and a record of each sweep run.
ALTER TABLE threads ADD COLUMN ttl_seconds INTEGER;
ALTER TABLE threads ADD COLUMN ttl_strategy TEXT;
ALTER TABLE threads ADD COLUMN swept_updated_at TEXT;
CREATE INDEX IF NOT EXISTS threads_own_ttl ON threads (updated_at) WHERE ttl_seconds IS NOT NULL;

CREATE TABLE IF NOT EXISTS sweep_runs (
    run_id              TEXT PRIMARY KEY,
    started_at          TEXT NOT NULL,
    finished_at         TEXT,
    status              TEXT NOT NULL,
    threads_deleted     INTEGER NOT NULL DEFAULT 0,
    threads_pruned      INTEGER NOT NULL DEFAULT 0,
    checkpoints_deleted INTEGER NOT NULL DEFAULT 0,
    error               TEXT
);
CREATE INDEX IF NOT EXISTS sweep_runs_started_at ON sweep_runs (started_at);
