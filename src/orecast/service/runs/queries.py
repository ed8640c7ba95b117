"""SQL of the runs table (`?` placeholders; the connection layer adapts them for PostgreSQL and MySQL).

A `…_MYSQL` constant is the MySQL form of the statement of the same name."""

RUN_COLUMNS = """run_id, thread_id, assistant_id, status, metadata, kwargs, multitask_strategy, owner,
    cancel_action, cancel_reason, error, created_at, updated_at"""
# `driver`: the process that inserts a run drives it (runs/driver.py)
INSERT_RUN = f"""INSERT INTO service_runs ({RUN_COLUMNS}, heartbeat_at, driver, delay_seconds)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, NULL, NULL, NULL, ?, ?, ?, ?, ?)"""
SELECT_RUN = f"SELECT {RUN_COLUMNS}, shared_stream FROM service_runs WHERE run_id = ?"
# The thread's pending and running runs (none: one row of NULLs), the state of the run's assistant and
# whether the thread is as the run read it (`{same_thread}`: the store's condition, or `1 = 1`): a run
# may use rows read earlier, and this first statement of its admission tells if they changed.
SELECT_ACTIVE_RUNS = """SELECT a.version, a.updated_at, {same_thread}, r.run_id, r.status
FROM (SELECT 1 AS one) AS one
LEFT JOIN service_assistants AS a ON a.assistant_id = ?
LEFT JOIN service_runs AS r ON r.thread_id = ? AND r.status IN ('pending', 'running')
ORDER BY r.created_at, r.run_id"""
# PostgreSQL, `enqueue` and `reject`: the admission in one statement (sent after the thread's lock, in one
# message: one implicit transaction). The run is inserted only if its assistant still has the version it
# was prepared with and its thread is as it read it (`{same_thread}`: the store's condition, or `1 = 1`),
# and for `reject` only on a free thread: `running` on a free thread (unless the first `?` of the CASE,
# its process has no free slot: runs/slots.py), whose status becomes `busy`
# (`{thread}`: the store's statement on that condition), else `pending`; and only while the thread's row
# exists, kept from a TTL sweep's or a delete's hands until the run is in (`{lock}`: the store's locking
# query; a delete committed while it waited leaves it no row). Answers the run's status (NULL: not
# inserted), whether the assistant and the thread were unchanged, the thread's active runs, and whether
# the thread exists.
ADMIT_RUN_AT_ONCE = f"""WITH locked AS ({{lock}}), active AS (
    SELECT run_id, created_at FROM service_runs WHERE thread_id = ? AND status IN ('pending', 'running')
), unchanged AS (
    SELECT EXISTS (
        SELECT 1 FROM service_assistants WHERE assistant_id = ? AND version = ? AND updated_at = ?
    ) AND {{same_thread}} AS yes
), inserted AS (
    INSERT INTO service_runs ({RUN_COLUMNS}, heartbeat_at, driver, delay_seconds)
    SELECT ?, ?, ?, CASE WHEN ? OR EXISTS (SELECT 1 FROM active) THEN 'pending' ELSE 'running' END,
        ?, ?, ?, ?, NULL, NULL, NULL, ?, ?, ?, ?, ?
    WHERE (SELECT yes FROM unchanged) AND EXISTS (SELECT 1 FROM locked)
        AND NOT (? AND EXISTS (SELECT 1 FROM active))
    RETURNING status
), thread AS ({{thread}})
SELECT (SELECT status FROM inserted), (SELECT yes FROM unchanged),
    ARRAY(SELECT run_id FROM active ORDER BY created_at, run_id), EXISTS (SELECT 1 FROM locked)"""
