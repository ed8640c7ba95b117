-- orecast service tables, version 2: a run's stream events in the database, written only while a
-- client connected to another process follows the run (`shared_stream`), so any process can stream it.
ALTER TABLE service_runs ADD COLUMN shared_stream INT NOT NULL DEFAULT 0;
CREATE TABLE IF NOT EXISTS service_run_events (
    run_id VARBINARY(255) NOT NULL,
    seq    INT NOT NULL,
    event  TEXT NOT NULL,
    data   LONGTEXT NOT NULL,
    PRIMARY KEY (run_id, seq)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;
