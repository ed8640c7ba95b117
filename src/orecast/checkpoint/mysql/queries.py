"""MySQL / MariaDB statements of the checkpoint store, one per constant (`%s` placeholders).

Neither server has `RETURNING` on every statement (MySQL 8 has none), so the saver reads affected
rows instead (`saver.py`). Lists travel as one JSON parameter expanded by `JSON_TABLE`; its columns are
VARBINARY so that the joins use the binary primary keys.
"""

import re
from collections.abc import Callable, Mapping
from operator import itemgetter
from typing import Any

TABLES = ("threads", "checkpoints", "channel_values", "items", "writes", "tool_call_audit")

CREATE_MIGRATIONS = """
CREATE TABLE IF NOT EXISTS orecast_migrations (
    version    INT NOT NULL PRIMARY KEY,
    applied_at DATETIME(6) NOT NULL
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4"""
SELECT_SCHEMA_VERSION = "SELECT COALESCE(MAX(version), 0) FROM orecast_migrations"
HAS_MIGRATIONS = """
SELECT COUNT(*) FROM information_schema.tables
WHERE table_schema = DATABASE() AND table_name = 'orecast_migrations'"""
INSERT_MIGRATION = "INSERT INTO orecast_migrations (version, applied_at) VALUES (%s, %s)"
COUNT_ROWS = "SELECT COUNT(*) FROM {table}"
# Migrations of one database, one process at a time: a named lock is server-wide, so it is named
# after the database (hashed: lock names are at most 64 characters).
LOCK_MIGRATIONS = "SELECT GET_LOCK(SHA2(CONCAT('orecast-migrations:', DATABASE()), 256), %s)"
UNLOCK_MIGRATIONS = "SELECT RELEASE_LOCK(SHA2(CONCAT('orecast-migrations:', DATABASE()), 256))"
TABLE_BYTES = """
SELECT table_name, data_length + index_length FROM information_schema.tables
WHERE table_schema = DATABASE()"""
SERVER_VERSION = "SELECT VERSION()"
KILL_CONNECTION = "KILL CONNECTION %s"

THREAD_COLUMNS = """thread_id, created_at, updated_at, metadata, status, head_checkpoint_id,
    checkpoint_count, message_count, preview"""

# A no-op update on a duplicate key (never INSERT IGNORE: it would turn every error into a warning).
INSERT_THREAD = """
INSERT INTO threads (thread_id, incarnation, created_at, updated_at, metadata)
VALUES (%s, %s, %s, %s, '{}')
ON DUPLICATE KEY UPDATE thread_id = thread_id"""
SELECT_INCARNATION = "SELECT incarnation FROM threads WHERE thread_id = %s"
# The first write of a thread in this process locks its row (INSERT_THREAD) and learns its next item
# number: from then on the saver numbers new items itself (see `_store_items`).
SELECT_INCARNATION_AND_NEXT_ITEM = "SELECT incarnation, next_item FROM threads WHERE thread_id = %s"

SELECT_THREAD = f"SELECT {THREAD_COLUMNS} FROM threads WHERE thread_id = %s"
SEARCH_THREADS = (
    f"SELECT {THREAD_COLUMNS} FROM threads {{where}} "
    "ORDER BY {sort_by} {sort_order}, thread_id {sort_order} LIMIT %s OFFSET %s"
)
COUNT_THREADS = "SELECT COUNT(*) FROM threads {where}"
# A metadata edit reads the row it merges into under a lock: a run's end or a put committed meanwhile is
# not overwritten with what was read before it.
SELECT_THREAD_FOR_UPDATE = f"SELECT {THREAD_COLUMNS} FROM threads WHERE thread_id = %s FOR UPDATE"
# status NULL: left as it is (not written back as read)
UPDATE_THREAD = (
    "UPDATE threads SET metadata = %s, status = COALESCE(%s, status), updated_at = %s WHERE thread_id = %s"
)
SET_THREAD_STATUS = "UPDATE threads SET status = %s WHERE thread_id = %s"
RECOUNT_THREAD = """
UPDATE threads SET
    checkpoint_count = (SELECT COUNT(*) FROM checkpoints WHERE thread_id = %s),
    head_checkpoint_id = (
        SELECT MAX(checkpoint_id) FROM checkpoints WHERE thread_id = %s AND checkpoint_ns = ''
    )
WHERE thread_id = %s"""

# Items a write outside the put's batch stores at once (migrate-state): the new next_item comes back
# through LAST_INSERT_ID (the connection's, not the server's).
ALLOCATE_ITEMS = """
UPDATE threads SET next_item = LAST_INSERT_ID(next_item + %s)
WHERE thread_id = %s AND incarnation = %s"""
SELECT_LAST_INSERT_ID = "SELECT LAST_INSERT_ID()"
INSERT_ITEM = "INSERT INTO items (thread_id, item_no, hash, value) VALUES (%s, %s, %s, %s)"
SELECT_ITEMS_BY_HASH = """
SELECT item_no, hash FROM items
WHERE thread_id = %s
  AND hash IN (SELECT h FROM JSON_TABLE(%s, '$[*]' COLUMNS (h CHAR(32) CHARACTER SET ascii PATH '$')) AS j)"""