LIST_RUNS = f"""SELECT {RUN_COLUMNS}, shared_stream FROM service_runs WHERE thread_id = ? {{status}}
ORDER BY created_at DESC, run_id DESC LIMIT ? OFFSET ?"""
# Claim: this run is the thread's oldest pending one; the unique index on running runs per thread
# makes a second concurrent claim fail, whatever process it comes from.
_NEXT_ON_FREE_THREAD = """status = 'pending' AND cancel_action IS NULL AND NOT EXISTS (
    SELECT 1 FROM service_runs AS r WHERE r.thread_id = ? AND r.status = 'running'
) AND NOT EXISTS (
    SELECT 1 FROM service_runs AS r WHERE r.thread_id = ? AND r.status = 'pending'
      AND (r.created_at < ? OR (r.created_at = ? AND r.run_id < ?))
)"""
CLAIM_RUN = f"""UPDATE service_runs SET status = 'running', heartbeat_at = ?, updated_at = ?
WHERE run_id = ? AND {_NEXT_ON_FREE_THREAD}"""
# A live process with a free slot takes a run another one queued (runs/share.py): the claim, and the run
# becomes this process's (`driver`, `lease` + 1: the queuing process sees the lease change and lets it
# go, and its beats no longer count) — only the lease it read, so two takers never both win. Its
# `attempt` stays: the run has not run yet.
HAND_OVER_RUN = f"""UPDATE service_runs SET status = 'running', heartbeat_at = ?, updated_at = ?,
    lease = lease + 1, driver = ?
WHERE run_id = ? AND lease = ? AND {_NEXT_ON_FREE_THREAD}"""
HAND_OVER_OWN_ROW_MYSQL = """UPDATE service_runs SET status = 'running', heartbeat_at = ?, updated_at = ?,
    lease = lease + 1, driver = ?
WHERE run_id = ? AND lease = ? AND status = 'pending' AND cancel_action IS NULL"""
# The runs that could start now (their thread free, each its thread's next, due: a run's `created_at`
# is the end of its `after_seconds`), oldest first across the database: what a process with free slots
# takes of those another process queued (runs/share.py).
SELECT_CLAIMABLE = f"""SELECT {RUN_COLUMNS}, shared_stream, attempt, lease FROM service_runs AS p
WHERE p.status = 'pending' AND p.cancel_action IS NULL AND p.created_at <= ?
  AND NOT EXISTS (SELECT 1 FROM service_runs AS r WHERE r.thread_id = p.thread_id AND r.status = 'running')
  AND NOT EXISTS (SELECT 1 FROM service_runs AS r WHERE r.thread_id = p.thread_id AND r.status = 'pending'
      AND (r.created_at < p.created_at OR (r.created_at = p.created_at AND r.run_id < p.run_id)))
ORDER BY p.created_at, p.run_id LIMIT ?"""
# MySQL: the claim in two statements. InnoDB reads the subqueries of an UPDATE with shared locks on
# every run of the thread, and a run finishing meanwhile (its row locked FOR UPDATE) then deadlocked
# with the expiry's update of that row: the finish was rolled back and the thread stayed blocked until
# the run looked dead. So the other runs are checked by a plain read (claims and admissions of a thread
# hold its named lock, and the unique index still refuses a second running run), and the claim
# updates its own row only.
CLAIM_BLOCKED_MYSQL = """SELECT 1 FROM service_runs WHERE thread_id = ? AND (status = 'running' OR (
    status = 'pending' AND (created_at < ? OR (created_at = ? AND run_id < ?))
)) LIMIT 1"""
CLAIM_OWN_ROW_MYSQL = """UPDATE service_runs SET status = 'running', heartbeat_at = ?, updated_at = ?
WHERE run_id = ? AND status = 'pending' AND cancel_action IS NULL"""
# A pending or running run whose process stopped beating its heart would block the thread forever. The
# run asking to be claimed is not one of them: its process is alive, it is asking.
EXPIRE_DEAD_RUNS = """UPDATE service_runs SET status = 'error', error = 'the process driving it stopped',
    updated_at = ? WHERE thread_id = ? AND status IN ('pending', 'running') AND heartbeat_at < ?
    AND run_id <> ?"""
# MySQL: the dead runs found by a plain read, then each expired by its key (locking no live run's row).
SELECT_DEAD_RUNS_MYSQL = """SELECT run_id FROM service_runs WHERE thread_id = ? AND status IN ('pending', 'running')
    AND heartbeat_at < ? AND run_id <> ?"""
