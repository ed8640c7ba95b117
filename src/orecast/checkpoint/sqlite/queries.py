"""SQLite statements of the checkpoint store, one per constant (`?` placeholders)."""

TABLES = ("threads", "checkpoints", "channel_values", "items", "writes", "tool_call_audit")

CREATE_MIGRATIONS = """
CREATE TABLE IF NOT EXISTS orecast_migrations (
    version    INTEGER PRIMARY KEY,
    applied_at TEXT NOT NULL
)"""
SELECT_SCHEMA_VERSION = "SELECT COALESCE(MAX(version), 0) FROM orecast_migrations"
INSERT_MIGRATION = "INSERT INTO orecast_migrations (version, applied_at) VALUES (?, ?)"
COUNT_ROWS = "SELECT COUNT(*) FROM {table}"
# Pages of each table and of its indexes (the dbstat virtual table; most SQLite builds have it).
TABLE_BYTES = """
SELECT s.tbl_name, SUM(d.pgsize)
FROM dbstat AS d JOIN sqlite_schema AS s ON s.name = d.name
GROUP BY s.tbl_name"""

THREAD_COLUMNS = """thread_id, created_at, updated_at, metadata, status, head_checkpoint_id,
    checkpoint_count, message_count, preview"""

INSERT_THREAD = """
INSERT INTO threads (thread_id, incarnation, created_at, updated_at)
VALUES (?, ?, ?, ?)
ON CONFLICT (thread_id) DO NOTHING"""
SELECT_INCARNATION = "SELECT incarnation FROM threads WHERE thread_id = ?"

SELECT_THREAD = f"SELECT {THREAD_COLUMNS} FROM threads WHERE thread_id = ?"
SEARCH_THREADS = (
    f"SELECT {THREAD_COLUMNS} FROM threads {{where}} "
    "ORDER BY {sort_by} {sort_order}, thread_id {sort_order} LIMIT ? OFFSET ?"
)
COUNT_THREADS = "SELECT COUNT(*) FROM threads {where}"
# (a write transaction here already excludes every other writer)
SELECT_THREAD_FOR_UPDATE = f"SELECT {THREAD_COLUMNS} FROM threads WHERE thread_id = ?"
# status NULL: left as it is (not written back as read)
UPDATE_THREAD = (
    "UPDATE threads SET metadata = ?, status = COALESCE(?, status), updated_at = ? WHERE thread_id = ?"
)
SET_THREAD_STATUS = "UPDATE threads SET status = ? WHERE thread_id = ?"
# (OR IGNORE: see INSERT_ITEM_IF_NEW) `updated_at` moves in TOUCH_THREAD: SQLite rewrites an index entry
# whenever its column is assigned, even to the value it holds.
RECORD_CHECKPOINT_IN_THREAD = """
UPDATE OR IGNORE threads SET
    metadata = json_patch(?1, metadata),
    checkpoint_count = checkpoint_count + ?2,
    -- The head is the newest root checkpoint (what a read without an id loads): a put another process's
    -- newer one overtook (two runs on one thread) leaves it, its count and its preview alone.
    head_checkpoint_id = CASE WHEN ?3 >= IFNULL(head_checkpoint_id, '') THEN ?3 ELSE head_checkpoint_id END,
    -- the head's messages: a whole list (clear = 1) or the parent's plus the messages written for it
    message_count = CASE
        WHEN NOT ?3 >= IFNULL(head_checkpoint_id, '') OR ?3 IS NULL THEN message_count
        WHEN ?4 = 1 THEN ?5
        ELSE MAX(message_count + ?6, 0)
    END,
    preview = CASE WHEN ?3 >= IFNULL(head_checkpoint_id, '') THEN COALESCE(?7, preview) ELSE preview END,
    -- a newer root checkpoint ends an interruption; with async durability an interrupt write can be
    -- stored before its own checkpoint or before an older checkpoint's put commits
    status = CASE
        WHEN ?8 = 1 AND status = 'interrupted' AND NOT EXISTS (
            SELECT 1 FROM writes AS w
            WHERE w.thread_id = threads.thread_id AND w.checkpoint_ns = ''
              AND w.checkpoint_id >= ?9 AND w.channel = '__interrupt__'
        ) THEN 'idle'
        ELSE status
    END
WHERE thread_id = ?10 AND incarnation = ?11
RETURNING 1"""
# After RECORD_CHECKPOINT_IN_THREAD: `updated_at` moves at most every 10 ms (a turn's puts come a few ms
# apart), so most puts leave the `threads_updated_at` index alone: 5 of a single writer's 46 WAL pages a
# turn were that index's (bench/sqlite_pages.py). Times are ISO 8601 text; julianday reads them to the ms
# (and gives NULL for text it cannot read, which is then replaced). It moves at once after a keep_latest
# sweep marked the thread (`swept_updated_at`): the sweep takes a thread whose `updated_at` moved since
# for one active again.
TOUCH_THREAD = """
UPDATE threads SET updated_at = ?1
WHERE thread_id = ?2
  AND (IFNULL(julianday(?1) - julianday(updated_at), 1) > 0.010 / 86400 OR swept_updated_at >= updated_at)"""
