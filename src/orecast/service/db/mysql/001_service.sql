-- orecast service tables, MySQL 8 / MariaDB, version 1: assistants (configurations of served graphs)
-- and runs. Keys are VARBINARY, as in the checkpoint store (exact comparison, byte-sized keys).
CREATE TABLE IF NOT EXISTS service_assistants (
    assistant_id VARBINARY(255) NOT NULL,
    graph_id     TEXT NOT NULL,
    name         TEXT NOT NULL,
    description  TEXT,
    config       LONGTEXT NOT NULL DEFAULT ('{}'),
    context      LONGTEXT NOT NULL DEFAULT ('{}'),
    metadata     LONGTEXT NOT NULL DEFAULT ('{}'),
    version      INT NOT NULL DEFAULT 1,
    owner        TEXT,
    created_at   VARCHAR(40) CHARACTER SET ascii NOT NULL,
    updated_at   VARCHAR(40) CHARACTER SET ascii NOT NULL,
    PRIMARY KEY (assistant_id)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

CREATE TABLE IF NOT EXISTS service_runs (
    run_id             VARBINARY(255) NOT NULL,
    thread_id          VARBINARY(1024) NOT NULL,
    assistant_id       VARBINARY(255) NOT NULL,
    status             VARCHAR(16) CHARACTER SET ascii NOT NULL,
    metadata           LONGTEXT NOT NULL DEFAULT ('{}'),
    kwargs             LONGTEXT NOT NULL DEFAULT ('{}'),
    multitask_strategy VARCHAR(16) CHARACTER SET ascii NOT NULL,
    owner              TEXT,
    cancel_action      VARCHAR(16) CHARACTER SET ascii,
    cancel_reason      TEXT,
    error              TEXT,
    heartbeat_at       VARCHAR(40) CHARACTER SET ascii,
    created_at         VARCHAR(40) CHARACTER SET ascii NOT NULL,
    updated_at         VARCHAR(40) CHARACTER SET ascii NOT NULL,
    -- The admission rule itself: at most one running run per thread, whichever process claims it
    -- (no partial indexes here: a unique index on a column that is NULL unless the run is running).
    running_thread     VARBINARY(1024) AS (CASE WHEN status = 'running' THEN thread_id END) VIRTUAL,
    PRIMARY KEY (run_id),
    INDEX service_runs_thread (thread_id, created_at),
    UNIQUE INDEX service_runs_one_running (running_thread)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;