EXPIRE_DEAD_RUN_MYSQL = """UPDATE service_runs SET status = 'error', error = 'the process driving it stopped',
    updated_at = ? WHERE run_id = ? AND status IN ('pending', 'running') AND heartbeat_at < ?"""
# A rollback asked for (by another run's admission) whose run is over but not yet erased: the process
# driving it died before erasing it (its row was then expired), or the one that expired it did.
SELECT_ROLLBACKS_LEFT = """SELECT run_id FROM service_runs
WHERE thread_id = ? AND cancel_action = 'rollback' AND status NOT IN ('pending', 'running')"""
SELECT_ALL_ROLLBACKS_LEFT = """SELECT run_id, thread_id FROM service_runs
WHERE cancel_action = 'rollback' AND status NOT IN ('pending', 'running')"""
# A beat of the lease that drives the run: a process whose run was taken over (its beats came too late)
# changes nothing, and learns it must stop.
HEARTBEAT = """UPDATE service_runs SET heartbeat_at = ? WHERE run_id = ? AND lease = ?
    AND status IN ('pending', 'running')"""
# Runs whose process stopped beating its heart (it died) and that nobody asked to cancel: a live
# process takes them over (runs/recover.py). Oldest first, a few at a time.
SELECT_DEAD_RUNS = """SELECT run_id FROM service_runs WHERE status IN ('pending', 'running')
    AND heartbeat_at < ? AND cancel_action IS NULL ORDER BY created_at LIMIT 20"""
# The take-over: the process whose update changes the row drives the run from now on; the heartbeat
# it sets keeps the other processes (and the expiry of a claim, EXPIRE_DEAD_RUNS) off it.
# A new lease (a new process holds the run); a new attempt only if the run had started (`running`): a
# queued run taken from a dead process runs for the first time.
_NEXT_LEASE = "attempt = attempt + CASE WHEN status = 'running' THEN 1 ELSE 0 END, lease = lease + 1"
TAKE_OVER_RUN = f"""UPDATE service_runs SET heartbeat_at = ?, {_NEXT_LEASE}, driver = ?
    WHERE run_id = ? AND status IN ('pending', 'running') AND heartbeat_at < ? AND cancel_action IS NULL"""
# Runs driven by a process of this one's space (runs/driver.py: `driver LIKE` its pattern), whatever
# their heartbeat: those whose driver is gone are taken over at once, by the driver they had (no other
# process took them meanwhile).
SELECT_RUNS_DRIVEN_HERE = """SELECT run_id, driver FROM service_runs WHERE status IN ('pending', 'running')
    AND driver LIKE ? AND cancel_action IS NULL ORDER BY created_at LIMIT 20"""
TAKE_OVER_ORPHAN = f"""UPDATE service_runs SET heartbeat_at = ?, {_NEXT_LEASE}, driver = ?
    WHERE run_id = ? AND status IN ('pending', 'running') AND driver = ? AND cancel_action IS NULL"""
# A run stopped by its process's shutdown: its heartbeat is made as old as can be, so the next process
# to look takes it over at once.
RELEASE_RUN = """UPDATE service_runs SET heartbeat_at = ? WHERE run_id = ? AND lease = ?
    AND status IN ('pending', 'running')"""
SELECT_ATTEMPT = "SELECT attempt, lease FROM service_runs WHERE run_id = ?"
# The last event the run's earlier attempts wrote for other processes: the next attempt numbers on.
SELECT_LAST_EVENT = "SELECT COALESCE(MAX(seq), 0) FROM service_run_events WHERE run_id = ?"
SELECT_CANCEL = "SELECT cancel_action, status, shared_stream FROM service_runs WHERE run_id = ?"
# The runs of a process waiting for a slot (runs/slots.py), all in one statement each poll, not one per
# run: a batch of 2,000 runs waits without 2,000 queries a poll. `{ids}`: one `?` per run.
SELECT_QUEUED = "SELECT run_id, cancel_action, status, lease FROM service_runs WHERE run_id IN ({ids})"
HEARTBEAT_QUEUED = """UPDATE service_runs SET heartbeat_at = ? WHERE lease = ? AND status IN ('pending', 'running')
    AND run_id IN ({ids})"""