RECOUNT_THREAD = """
UPDATE threads SET
    checkpoint_count = (SELECT COUNT(*) FROM checkpoints WHERE thread_id = ?),
    head_checkpoint_id = (
        SELECT MAX(checkpoint_id) FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = ''
    )
WHERE thread_id = ?"""

ALLOCATE_ITEMS = """
UPDATE threads SET next_item = next_item + ?
WHERE thread_id = ? AND incarnation = ?
RETURNING next_item"""
INSERT_ITEM = "INSERT INTO items (thread_id, item_no, hash, value) VALUES (?, ?, ?, ?)"
# Inside a transaction, SQLite copies each page a statement that writes several b-trees (a table and
# its indexes) touches into a statement journal first, so that it can undo the statement alone if a
# constraint aborts it half-way. OR IGNORE aborts on no constraint, so the three statements a put runs
# in the group's transaction (an item, the checkpoint, the thread's row) need no journal: 17 k fewer
# page copies in 160 turns of 8 threads (docs/benchmarks.md). What they ignore besides their key's
# conflict is a NULL in a NOT NULL column, which the saver never sends: `_store_items` finds an item
# it did not store, an ignored checkpoint is updated (and its NULL then fails), an ignored thread
# row reads as a stale thread.
# An item already stored under its hash keeps its number; the number allocated for it stays unused.
INSERT_ITEM_IF_NEW = """
INSERT OR IGNORE INTO items (thread_id, item_no, hash, value) VALUES (?, ?, ?, ?)"""
SELECT_ITEMS_BY_HASH = """
SELECT item_no, hash FROM items
WHERE thread_id = ? AND hash IN (SELECT value FROM json_each(?))"""
SELECT_ITEMS = """
SELECT item_no, value FROM items
WHERE thread_id = ? AND item_no IN (SELECT value FROM json_each(?))"""
SELECT_THREAD_ITEM_NUMBERS = "SELECT item_no FROM items WHERE thread_id = ?"
DELETE_ITEMS = "DELETE FROM items WHERE thread_id = ? AND item_no IN (SELECT value FROM json_each(?))"

INSERT_CHANNEL_VALUE = """
INSERT INTO channel_values (thread_id, checkpoint_ns, channel, version, kind, value, blob)
VALUES (?, ?, ?, ?, ?, ?, ?)
ON CONFLICT DO NOTHING"""
# Values by (thread, namespace, channel, version): a row of their own, else the entry [kind, JSON text]
# kept in the document ("vals", `inline_values`) of `k`, a checkpoint that refers to that version.
SELECT_CHANNEL_VALUES = """
SELECT cv.thread_id, cv.checkpoint_ns, cv.channel, cv.version, cv.kind, cv.value, cv.blob
FROM json_each(?1) AS j
JOIN channel_values AS cv
  ON cv.thread_id = json_extract(j.value, '$.t')
 AND cv.checkpoint_ns = json_extract(j.value, '$.n')
 AND cv.channel = json_extract(j.value, '$.c')
 AND cv.version = json_extract(j.value, '$.v')
UNION ALL
SELECT c.thread_id, c.checkpoint_ns, e.key, json_extract(j.value, '$.v'), json_extract(e.value, '$[0]'),
       json_extract(e.value, '$[1]'), NULL
FROM json_each(?1) AS j
JOIN checkpoints AS c
  ON c.thread_id = json_extract(j.value, '$.t')
 AND c.checkpoint_ns = json_extract(j.value, '$.n')
 AND c.checkpoint_id = json_extract(j.value, '$.k')
JOIN json_each(c.checkpoint, '$.vals') AS e ON e.key = json_extract(j.value, '$.c')
WHERE e.type = 'array'
  AND NOT EXISTS (
    SELECT 1 FROM channel_values AS cv
    WHERE cv.thread_id = c.thread_id AND cv.checkpoint_ns = c.checkpoint_ns AND cv.channel = e.key
      AND cv.version = json_extract(j.value, '$.v')
  )"""