SELECT_ITEMS = """
SELECT item_no, value FROM items
WHERE thread_id = %s AND item_no IN (SELECT n FROM JSON_TABLE(%s, '$[*]' COLUMNS (n BIGINT PATH '$')) AS j)"""
SELECT_THREAD_ITEM_NUMBERS = "SELECT item_no FROM items WHERE thread_id = %s"
DELETE_ITEMS = """
DELETE FROM items
WHERE thread_id = %s AND item_no IN (SELECT n FROM JSON_TABLE(%s, '$[*]' COLUMNS (n BIGINT PATH '$')) AS j)"""

INSERT_CHANNEL_VALUE = """
INSERT INTO channel_values (thread_id, checkpoint_ns, channel, version, kind, value, `blob`)
VALUES (%s, %s, %s, %s, %s, %s, %s)
ON DUPLICATE KEY UPDATE thread_id = thread_id"""
_KEYS = "t VARBINARY(1024) PATH '$.t', n VARBINARY(1024) PATH '$.n'"
# Values by (thread, namespace, channel, version); `k`, a checkpoint that refers to that version, is
# where a small value is kept (in its document's "vals", migration 008): [kind, JSON text].
_VAL = "CONCAT('$.vals.', JSON_QUOTE(j.c))"
SELECT_CHANNEL_VALUES = f"""
SELECT j.t, j.n, j.c, j.v, COALESCE(cv.kind, JSON_UNQUOTE(JSON_EXTRACT(c.checkpoint, CONCAT({_VAL}, '[0]')))),
       CASE WHEN cv.kind IS NOT NULL THEN cv.value
            WHEN JSON_TYPE(JSON_EXTRACT(c.checkpoint, CONCAT({_VAL}, '[1]'))) = 'STRING'
            THEN JSON_UNQUOTE(JSON_EXTRACT(c.checkpoint, CONCAT({_VAL}, '[1]'))) END,
       cv.`blob`
FROM JSON_TABLE(%s, '$[*]' COLUMNS ({_KEYS}, c VARBINARY(768) PATH '$.c', v VARBINARY(128) PATH '$.v',
                                    k VARBINARY(256) PATH '$.k')) AS j
  LEFT JOIN channel_values AS cv
    ON cv.thread_id = j.t AND cv.checkpoint_ns = j.n AND cv.channel = j.c AND cv.version = j.v
  LEFT JOIN checkpoints AS c ON c.thread_id = j.t AND c.checkpoint_ns = j.n AND c.checkpoint_id = j.k
WHERE cv.kind IS NOT NULL OR JSON_TYPE(JSON_EXTRACT(c.checkpoint, {_VAL})) = 'ARRAY'"""
SELECT_THREAD_VALUE_KEYS = """
SELECT checkpoint_ns, channel, version, kind, value FROM channel_values WHERE thread_id = %s"""
DELETE_CHANNEL_VALUE = """
DELETE FROM channel_values
WHERE thread_id = %s AND checkpoint_ns = %s AND channel = %s AND version = %s"""

CHECKPOINT_COLUMNS = """c.thread_id, c.checkpoint_ns, c.checkpoint_id, c.parent_checkpoint_id,
    c.checkpoint, c.metadata, t.incarnation, t.next_item, c.schema_version"""
