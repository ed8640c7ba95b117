-- orecast service tables, version 7: the process that drives a run (runs/driver.py), so that a
-- process of the same machine and PID namespace that finds it gone resumes the run at once instead of
-- after `stale_run_seconds` (runs/recover.py). NULL: a run written before, or off Linux.
ALTER TABLE service_runs ADD COLUMN driver VARCHAR(255) NULL;