SELECT_THREAD_VALUE_KEYS = """
SELECT checkpoint_ns, channel, version, kind, value FROM channel_values WHERE thread_id = ?"""
DELETE_CHANNEL_VALUE = """
DELETE FROM channel_values
WHERE thread_id = ? AND checkpoint_ns = ? AND channel = ? AND version = ?"""

CHECKPOINT_COLUMNS = """c.thread_id, c.checkpoint_ns, c.checkpoint_id, c.parent_checkpoint_id,
    c.checkpoint, c.metadata, t.incarnation, t.next_item, c.schema_version"""
# (OR IGNORE: see INSERT_ITEM_IF_NEW)
INSERT_CHECKPOINT = """
INSERT OR IGNORE INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id,
                                   checkpoint, metadata, run_id, schema_version)
VALUES (?, ?, ?, ?, ?, ?, ?, ?)
RETURNING 1"""
UPDATE_CHECKPOINT = """
UPDATE checkpoints SET parent_checkpoint_id = ?, checkpoint = ?, metadata = ?, run_id = ?,
    schema_version = ?
WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ?"""
SELECT_CHECKPOINT = f"""
SELECT {CHECKPOINT_COLUMNS}
FROM checkpoints AS c JOIN threads AS t ON t.thread_id = c.thread_id
WHERE c.thread_id = ? AND c.checkpoint_ns = ? AND c.checkpoint_id = ?"""
SELECT_LATEST_CHECKPOINT = f"""
SELECT {CHECKPOINT_COLUMNS}
FROM checkpoints AS c JOIN threads AS t ON t.thread_id = c.thread_id
WHERE c.thread_id = ? AND c.checkpoint_ns = ?
ORDER BY c.checkpoint_id DESC LIMIT 1"""
LIST_CHECKPOINTS = f"""
SELECT {CHECKPOINT_COLUMNS}
FROM checkpoints AS c JOIN threads AS t ON t.thread_id = c.thread_id
{{where}}
ORDER BY c.checkpoint_id DESC, c.thread_id DESC, c.checkpoint_ns DESC
LIMIT ?"""
WHERE_THREAD = "c.thread_id = ?"
WHERE_NS = "c.checkpoint_ns = ?"
WHERE_ID = "c.checkpoint_id = ?"
WHERE_BEFORE = "c.checkpoint_id < ?"
WHERE_AFTER_CURSOR = """(c.checkpoint_id < ? OR (c.checkpoint_id = ? AND (c.thread_id < ?
    OR (c.thread_id = ? AND c.checkpoint_ns < ?))))"""
DELETE_CHECKPOINT = """
DELETE FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ?"""
SELECT_CHECKPOINTS_OF_RUNS = """
SELECT thread_id, checkpoint_ns, checkpoint_id FROM checkpoints
WHERE run_id IN (SELECT value FROM json_each(?))"""
SELECT_THREAD_CHECKPOINT_IDS = "SELECT checkpoint_ns, checkpoint_id FROM checkpoints WHERE thread_id = ?"
# (namespace, versions, the values kept in the document: "vals", `inline_values`) of every checkpoint
SELECT_THREAD_VERSIONS = """
SELECT checkpoint_ns, json_extract(checkpoint, '$.channel_versions'), json_extract(checkpoint, '$.vals')
FROM checkpoints WHERE thread_id = ?"""
SELECT_NAMESPACE_HEADS = """
SELECT checkpoint_ns, MAX(checkpoint_id), json_extract(checkpoint, '$.channel_versions')
FROM checkpoints WHERE thread_id = ? GROUP BY checkpoint_ns"""
SELECT_PARENT_ID = """
SELECT c.parent_checkpoint_id, t.incarnation, t.next_item
FROM checkpoints AS c JOIN threads AS t ON t.thread_id = c.thread_id
WHERE c.thread_id = ? AND c.checkpoint_ns = ? AND c.checkpoint_id = ?"""
SELECT_LATEST_PARENT_ID = """
SELECT c.parent_checkpoint_id, t.incarnation, t.next_item
FROM checkpoints AS c JOIN threads AS t ON t.thread_id = c.thread_id
WHERE c.thread_id = ? AND c.checkpoint_ns = ?
ORDER BY c.checkpoint_id DESC LIMIT 1"""
# Walks up the parent chain from a checkpoint, at most ?4 rows, nearest first.
SELECT_ANCESTORS = """
WITH RECURSIVE chain (cid, parent, versions, depth) AS (
    SELECT checkpoint_id, parent_checkpoint_id, json_extract(checkpoint, '$.channel_versions'), 0
    FROM checkpoints WHERE thread_id = ?1 AND checkpoint_ns = ?2 AND checkpoint_id = ?3
    UNION ALL
    SELECT c.checkpoint_id, c.parent_checkpoint_id, json_extract(c.checkpoint, '$.channel_versions'),
           chain.depth + 1
    FROM chain JOIN checkpoints AS c
      ON c.thread_id = ?1 AND c.checkpoint_ns = ?2 AND c.checkpoint_id = chain.parent
    WHERE chain.depth + 1 < ?4
)
SELECT cid, parent, versions FROM chain ORDER BY depth"""

