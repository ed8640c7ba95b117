-- orecast service tables, version 9: `lease` says which process's hold on a run is current (raised by a
-- hand-over from a live process's queue, runs/share.py, and by a take-over of a dead one's run,
-- runs/recover.py), so that `attempt` counts only the processes that executed it: a hand-over, before
-- the run ran, spent one of its attempts (MAX_ATTEMPTS) and showed as its second attempt.
ALTER TABLE service_runs ADD COLUMN lease INTEGER NOT NULL DEFAULT 1;
UPDATE service_runs SET lease = attempt;