# A plain insert: a duplicate key error (the checkpoint stored again) is answered by UPDATE_CHECKPOINT.
INSERT_CHECKPOINT = """
INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id,
                         checkpoint, metadata, run_id, schema_version)
VALUES (%s, %s, %s, %s, %s, %s, %s, %s)"""
UPDATE_CHECKPOINT = """
UPDATE checkpoints SET parent_checkpoint_id = %s, checkpoint = %s, metadata = %s, run_id = %s,
    schema_version = %s
WHERE thread_id = %s AND checkpoint_ns = %s AND checkpoint_id = %s"""
# A run's read of its checkpoint in one round trip (`saver.aget_tuple`): the checkpoint's row joined
# with its pending writes (one row of them each; NULLs when it has none). Its small values are in its
# document ("vals", migration 008); the saver looks up those it names with null (a value too large for
# the document) and, for a document without "vals" (one migration 008 left as it was), all of them.
# Looking them up in the same statement (a UNION ALL over the document's JSON_KEYS joined with
# channel_values) cost the server 130 µs a read even when it matched nothing: most reads need no value
# row. `{head}` picks the checkpoint; the newest by MAX(): with ORDER BY … LIMIT 1 the server spent as
# long again choosing how to read the one row.
_CHECKPOINT_AND_WRITES = """
SELECT c.checkpoint_id, c.parent_checkpoint_id, c.checkpoint, c.metadata, t.incarnation, t.next_item,
       c.schema_version, w.task_path, w.task_id, w.idx, w.channel, w.kind, w.value, w.`blob`
FROM checkpoints AS c JOIN threads AS t ON t.thread_id = c.thread_id
  LEFT JOIN writes AS w
    ON w.thread_id = c.thread_id AND w.checkpoint_ns = c.checkpoint_ns AND w.checkpoint_id = c.checkpoint_id
WHERE {head}"""
READ_CHECKPOINT = _CHECKPOINT_AND_WRITES.format(
    head="c.thread_id = %s AND c.checkpoint_ns = %s AND c.checkpoint_id = %s"
)
READ_LATEST_CHECKPOINT = _CHECKPOINT_AND_WRITES.format(
    head="c.thread_id = %s AND c.checkpoint_ns = %s AND c.checkpoint_id = "
    "(SELECT MAX(checkpoint_id) FROM checkpoints WHERE thread_id = %s AND checkpoint_ns = %s)"
)
LIST_CHECKPOINTS = f"""
SELECT {CHECKPOINT_COLUMNS}
FROM checkpoints AS c JOIN threads AS t ON t.thread_id = c.thread_id
{{where}}
ORDER BY c.checkpoint_id DESC, c.thread_id DESC, c.checkpoint_ns DESC
LIMIT %s"""
WHERE_THREAD = "c.thread_id = %s"
WHERE_NS = "c.checkpoint_ns = %s"
WHERE_ID = "c.checkpoint_id = %s"
WHERE_BEFORE = "c.checkpoint_id < %s"
WHERE_AFTER_CURSOR = """(c.checkpoint_id < %s OR (c.checkpoint_id = %s AND (c.thread_id < %s
    OR (c.thread_id = %s AND c.checkpoint_ns < %s))))"""
DELETE_CHECKPOINT = """
DELETE FROM checkpoints WHERE thread_id = %s AND checkpoint_ns = %s AND checkpoint_id = %s"""
SELECT_CHECKPOINTS_OF_RUNS = """
SELECT thread_id, checkpoint_ns, checkpoint_id FROM checkpoints
WHERE run_id IN (SELECT r FROM JSON_TABLE(%s, '$[*]' COLUMNS (r VARBINARY(4096) PATH '$')) AS j)"""
SELECT_THREAD_CHECKPOINT_IDS = "SELECT checkpoint_ns, checkpoint_id FROM checkpoints WHERE thread_id = %s"
# (namespace, versions, the values kept in the document: "vals", migration 008) of every checkpoint
SELECT_THREAD_VERSIONS = """
SELECT checkpoint_ns, JSON_EXTRACT(checkpoint, '$.channel_versions'), JSON_EXTRACT(checkpoint, '$.vals')
FROM checkpoints WHERE thread_id = %s"""
SELECT_NAMESPACE_HEADS = """
SELECT checkpoint_ns, checkpoint_id, versions FROM (
    SELECT checkpoint_ns, checkpoint_id, JSON_EXTRACT(checkpoint, '$.channel_versions') AS versions,
           ROW_NUMBER() OVER (PARTITION BY checkpoint_ns ORDER BY checkpoint_id DESC) AS newest
    FROM checkpoints WHERE thread_id = %s
) AS ranked WHERE newest = 1"""
SELECT_PARENT_ID = """
SELECT c.parent_checkpoint_id, t.incarnation, t.next_item
FROM checkpoints AS c JOIN threads AS t ON t.thread_id = c.thread_id
WHERE c.thread_id = %s AND c.checkpoint_ns = %s AND c.checkpoint_id = %s"""
SELECT_LATEST_PARENT_ID = """
SELECT c.parent_checkpoint_id, t.incarnation, t.next_item
FROM checkpoints AS c JOIN threads AS t ON t.thread_id = c.thread_id
WHERE c.thread_id = %s AND c.checkpoint_ns = %s
ORDER BY c.checkpoint_id DESC LIMIT 1"""
# Walks up the parent chain from a checkpoint, at most %s (the fourth) rows, nearest first.
SELECT_ANCESTORS = """
WITH RECURSIVE chain (thread_id, ns, cid, parent, versions, depth) AS (
    SELECT thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id,
           JSON_EXTRACT(checkpoint, '$.channel_versions'), 0
    FROM checkpoints WHERE thread_id = %s AND checkpoint_ns = %s AND checkpoint_id = %s
    UNION ALL
    SELECT c.thread_id, c.checkpoint_ns, c.checkpoint_id, c.parent_checkpoint_id,
           JSON_EXTRACT(c.checkpoint, '$.channel_versions'), chain.depth + 1
    FROM chain JOIN checkpoints AS c
      ON c.thread_id = chain.thread_id AND c.checkpoint_ns = chain.ns AND c.checkpoint_id = chain.parent
    WHERE chain.depth + 1 < %s
)
SELECT cid, parent, versions FROM chain ORDER BY depth"""

