-- orecast service tables, version 5: a run whose process died is taken over by a live one and
-- resumed from its last checkpoint (runs/recover.py); `attempt` counts the processes that drove it.
ALTER TABLE service_runs ADD COLUMN attempt INT NOT NULL DEFAULT 1;
-- The recovery's search, every few seconds in every process (MySQL has no partial index).
CREATE INDEX service_runs_active ON service_runs (status, heartbeat_at);