WRITE_COLUMNS = "(thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, task_path, kind, value, blob)"
INSERT_WRITE = f"INSERT INTO writes {WRITE_COLUMNS} VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING"
UPSERT_WRITE = f"""
INSERT INTO writes {WRITE_COLUMNS} VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id, task_id, idx) DO UPDATE SET
    channel = excluded.channel, task_path = excluded.task_path, kind = excluded.kind,
    value = excluded.value, blob = excluded.blob"""
# The channel values (part 0: channel, version) and the pending writes (part 1: checkpoint id, task id,
# channel) of a page of checkpoints, in one round trip; writes in the order they were made.
SELECT_VALUES_AND_WRITES = """
SELECT 0 AS part, cv.thread_id, cv.checkpoint_ns, cv.channel AS a, NULL AS task_path, cv.version AS b,
       NULL AS idx, NULL AS c, cv.kind, cv.value, cv.blob
FROM json_each(:values) AS j
  JOIN channel_values AS cv
    ON cv.thread_id = json_extract(j.value, '$.t')
   AND cv.checkpoint_ns = json_extract(j.value, '$.n')
   AND cv.channel = json_extract(j.value, '$.c')
   AND cv.version = json_extract(j.value, '$.v')
UNION ALL
SELECT 1, w.thread_id, w.checkpoint_ns, w.checkpoint_id, w.task_path, w.task_id, w.idx, w.channel, w.kind,
       w.value, w.blob
FROM json_each(:writes) AS j
  JOIN writes AS w
    ON w.thread_id = json_extract(j.value, '$.t')
   AND w.checkpoint_ns = json_extract(j.value, '$.n')
   AND w.checkpoint_id = json_extract(j.value, '$.c')
ORDER BY 1, 2, 3, 4, 5, 6, 7"""
SELECT_CHANNEL_WRITES = """
SELECT checkpoint_id, task_id, channel, idx, kind, value, blob FROM writes
WHERE thread_id = ? AND checkpoint_ns = ?
  AND checkpoint_id IN (SELECT value FROM json_each(?))
  AND channel IN (SELECT value FROM json_each(?))
ORDER BY checkpoint_id, task_path, task_id, idx"""
SELECT_THREAD_WRITE_REFS = """
SELECT kind, value FROM writes WHERE thread_id = ? AND kind IN ('items', 'delta', 'json')"""
DELETE_CHECKPOINT_WRITES = """
DELETE FROM writes WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ?"""
# Writes for a checkpoint that was never stored (its put failed, or the process died first), older than
# the newest checkpoint of their namespace: no run will store that checkpoint any more.
DELETE_ORPHAN_WRITES = """
DELETE FROM writes
WHERE thread_id = ?
  AND NOT EXISTS (
    SELECT 1 FROM checkpoints AS c
    WHERE c.thread_id = writes.thread_id AND c.checkpoint_ns = writes.checkpoint_ns
      AND c.checkpoint_id = writes.checkpoint_id
  )
  AND checkpoint_id < (
    SELECT MAX(c.checkpoint_id) FROM checkpoints AS c
    WHERE c.thread_id = writes.thread_id AND c.checkpoint_ns = writes.checkpoint_ns
  )"""

