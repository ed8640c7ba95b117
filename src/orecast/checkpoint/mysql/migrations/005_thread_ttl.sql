-- Thread TTL (checkpoint/sweep.py): a thread's own time to live and strategy (NULL: the settings'
-- default), the `updated_at` a `keep_latest` sweep last pruned it at (so an idle thread is pruned once,
-- not at every sweep), and a record of each sweep run.
ALTER TABLE threads
    ADD COLUMN ttl_seconds BIGINT NULL,
    ADD COLUMN ttl_strategy VARCHAR(16) CHARACTER SET ascii NULL,
    ADD COLUMN swept_updated_at DATETIME(6) NULL,
    ADD INDEX threads_own_ttl (ttl_seconds, updated_at);

CREATE TABLE IF NOT EXISTS sweep_runs (
    run_id              CHAR(32) CHARACTER SET ascii NOT NULL,
    started_at          DATETIME(6) NOT NULL,
    finished_at         DATETIME(6),
    status              VARCHAR(16) CHARACTER SET ascii NOT NULL,
    threads_deleted     INT NOT NULL DEFAULT 0,
    threads_pruned      INT NOT NULL DEFAULT 0,
    checkpoints_deleted BIGINT NOT NULL DEFAULT 0,
    error               TEXT,
    PRIMARY KEY (run_id),
    INDEX sweep_runs_started_at (started_at)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;