WRITE_COLUMNS = "(thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, task_path, kind, value, `blob`)"
INSERT_WRITE = f"""
INSERT INTO writes {WRITE_COLUMNS} VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s)
ON DUPLICATE KEY UPDATE thread_id = thread_id"""
UPSERT_WRITE = f"""
INSERT INTO writes {WRITE_COLUMNS} VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s)
ON DUPLICATE KEY UPDATE
    channel = VALUES(channel), task_path = VALUES(task_path), kind = VALUES(kind),
    value = VALUES(value), `blob` = VALUES(`blob`)"""
# The channel values (part 0: channel, version) and the pending writes (part 1: checkpoint id, task id,
# channel) of a page of checkpoints, in one round trip; writes in the order they were made.
SELECT_VALUES_AND_WRITES = f"""
SELECT 0 AS part, cv.thread_id, cv.checkpoint_ns, cv.channel AS a, NULL AS task_path, cv.version AS b,
       NULL AS idx, NULL AS c, cv.kind, cv.value, cv.`blob`
FROM JSON_TABLE(%(values)s, '$[*]'
                COLUMNS ({_KEYS}, c VARBINARY(768) PATH '$.c', v VARBINARY(128) PATH '$.v')) AS j
  JOIN channel_values AS cv
    ON cv.thread_id = j.t AND cv.checkpoint_ns = j.n AND cv.channel = j.c AND cv.version = j.v
UNION ALL
SELECT 1, w.thread_id, w.checkpoint_ns, w.checkpoint_id, w.task_path, w.task_id, w.idx, w.channel, w.kind,
       w.value, w.`blob`
FROM JSON_TABLE(%(writes)s, '$[*]' COLUMNS ({_KEYS}, c VARBINARY(256) PATH '$.c')) AS j
  JOIN writes AS w ON w.thread_id = j.t AND w.checkpoint_ns = j.n AND w.checkpoint_id = j.c
ORDER BY 1, 2, 3, 4, 5, 6, 7"""
SELECT_CHANNEL_WRITES = """
SELECT checkpoint_id, task_id, channel, idx, kind, value, `blob` FROM writes
WHERE thread_id = %s AND checkpoint_ns = %s
  AND checkpoint_id IN (SELECT i FROM JSON_TABLE(%s, '$[*]' COLUMNS (i VARBINARY(256) PATH '$')) AS j)
  AND channel IN (SELECT c FROM JSON_TABLE(%s, '$[*]' COLUMNS (c VARBINARY(768) PATH '$')) AS k)
ORDER BY checkpoint_id, task_path, task_id, idx"""
SELECT_THREAD_WRITE_REFS = """
SELECT kind, value FROM writes WHERE thread_id = %s AND kind IN ('items', 'delta', 'json')"""
DELETE_CHECKPOINT_WRITES = """
DELETE FROM writes WHERE thread_id = %s AND checkpoint_ns = %s AND checkpoint_id = %s"""
# Writes for a checkpoint that was never stored (its put failed, or the process died first), older than
# the newest checkpoint of their namespace: no run will store that checkpoint any more.
DELETE_ORPHAN_WRITES = """
DELETE FROM writes
WHERE thread_id = %s
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
    "DELETE FROM tool_call_audit WHERE thread_id = %s",
    "DELETE FROM writes WHERE thread_id = %s",
    "DELETE FROM channel_values WHERE thread_id = %s",
    "DELETE FROM checkpoints WHERE thread_id = %s",
    "DELETE FROM items WHERE thread_id = %s",
    "DELETE FROM threads WHERE thread_id = %s",
)
# A copy target holding checkpoints or writes is never overwritten (a row alone, e.g. a title, is).
THREAD_HAS_DATA = """
(SELECT 1 FROM checkpoints WHERE thread_id = %s LIMIT 1)
UNION ALL
(SELECT 1 FROM writes WHERE thread_id = %s LIMIT 1)
LIMIT 1"""
# A copy reads one moment of its source (every statement of READ COMMITTED reads its own, and a run
# committing between two of them left the copy's next item number behind its items): the source's
# row locked, which every write that stores items or checkpoints updates first.
COPY_ONE_MOMENT: tuple[str, ...] = ()
SELECT_THREAD_TO_COPY = SELECT_THREAD + " LOCK IN SHARE MODE"
COPY_THREAD_ROW = """
INSERT INTO threads (thread_id, incarnation, created_at, updated_at, metadata, status,
                     head_checkpoint_id, checkpoint_count, message_count, preview, next_item)
SELECT %s, %s, created_at, %s, metadata, status, head_checkpoint_id, checkpoint_count, message_count,
       preview, next_item