DELETE_THREAD = (
    "DELETE FROM tool_call_audit WHERE thread_id = ?",
    "DELETE FROM writes WHERE thread_id = ?",
    "DELETE FROM channel_values WHERE thread_id = ?",
    "DELETE FROM checkpoints WHERE thread_id = ?",
    "DELETE FROM items WHERE thread_id = ?",
    "DELETE FROM threads WHERE thread_id = ?",
)
# A copy target holding checkpoints or writes is never overwritten (a row alone, e.g. a title, is).
THREAD_HAS_DATA = """
SELECT 1 FROM checkpoints WHERE thread_id = ?
UNION ALL
SELECT 1 FROM writes WHERE thread_id = ?
LIMIT 1"""
# A copy reads one moment of its source: SQLite runs one write transaction at a time.
COPY_ONE_MOMENT: tuple[str, ...] = ()
SELECT_THREAD_TO_COPY = SELECT_THREAD
COPY_THREAD_ROW = """
INSERT INTO threads (thread_id, incarnation, created_at, updated_at, metadata, status,
                     head_checkpoint_id, checkpoint_count, message_count, preview, next_item)
SELECT ?, ?, created_at, ?, metadata, status, head_checkpoint_id, checkpoint_count, message_count,
       preview, next_item
FROM threads WHERE thread_id = ?"""
COPY_THREAD_DATA = (
    """INSERT INTO tool_call_audit (audit_id, thread_id, checkpoint_ns, checkpoint_id, run_id, call_id, tool, args,
                               result, status, error, started_at, ended_at, duration_ms, attempt)
       SELECT lower(hex(randomblob(16))), ?, checkpoint_ns, checkpoint_id, run_id, call_id, tool, args,
              result, status, error, started_at, ended_at, duration_ms, attempt
       FROM tool_call_audit WHERE thread_id = ?""",
    """INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id,
                                checkpoint, metadata, run_id, schema_version)
       SELECT ?, checkpoint_ns, checkpoint_id, parent_checkpoint_id, checkpoint, metadata, run_id,
              schema_version
       FROM checkpoints WHERE thread_id = ?""",
    """INSERT INTO channel_values (thread_id, checkpoint_ns, channel, version, kind, value, blob)
       SELECT ?, checkpoint_ns, channel, version, kind, value, blob
       FROM channel_values WHERE thread_id = ?""",
    """INSERT INTO items (thread_id, item_no, hash, value)
       SELECT ?, item_no, hash, value FROM items WHERE thread_id = ?""",
    """INSERT INTO writes (thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, task_path,
                           kind, value, blob)
       SELECT ?, checkpoint_ns, checkpoint_id, task_id, idx, channel, task_path, kind, value, blob
       FROM writes WHERE thread_id = ?""",
)
# Uncompressed bytes of every stored value (the benchmark's "payload").
PAYLOAD_BYTES = """SELECT
    (SELECT COALESCE(SUM(length(CAST(checkpoint AS BLOB))), 0) + COALESCE(SUM(length(CAST(metadata AS BLOB))), 0) FROM checkpoints)
  + (SELECT COALESCE(SUM(length(CAST(value AS BLOB))), 0) + COALESCE(SUM(length(blob)), 0) FROM channel_values)
  + (SELECT COALESCE(SUM(length(CAST(value AS BLOB))), 0) FROM items)
  + (SELECT COALESCE(SUM(length(CAST(value AS BLOB))), 0) + COALESCE(SUM(length(blob)), 0) FROM writes)"""

# The calls read from the stored messages (the `tool_calls` view of migration 002), one thread, in order.
SELECT_TOOL_CALLS = """
SELECT item_no, call_id, tool, args, result, status FROM tool_calls
WHERE thread_id = ? ORDER BY item_no, position"""

# The tool-call audit (migration 004): one row per attempt of a call; `attempt` counts the thread's
# rows of the same call id, this one included.
AUDIT_COLUMNS = """audit_id, thread_id, checkpoint_ns, checkpoint_id, run_id, call_id, tool, args, result,
    status, error, started_at, ended_at, duration_ms, attempt"""
