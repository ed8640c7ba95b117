-- orecast service tables, version 3: crons, runs started on a schedule (`next_run_date`, UTC ISO
-- timestamps with microseconds, so that they compare as text). A replica fires a due cron only if its
-- `UPDATE … WHERE next_run_date = <the date it read>` changed the row: each firing happens once.
CREATE TABLE IF NOT EXISTS service_crons (
    cron_id          VARBINARY(255) NOT NULL,
    assistant_id     VARBINARY(255) NOT NULL,
    thread_id        VARBINARY(1024),
    owner            TEXT,
    auth_user        LONGTEXT,
    schedule         VARCHAR(255) NOT NULL,
    timezone         VARCHAR(255),
    end_time         VARCHAR(40) CHARACTER SET ascii,
    next_run_date    VARCHAR(40) CHARACTER SET ascii,
    payload          LONGTEXT NOT NULL,
    metadata         LONGTEXT NOT NULL DEFAULT ('{}'),
    on_run_completed VARCHAR(16) CHARACTER SET ascii,
    enabled          INT NOT NULL DEFAULT 1,
    created_at       VARCHAR(40) CHARACTER SET ascii NOT NULL,
    updated_at       VARCHAR(40) CHARACTER SET ascii NOT NULL,
    PRIMARY KEY (cron_id),
    INDEX service_crons_due (next_run_date),
    INDEX service_crons_thread (thread_id)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;