FROM threads WHERE thread_id = %s"""
COPY_THREAD_DATA = (
    """INSERT INTO tool_call_audit (audit_id, thread_id, checkpoint_ns, checkpoint_id, run_id, call_id, tool, args,
                               result, status, error, started_at, ended_at, duration_ms, attempt)
       SELECT REPLACE(UUID(), '-', ''), %s, checkpoint_ns, checkpoint_id, run_id, call_id, tool, args,
              result, status, error, started_at, ended_at, duration_ms, attempt
       FROM tool_call_audit WHERE thread_id = %s""",
    """INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id,
                                checkpoint, metadata, run_id, schema_version)
       SELECT %s, checkpoint_ns, checkpoint_id, parent_checkpoint_id, checkpoint, metadata, run_id,
              schema_version
       FROM checkpoints WHERE thread_id = %s""",
    """INSERT INTO channel_values (thread_id, checkpoint_ns, channel, version, kind, value, `blob`)
       SELECT %s, checkpoint_ns, channel, version, kind, value, `blob`
       FROM channel_values WHERE thread_id = %s""",
    """INSERT INTO items (thread_id, item_no, hash, value)
       SELECT %s, item_no, hash, value FROM items WHERE thread_id = %s""",
    """INSERT INTO writes (thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, task_path,
                           kind, value, `blob`)
       SELECT %s, checkpoint_ns, checkpoint_id, task_id, idx, channel, task_path, kind, value, `blob`
       FROM writes WHERE thread_id = %s""",
)
# Uncompressed bytes of every stored value (the benchmark's "payload").
PAYLOAD_BYTES = """SELECT
    (SELECT COALESCE(SUM(LENGTH(checkpoint)), 0) + COALESCE(SUM(LENGTH(metadata)), 0) FROM checkpoints)
  + (SELECT COALESCE(SUM(LENGTH(value)), 0) + COALESCE(SUM(LENGTH(`blob`)), 0) FROM channel_values)
  + (SELECT COALESCE(SUM(LENGTH(value)), 0) FROM items)
  + (SELECT COALESCE(SUM(LENGTH(value)), 0) + COALESCE(SUM(LENGTH(`blob`)), 0) FROM writes)"""

# The calls read from the stored messages (the `tool_calls` view of migration 002), one thread, in order.
SELECT_TOOL_CALLS = """
SELECT item_no, call_id, tool, args, result, status FROM tool_calls
WHERE thread_id = %s ORDER BY item_no, `position`"""

# The tool-call audit (migration 004): one row per attempt of a call; `attempt` counts the thread's
# rows of the same call id, this one included.
AUDIT_COLUMNS = """audit_id, thread_id, checkpoint_ns, checkpoint_id, run_id, call_id, tool, args, result,
    status, error, started_at, ended_at, duration_ms, attempt"""
INSERT_TOOL_CALL = f"""
INSERT INTO tool_call_audit ({AUDIT_COLUMNS})
SELECT %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, COALESCE(MAX(attempt), 0) + 1
FROM tool_call_audit WHERE thread_id = %s AND call_id = %s"""
END_TOOL_CALL = """
UPDATE tool_call_audit SET status = %s, result = %s, error = %s, ended_at = %s, duration_ms = %s,
    args = COALESCE(%s, args)
WHERE audit_id = %s"""
# A row as an archive carries it (`threads import`): attempt and times as they were.
INSERT_TOOL_CALL_AS_IS = f"""
INSERT INTO tool_call_audit ({AUDIT_COLUMNS})
VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)"""
DELETE_TOOL_CALL = "DELETE FROM tool_call_audit WHERE audit_id = %s"
TOOL_CALL_HAS_STATUS = "SELECT 1 FROM tool_call_audit WHERE thread_id = %s AND call_id = %s AND status = %s LIMIT 1"
# `{where}`: AND-ed conditions of AUDIT_WHERE.
SELECT_AUDIT = f"""
SELECT {AUDIT_COLUMNS} FROM tool_call_audit {{where}}
ORDER BY started_at DESC, audit_id DESC LIMIT %s"""
AUDIT_WHERE = {
    "thread_id": "thread_id = %s",
    "tool": "tool = %s",
    "status": "status = %s",
    "since": "started_at >= %s",
}
# Per tool: calls, errors, still running; then each one's ended durations, sorted
# (percentiles are taken in Python, the same way on every dialect).
AUDIT_TOOL_COUNTS = """
SELECT tool, COUNT(*), SUM(CASE WHEN status = 'error' THEN 1 ELSE 0 END),
       SUM(CASE WHEN status = 'running' THEN 1 ELSE 0 END)
FROM tool_call_audit WHERE started_at >= %s
GROUP BY tool ORDER BY COUNT(*) DESC, tool LIMIT %s"""
AUDIT_TOOL_DURATIONS = """
SELECT tool, duration_ms FROM tool_call_audit
WHERE started_at >= %s AND duration_ms IS NOT NULL AND status NOT IN ('rejected', 'running')
  AND tool IN (SELECT t FROM JSON_TABLE(%s, '$[*]' COLUMNS (t VARBINARY(1024) PATH '$')) AS j)