INSERT_TOOL_CALL = f"""
INSERT INTO tool_call_audit ({AUDIT_COLUMNS})
SELECT ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, COALESCE(MAX(attempt), 0) + 1
FROM tool_call_audit WHERE thread_id = ? AND call_id = ?"""
END_TOOL_CALL = """
UPDATE tool_call_audit SET status = ?, result = ?, error = ?, ended_at = ?, duration_ms = ?,
    args = COALESCE(?, args)
WHERE audit_id = ?"""
# A row as an archive carries it (`threads import`): attempt and times as they were.
INSERT_TOOL_CALL_AS_IS = f"""
INSERT INTO tool_call_audit ({AUDIT_COLUMNS})
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"""
DELETE_TOOL_CALL = "DELETE FROM tool_call_audit WHERE audit_id = ?"
TOOL_CALL_HAS_STATUS = "SELECT 1 FROM tool_call_audit WHERE thread_id = ? AND call_id = ? AND status = ? LIMIT 1"
# `{where}`: AND-ed conditions of AUDIT_WHERE.
SELECT_AUDIT = f"""
SELECT {AUDIT_COLUMNS} FROM tool_call_audit {{where}}
ORDER BY started_at DESC, audit_id DESC LIMIT ?"""
AUDIT_WHERE = {
    "thread_id": "thread_id = ?",
    "tool": "tool = ?",
    "status": "status = ?",
    "since": "started_at >= ?",
}
# Per tool: calls, errors, still running; then each one's ended durations, sorted
# (percentiles are taken in Python, the same way on every dialect).
AUDIT_TOOL_COUNTS = """
SELECT tool, COUNT(*), SUM(CASE WHEN status = 'error' THEN 1 ELSE 0 END),
       SUM(CASE WHEN status = 'running' THEN 1 ELSE 0 END)
FROM tool_call_audit WHERE started_at >= ?
GROUP BY tool ORDER BY COUNT(*) DESC, tool LIMIT ?"""
AUDIT_TOOL_DURATIONS = """
SELECT tool, duration_ms FROM tool_call_audit
WHERE started_at >= ? AND duration_ms IS NOT NULL AND status NOT IN ('rejected', 'running')
  AND tool IN (SELECT value FROM json_each(?))
ORDER BY tool, duration_ms"""
SELECT_RECENT_FAILURES = """
SELECT thread_id, checkpoint_ns, checkpoint_id, run_id, tool, status, error, started_at FROM tool_call_audit
WHERE status IN ('error', 'cancelled')
ORDER BY started_at DESC, audit_id DESC LIMIT ?"""
# State upcasting (upcast.py): a checkpoint's state schema version and its document; `migrate-state`.
SELECT_STATE_VERSION = """
SELECT schema_version, checkpoint FROM checkpoints
WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ?"""
# Threads holding a checkpoint older than the schema, or one that refers to older values.
OLD_STATE = "(schema_version < ? OR json_extract(checkpoint, '$.older_values') IS NOT NULL)"
COUNT_OLD_STATE_THREADS = "SELECT COUNT(DISTINCT thread_id) FROM checkpoints WHERE " + OLD_STATE
SELECT_OLD_STATE_THREADS = (
    "SELECT DISTINCT thread_id FROM checkpoints WHERE " + OLD_STATE
    + " AND thread_id > ? ORDER BY thread_id LIMIT ?"
)
SELECT_THREAD_STATE_VERSIONS = """
SELECT checkpoint_ns, checkpoint_id, schema_version, checkpoint FROM checkpoints WHERE thread_id = ?"""
UPDATE_CHECKPOINT_STATE = """
UPDATE checkpoints SET schema_version = ?, checkpoint = ?
WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ?"""
UPDATE_CHANNEL_VALUE = """
UPDATE channel_values SET kind = ?, value = ?, blob = ?
WHERE thread_id = ? AND checkpoint_ns = ? AND channel = ? AND version = ?"""
# A value `migrate-state` upcast that no longer fits in its checkpoints' documents (`inline_values`).
UPSERT_CHANNEL_VALUE = """
INSERT INTO channel_values (thread_id, checkpoint_ns, channel, version, kind, value, blob)
VALUES (?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (thread_id, checkpoint_ns, channel, version)
DO UPDATE SET kind = excluded.kind, value = excluded.value, blob = excluded.blob"""
UPDATE_WRITE_VALUE = """
UPDATE writes SET kind = ?, value = ?, blob = ?
WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ? AND task_id = ? AND idx = ?"""
RESTAMP_THREAD_STATE = """
UPDATE checkpoints SET schema_version = ? WHERE thread_id = ? AND schema_version <> ?"""
# A new incarnation: other processes drop what they cached of the thread before their next write.
SET_INCARNATION = "UPDATE threads SET incarnation = ? WHERE thread_id = ?"
