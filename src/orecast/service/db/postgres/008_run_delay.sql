-- orecast service tables, version 8: a run's `after_seconds`, so that another live process that takes
-- a waiting run from this one (runs/share.py) waits as long before the graph starts. NULL: none.
ALTER TABLE service_runs ADD COLUMN delay_seconds DOUBLE PRECISION;
-- Every process with a free slot looks, every poll, for the oldest waiting run it could take.
CREATE INDEX IF NOT EXISTS service_runs_waiting ON service_runs (created_at, run_id) WHERE status = 'pending';