ORDER BY tool, duration_ms"""
SELECT_RECENT_FAILURES = """
SELECT thread_id, checkpoint_ns, checkpoint_id, run_id, tool, status, error, started_at FROM tool_call_audit
WHERE status IN ('error', 'cancelled')
ORDER BY started_at DESC, audit_id DESC LIMIT %s"""
# State upcasting (upcast.py): a checkpoint's state schema version and its document; `migrate-state`.
SELECT_STATE_VERSION = """
SELECT schema_version, checkpoint FROM checkpoints
WHERE thread_id = %s AND checkpoint_ns = %s AND checkpoint_id = %s"""
# Threads holding a checkpoint older than the schema, or one that refers to older values.
OLD_STATE = "(schema_version < %s OR JSON_EXTRACT(checkpoint, '$.older_values') IS NOT NULL)"
COUNT_OLD_STATE_THREADS = "SELECT COUNT(DISTINCT thread_id) FROM checkpoints WHERE " + OLD_STATE
SELECT_OLD_STATE_THREADS = (
    "SELECT DISTINCT thread_id FROM checkpoints WHERE " + OLD_STATE
    + " AND thread_id > %s ORDER BY thread_id LIMIT %s"
)
SELECT_THREAD_STATE_VERSIONS = """
SELECT checkpoint_ns, checkpoint_id, schema_version, checkpoint FROM checkpoints WHERE thread_id = %s"""
UPDATE_CHECKPOINT_STATE = """
UPDATE checkpoints SET schema_version = %s, checkpoint = %s
WHERE thread_id = %s AND checkpoint_ns = %s AND checkpoint_id = %s"""
UPDATE_CHANNEL_VALUE = """
UPDATE channel_values SET kind = %s, value = %s, `blob` = %s
WHERE thread_id = %s AND checkpoint_ns = %s AND channel = %s AND version = %s"""
# A value migrate-state upcast too large (or binary) for its checkpoints' documents: a row of its own.
UPSERT_CHANNEL_VALUE = """
INSERT INTO channel_values (thread_id, checkpoint_ns, channel, version, kind, value, `blob`)
VALUES (%s, %s, %s, %s, %s, %s, %s)
ON DUPLICATE KEY UPDATE kind = VALUES(kind), value = VALUES(value), `blob` = VALUES(`blob`)"""
UPDATE_WRITE_VALUE = """
UPDATE writes SET kind = %s, value = %s, `blob` = %s
WHERE thread_id = %s AND checkpoint_ns = %s AND checkpoint_id = %s AND task_id = %s AND idx = %s"""
RESTAMP_THREAD_STATE = """
UPDATE checkpoints SET schema_version = %s WHERE thread_id = %s AND schema_version <> %s"""
# A new incarnation: other processes drop what they cached of the thread before their next write.
SET_INCARNATION = "UPDATE threads SET incarnation = %s WHERE thread_id = %s"

# -- a put or put_writes in one round trip ---------------------------------------------------------
# The saver sends a write's statements below with other threads' writes in one transaction and one
# round trip (`groups.py`, `saver._Db.group`: a compound statement on MariaDB, a multi-statement packet
# inside BEGIN … COMMIT on MySQL), or, when the write runs in a transaction of its own (a thread's
# first in the process), as one packet in it. The thread's row is updated first: that locks it until
# COMMIT and tells, by the rows it matched, whether the thread is still the incarnation the write was
# encoded against and, when the saver numbered new items, whether no other process numbered items
# since (`next_item <= first_item`). ROW_COUNT() keeps that answer for the statements after it, which
# store nothing when it is 0: nothing of that write is committed, and the saver starts it again.
REMEMBER_MATCHED = "SET @orecast_ok = ROW_COUNT()"
# A group of writes in one compound statement (MariaDB) numbers its writes in @orecast_write: after an
# error, the write whose statement failed.
SELECT_FAILED_WRITE = "SELECT @orecast_write"
_MATCHED = "@orecast_ok > 0"
# A write sent in a group right after a write of its own thread whose first statement checked the row
# (`groups.py`, `after` = 1) may refer to the items that one numbered: it matches only if that one did.
_AFTER_ITS_THREADS_LAST = "(%(after)s = 0 OR @orecast_ok > 0)"
# A put's record in its thread's row, run before the checkpoint is stored: whether it is new is read
# from the checkpoints table (a checkpoint stored again applies nothing new). Affected rows tell whether
# the thread is still the incarnation the put was encoded against (connections report rows *matched*,
# CLIENT.FOUND_ROWS). MySQL assigns left to right, and each expression below reads only its own column,
# so the order of assignments does not matter.
_NEW_CHECKPOINT = """(NOT EXISTS (
        SELECT 1 FROM checkpoints
        WHERE thread_id = %(thread_id)s AND checkpoint_ns = %(ns)s AND checkpoint_id = %(checkpoint_id)s
    ))"""
_RECORD_PUT = """
UPDATE threads SET
    updated_at = %(now)s,
    metadata = JSON_MERGE_PATCH(%(seed)s, metadata),
    checkpoint_count = checkpoint_count + {counted},
    -- The head is the newest root checkpoint (what a read without an id loads): a put another process's
    -- newer one overtook (two runs on one thread) leaves it, its count and its preview alone. (Whether
    -- the put is the head reads the same before and after the head's own assignment.)
    head_checkpoint_id = CASE
        WHEN %(head)s >= COALESCE(head_checkpoint_id, '') THEN %(head)s ELSE head_checkpoint_id
    END,
    message_count = CASE
        WHEN %(head)s IS NULL OR %(head)s < COALESCE(head_checkpoint_id, '') THEN message_count
        WHEN %(clear)s = 1 THEN %(message_count)s
        WHEN {new} THEN GREATEST(message_count + %(message_count)s, 0)
        ELSE message_count
    END,
    preview = CASE
        WHEN %(head)s >= COALESCE(head_checkpoint_id, '') THEN COALESCE(%(preview)s, preview) ELSE preview
    END,
    next_item = GREATEST(next_item, %(next_item)s),
    {status}
WHERE thread_id = %(thread_id)s AND incarnation = %(incarnation)s
  AND (%(next_item)s = 0 OR next_item <= %(first_item)s) AND {after}"""
_NO_INTERRUPT_AFTER = """NOT EXISTS (
            SELECT 1 FROM writes AS w
            WHERE w.thread_id = threads.thread_id AND w.checkpoint_ns = ''
              AND w.checkpoint_id >= %(checkpoint_id)s AND w.channel = '__interrupt__'
        )"""
RECORD_PUT_IN_THREAD = _RECORD_PUT.format(
    after=_AFTER_ITS_THREADS_LAST,
    counted=_NEW_CHECKPOINT,
    new=_NEW_CHECKPOINT,
    status=f"""status = CASE
        WHEN %(root)s = 1 AND status = 'interrupted' AND {_NO_INTERRUPT_AFTER} THEN 'idle'
        ELSE status
    END"""
)
# In a group's compound statement (MariaDB) the interrupt check runs only for a thread that is
# interrupted: its subquery cost the server ≈ 90 µs a put even when never evaluated (the optimiser
# prepares it anyway), a fifth of the whole statement. The UPDATE keeps the row's status in
# @orecast_status (read by the next statement only, see `END_INTERRUPTION`).
# Whether the checkpoint is new is looked up once, kept in @orecast_new for the message count (assigned
# left to right, as the row is updated): the second lookup cost the server ~0.1 M instructions a put.
RECORD_PUT_IN_GROUP = _RECORD_PUT.format(
    after=_AFTER_ITS_THREADS_LAST,
    counted=f"(@orecast_new := {_NEW_CHECKPOINT})",
    new="@orecast_new",
    status="status = (@orecast_status := status)",
)
END_INTERRUPTION = f"""
UPDATE threads SET status = 'idle' WHERE thread_id = %(thread_id)s AND {_NO_INTERRUPT_AFTER}"""
# END_INTERRUPTION runs as the EXECUTE of a prepared statement inside this IF: the server parses the
# compound statement anew each time, and the UPDATE's text in it cost ~4 % of the server's work a turn.
IF_INTERRUPTED = "IF @orecast_ok > 0 AND @orecast_status = 'interrupted' THEN\n    {statement};\nEND IF"
RECORD_WRITES_IN_THREAD = f"""
UPDATE threads SET
    next_item = GREATEST(next_item, %(next_item)s),
    status = CASE WHEN %(interrupted)s THEN 'interrupted' ELSE status END
WHERE thread_id = %(thread_id)s AND incarnation = %(incarnation)s
  AND (%(next_item)s = 0 OR next_item <= %(first_item)s) AND {_AFTER_ITS_THREADS_LAST}"""
# Rows travel as one JSON array each (one json.dumps in C), expanded by JSON_TABLE; blobs in base64.
STORE_ITEMS = f"""
INSERT INTO items (thread_id, item_no, hash, value)
SELECT %(thread_id)s, %(first_item)s + x.n - 1, x.h, x.v
FROM JSON_TABLE(%(items)s, '$[*]' COLUMNS (
    n FOR ORDINALITY, h CHAR(32) CHARACTER SET ascii PATH '$[0]', v LONGTEXT CHARACTER SET utf8mb4 PATH '$[1]'
)) AS x
WHERE {_MATCHED}"""
# One item (most writes number one, a message): its hash and text as parameters of their own. Through
# JSON_TABLE its text was escaped twice (a JSON string in a JSON array in an SQL literal) and parsed
# back; this costs the server ~0.2 M instructions less an item (MariaDB, a tenth of a put_writes).
STORE_ITEM = f"""
INSERT INTO items (thread_id, item_no, hash, value)
SELECT %(thread_id)s, %(first_item)s, %(item_hash)s, %(item_value)s
FROM DUAL WHERE {_MATCHED}"""
STORE_CHANNEL_VALUES = f"""
INSERT INTO channel_values (thread_id, checkpoint_ns, channel, version, kind, value, `blob`)
SELECT %(thread_id)s, %(ns)s, x.c, x.v, x.k, x.j, FROM_BASE64(x.b)
FROM JSON_TABLE(%(rows)s, '$[*]' COLUMNS (
    c VARBINARY(768) PATH '$[0]', v VARBINARY(128) PATH '$[1]', k VARCHAR(8) CHARACTER SET ascii PATH '$[2]',
    j LONGTEXT CHARACTER SET utf8mb4 PATH '$[3]', b LONGTEXT CHARACTER SET ascii PATH '$[4]'
)) AS x
WHERE {_MATCHED}
ON DUPLICATE KEY UPDATE channel_values.thread_id = channel_values.thread_id"""
STORE_CHECKPOINT = f"""
INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id,
                         checkpoint, metadata, run_id, schema_version)
