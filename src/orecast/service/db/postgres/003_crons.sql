-- orecast service tables, PostgreSQL, version 3: crons, runs started on a schedule (`next_run_date`, UTC ISO
-- timestamps with microseconds, so that they compare as text). A replica fires a due cron only if its
-- `UPDATE … WHERE next_run_date = <the date it read>` changed the row: each firing happens once.
CREATE TABLE IF NOT EXISTS service_crons (
    cron_id          TEXT PRIMARY KEY,
    assistant_id     TEXT NOT NULL,
    thread_id        TEXT,
    owner            TEXT,
    auth_user        TEXT,
    schedule         TEXT NOT NULL,
    timezone         TEXT,
    end_time         TEXT,
    next_run_date    TEXT,
    payload          TEXT NOT NULL,
    metadata         TEXT NOT NULL DEFAULT '{}',
    on_run_completed TEXT,
    enabled          INTEGER NOT NULL DEFAULT 1,
    created_at       TEXT NOT NULL,
    updated_at       TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS service_crons_due ON service_crons (next_run_date);
CREATE INDEX IF NOT EXISTS service_crons_thread ON service_crons (thread_id);
