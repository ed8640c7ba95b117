-- orecast service tables, version 5: a run whose process died is taken over by a live one and
-- resumed from its last checkpoint (runs/recover.py); `attempt` counts the processes that drove it.
ALTER TABLE service_runs ADD COLUMN attempt INTEGER NOT NULL DEFAULT 1;
-- The recovery's search, every few seconds in every process: only the runs not over are indexed.
CREATE INDEX IF NOT EXISTS service_runs_active ON service_runs (heartbeat_at)
    WHERE status IN ('pending', 'running');