SELECT %(thread_id)s, %(ns)s, %(checkpoint_id)s, %(parent_id)s, %(checkpoint)s, %(metadata)s, %(run_id)s,
       %(schema_version)s
FROM DUAL WHERE {_MATCHED}
ON DUPLICATE KEY UPDATE
    parent_checkpoint_id = VALUES(parent_checkpoint_id), checkpoint = VALUES(checkpoint),
    metadata = VALUES(metadata), run_id = VALUES(run_id), schema_version = VALUES(schema_version)"""
# Writes that number no items, refer to none and note no version check nothing: nothing they store
# depends on the incarnation. `checked`: the batch begins with RECORD_WRITES_IN_THREAD.
_STORE_WRITES = """
INSERT INTO writes (thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, task_path, kind,
                    value, `blob`)
SELECT %(thread_id)s, %(ns)s, %(checkpoint_id)s, %(task_id)s, x.i, x.c, %(task_path)s, x.k, x.j,
       FROM_BASE64(x.b)
FROM JSON_TABLE(%(rows)s, '$[*]' COLUMNS (
    i INT PATH '$[0]', c VARBINARY(768) PATH '$[1]', k VARCHAR(8) CHARACTER SET ascii PATH '$[2]',
    j LONGTEXT CHARACTER SET utf8mb4 PATH '$[3]', b LONGTEXT CHARACTER SET ascii PATH '$[4]'
)) AS x
WHERE %(checked)s = 0 OR @orecast_ok > 0
ON DUPLICATE KEY UPDATE {on_duplicate}"""
# Regular writes are kept as first stored; special ones (errors, interrupts…) are replaced.
STORE_WRITES = _STORE_WRITES.format(on_duplicate="writes.thread_id = writes.thread_id")
STORE_SPECIAL_WRITES = _STORE_WRITES.format(
    on_duplicate="""channel = VALUES(channel), task_path = VALUES(task_path), kind = VALUES(kind),
    value = VALUES(value), `blob` = VALUES(`blob`)"""
)
# A newer state schema's writes on an older checkpoint: their version in the checkpoint's document
# (upcast.py, WRITE_VERSIONS), stored with them, behind the thread's row (migrate-state takes it first).
NOTE_WRITE_VERSION = f"""
UPDATE checkpoints SET schema_version = %(checkpoint_version)s, checkpoint = %(noted_checkpoint)s
WHERE thread_id = %(thread_id)s AND checkpoint_ns = %(ns)s AND checkpoint_id = %(checkpoint_id)s
  AND {_MATCHED}"""

# -- the statements above, prepared once per connection -------------------------------------------
# A batch sends each of them as `EXECUTE name USING <its parameters>` after the connection prepared it
# (`saver._Db.batch`): the server parses a short statement instead of the long one every time. Per
# statement: its name, its text with `?` for the parameters, `EXECUTE name USING`, and what takes its
# parameters, in the order of the `?`, out of a dict of them (a tuple, even of one).
_NAMED = re.compile(r"%\((\w+)\)s")


def _in_order(names: list[str]) -> Callable[[Mapping[str, Any]], tuple[Any, ...]]:
    # (one itemgetter call per statement: half the time of a comprehension over its ~20 names)
    take = itemgetter(*names)
    return take if len(names) > 1 else lambda params: (take(params),)


PREPARED = {
    sql: (name, _NAMED.sub("?", sql), f"EXECUTE {name} USING", _in_order(_NAMED.findall(sql)))
    for name, sql in (
        ("orecast_record_put", RECORD_PUT_IN_THREAD),
        ("orecast_record_put_in_group", RECORD_PUT_IN_GROUP),
        ("orecast_record_writes", RECORD_WRITES_IN_THREAD),
        ("orecast_store_items", STORE_ITEMS),
        ("orecast_store_item", STORE_ITEM),
        ("orecast_store_values", STORE_CHANNEL_VALUES),
        ("orecast_store_checkpoint", STORE_CHECKPOINT),
        ("orecast_store_writes", STORE_WRITES),
        ("orecast_store_special_writes", STORE_SPECIAL_WRITES),
        ("orecast_end_interruption", END_INTERRUPTION),
    )
}
# A run's read, prepared on MariaDB as well (`saver._Db.fetch_prepared`, the driver's binary protocol):
# the server parses neither the query's text nor its parameters.
PREPARED_READS = {
    sql: (name, sql.replace("%s", "?"))
    for name, sql in (
        ("orecast_read_checkpoint", READ_CHECKPOINT),
        ("orecast_read_latest_checkpoint", READ_LATEST_CHECKPOINT),
    )
}