SHARE_STREAM = "UPDATE service_runs SET shared_stream = 1 WHERE run_id = ?"
# a copy interrupted between commit and bookkeeping is simply written again
INSERT_EVENT = """INSERT INTO service_run_events (run_id, seq, event, data) VALUES (?, ?, ?, ?)
ON CONFLICT (run_id, seq) DO NOTHING"""
INSERT_EVENT_MYSQL = """INSERT INTO service_run_events (run_id, seq, event, data) VALUES (?, ?, ?, ?)
ON DUPLICATE KEY UPDATE run_id = run_id"""
SELECT_EVENTS = """SELECT seq, event, data FROM service_run_events WHERE run_id = ? AND seq > ?
ORDER BY seq LIMIT 500"""
DELETE_RUN_EVENTS = "DELETE FROM service_run_events WHERE run_id = ?"
DELETE_THREAD_RUN_EVENTS = """DELETE FROM service_run_events
WHERE run_id IN (SELECT run_id FROM service_runs WHERE thread_id = ?)"""
REQUEST_CANCEL = """UPDATE service_runs SET cancel_action = ?, cancel_reason = ?, updated_at = ?
WHERE run_id = ? AND status IN ('pending', 'running')"""
CANCEL_PENDING = """UPDATE service_runs SET status = 'interrupted', cancel_action = ?, cancel_reason = ?,
    updated_at = ? WHERE run_id = ? AND status = 'pending'"""
# The end of a run not already over; whether a client elsewhere follows it decides if its last events
# are written in the same transaction.
FINISH_RUN = """UPDATE service_runs SET status = ?, error = ?, updated_at = ?, heartbeat_at = NULL
WHERE run_id = ? AND status IN ('pending', 'running') RETURNING shared_stream"""
# PostgreSQL: the end of a run no client of another process follows, and (`{thread}`: `, thread AS (the
# store's status statement, on the condition that `finished` has a row)`) its thread's status, in one
# statement — its own transaction, one round trip. Nothing changes if the run is over, or followed
# from elsewhere since its last poll (its events are then written in the end's transaction, above).
FINISH_RUN_AT_ONCE = """WITH finished AS (
    UPDATE service_runs SET status = ?, error = ?, updated_at = ?, heartbeat_at = NULL
    WHERE run_id = ? AND status IN ('pending', 'running') AND shared_stream = 0 RETURNING run_id
){thread} SELECT COUNT(*) FROM finished"""
# MySQL has no UPDATE … RETURNING: the row is locked and read, then updated, in one transaction.
LOCK_UNFINISHED_RUN = """SELECT shared_stream FROM service_runs
WHERE run_id = ? AND status IN ('pending', 'running') FOR UPDATE"""
FINISH_RUN_MYSQL = """UPDATE service_runs SET status = ?, error = ?, updated_at = ?, heartbeat_at = NULL
WHERE run_id = ?"""
# The run's end and its thread's status (in the checkpoint store's threads table) in one transaction.
DELETE_RUN = "DELETE FROM service_runs WHERE run_id = ?"
DELETE_THREAD_RUNS = "DELETE FROM service_runs WHERE thread_id = ?"
DELETE_THREAD_CRONS = "DELETE FROM service_crons WHERE thread_id = ?"
# What a deleted thread leaves in the service tables (its runs, their events, its crons), for the store's
# transaction that deletes the thread (`adelete_thread(also=…)`, `sweep(also=…)`): both go, or neither.
DELETE_THREAD_SERVICE_ROWS = (DELETE_THREAD_RUN_EVENTS, DELETE_THREAD_RUNS, DELETE_THREAD_CRONS)
SELECT_RUN_IDS = "SELECT run_id, thread_id FROM service_runs WHERE {where}"
# A thread stream's runs: the active ones and every one created since `?`, however short, oldest first.
SELECT_STREAM_RUNS = """SELECT run_id, status FROM service_runs
WHERE thread_id = ? AND (status IN ('pending', 'running') OR created_at >= ?)
ORDER BY created_at, run_id"""
