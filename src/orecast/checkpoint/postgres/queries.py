"""PostgreSQL statements of the checkpoint store, one per constant (`%s` placeholders)."""

TABLES = ("threads", "checkpoints", "channel_values", "items", "writes", "tool_call_audit")
# The tables behind each of TABLES: `items` is a view over the tail and the pages (migration 003),
# `writes` a view over the writes packed per task (migration 007).
STORAGE_TABLES = {"items": ("item_tail", "item_pages"), "writes": ("task_writes",)}

CREATE_MIGRATIONS = """
CREATE TABLE IF NOT EXISTS orecast_migrations (
    version    INTEGER PRIMARY KEY,
    applied_at TIMESTAMPTZ NOT NULL
)"""
SELECT_SCHEMA_VERSION = "SELECT COALESCE(MAX(version), 0) FROM orecast_migrations"
INSERT_MIGRATION = "INSERT INTO orecast_migrations (version, applied_at) VALUES (%s, %s)"
COUNT_ROWS = "SELECT COUNT(*) FROM {table}"

THREAD_COLUMNS = """thread_id, created_at, updated_at, metadata, status, head_checkpoint_id,
    checkpoint_count, message_count, preview"""

INSERT_THREAD = """
INSERT INTO threads (thread_id, incarnation, created_at, updated_at)
VALUES (%s, %s, %s, %s)
ON CONFLICT (thread_id) DO NOTHING"""
SELECT_INCARNATION = "SELECT incarnation FROM threads WHERE thread_id = %s"

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
    "UPDATE threads SET metadata = %s::jsonb, status = COALESCE(%s, status), updated_at = %s WHERE thread_id = %s"
)
RECOUNT_THREAD = """
UPDATE threads SET
    checkpoint_count = (SELECT COUNT(*) FROM checkpoints WHERE thread_id = %s),
    head_checkpoint_id = (
        SELECT MAX(checkpoint_id) FROM checkpoints WHERE thread_id = %s AND checkpoint_ns = ''
    )
WHERE thread_id = %s"""

# Items live in the tail (one row each) or in pages (a JSONB array each); see migration 003.
# Only the pages that hold a wanted item are expanded.
SELECT_ITEMS_BY_HASH = """
WITH args AS (SELECT %s::text AS t, ARRAY(SELECT jsonb_array_elements_text(%s::jsonb)) AS hashes)
SELECT i.item_no, i.hash FROM item_tail AS i, args
WHERE i.thread_id = args.t AND i.hash = ANY(args.hashes)
UNION ALL
SELECT p.item_nos[h.ord], h.hash
FROM item_pages AS p CROSS JOIN args CROSS JOIN LATERAL unnest(p.hashes) WITH ORDINALITY AS h (hash, ord)
WHERE p.thread_id = args.t AND p.hashes && args.hashes AND h.hash = ANY(args.hashes)"""
SELECT_ITEMS = """
WITH args AS (SELECT %s::text AS t, ARRAY(SELECT jsonb_array_elements_text(%s::jsonb)::bigint) AS nos)
SELECT i.item_no, i.value FROM item_tail AS i, args
WHERE i.thread_id = args.t AND i.item_no = ANY(args.nos)
UNION ALL
SELECT p.item_nos[e.ord], e.value
FROM item_pages AS p CROSS JOIN args
CROSS JOIN LATERAL jsonb_array_elements(p.items) WITH ORDINALITY AS e (value, ord)
WHERE p.thread_id = args.t AND p.item_nos && args.nos AND p.item_nos[e.ord] = ANY(args.nos)"""
SELECT_THREAD_ITEM_NUMBERS = "SELECT item_no FROM items WHERE thread_id = %s"
# Garbage collection (rare): dead items leave the tail, and the pages holding them are rewritten.
DELETE_ITEMS = """
WITH args AS (SELECT %s::text AS t, ARRAY(SELECT jsonb_array_elements_text(%s::jsonb)::bigint) AS nos),
from_tail AS (
    DELETE FROM item_tail AS i USING args WHERE i.thread_id = args.t AND i.item_no = ANY(args.nos)
),
hit AS (
    SELECT p.thread_id, p.first_no FROM item_pages AS p, args
    WHERE p.thread_id = args.t AND p.item_nos && args.nos
),
kept AS (
    SELECT p.thread_id, p.first_no, array_agg(p.item_nos[e.ord] ORDER BY e.ord) AS item_nos,
           array_agg(p.hashes[e.ord] ORDER BY e.ord) AS hashes, jsonb_agg(e.value ORDER BY e.ord) AS items
    FROM item_pages AS p JOIN hit USING (thread_id, first_no) CROSS JOIN args
    CROSS JOIN LATERAL jsonb_array_elements(p.items) WITH ORDINALITY AS e (value, ord)
    WHERE NOT p.item_nos[e.ord] = ANY(args.nos)
    GROUP BY p.thread_id, p.first_no
),
emptied AS (
    DELETE FROM item_pages AS p USING hit
    WHERE p.thread_id = hit.thread_id AND p.first_no = hit.first_no
      AND NOT EXISTS (SELECT 1 FROM kept WHERE kept.thread_id = hit.thread_id AND kept.first_no = hit.first_no)
)
UPDATE item_pages AS p SET item_nos = kept.item_nos, hashes = kept.hashes, items = kept.items
FROM kept WHERE p.thread_id = kept.thread_id AND p.first_no = kept.first_no"""

# Values by (thread, namespace, channel, version); `k`, a checkpoint that refers to that version, is
# where a small value is kept (in its document's "vals", migration 007).
SELECT_CHANNEL_VALUES = """
SELECT j.t, j.n, j.c, j.v, x.kind, x.value, x.blob
FROM jsonb_to_recordset(%s::jsonb) AS j (t text, n text, c text, v text, k text)
CROSS JOIN LATERAL (
    SELECT cv.kind, cv.value, cv.blob FROM channel_values AS cv
    WHERE cv.thread_id = j.t AND cv.checkpoint_ns = j.n AND cv.channel = j.c AND cv.version = j.v
    UNION ALL
    SELECT c.checkpoint->'vals'->j.c->>0, (c.checkpoint->'vals'->j.c->>1)::jsonb, NULL::bytea
    FROM checkpoints AS c
    WHERE c.thread_id = j.t AND c.checkpoint_ns = j.n AND c.checkpoint_id = j.k
      AND json_typeof(c.checkpoint->'vals'->j.c) = 'array'
    LIMIT 1
) AS x"""
SELECT_THREAD_VALUE_KEYS = """
SELECT checkpoint_ns, channel, version, kind, value FROM channel_values WHERE thread_id = %s"""
DELETE_CHANNEL_VALUE = """
DELETE FROM channel_values
WHERE thread_id = %s AND checkpoint_ns = %s AND channel = %s AND version = %s"""

CHECKPOINT_COLUMNS = """c.thread_id, c.checkpoint_ns, c.checkpoint_id, c.parent_checkpoint_id,
    c.checkpoint, c.metadata, t.incarnation, t.next_item, c.schema_version"""
SELECT_CHECKPOINT = f"""
SELECT {CHECKPOINT_COLUMNS}
FROM checkpoints AS c JOIN threads AS t ON t.thread_id = c.thread_id
WHERE c.thread_id = %s AND c.checkpoint_ns = %s AND c.checkpoint_id = %s"""
SELECT_LATEST_CHECKPOINT = f"""
SELECT {CHECKPOINT_COLUMNS}
FROM checkpoints AS c JOIN threads AS t ON t.thread_id = c.thread_id
WHERE c.thread_id = %s AND c.checkpoint_ns = %s
ORDER BY c.checkpoint_id DESC LIMIT 1"""
LIST_CHECKPOINTS = f"""
SELECT {CHECKPOINT_COLUMNS}
FROM checkpoints AS c JOIN threads AS t ON t.thread_id = c.thread_id
{{where}}
ORDER BY c.checkpoint_id DESC, c.thread_id DESC, c.checkpoint_ns DESC
LIMIT %s"""
# A checkpoint and its pending writes in one round trip (its small values are in its row, migration 007).
_AND_WRITES = """
SELECT head.*, w.task_id, w.task_path, w.writes
FROM head LEFT JOIN task_writes AS w
  ON w.thread_id = head.thread_id AND w.checkpoint_ns = head.checkpoint_ns AND w.checkpoint_id = head.checkpoint_id
ORDER BY w.task_path, w.task_id"""
SELECT_CHECKPOINT_AND_WRITES = f"WITH head AS ({SELECT_CHECKPOINT}){_AND_WRITES}"
SELECT_LATEST_CHECKPOINT_AND_WRITES = f"WITH head AS ({SELECT_LATEST_CHECKPOINT}){_AND_WRITES}"
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
WHERE run_id IN (SELECT jsonb_array_elements_text(%s::jsonb))"""
SELECT_THREAD_CHECKPOINT_IDS = "SELECT checkpoint_ns, checkpoint_id FROM checkpoints WHERE thread_id = %s"
SELECT_THREAD_VERSIONS = """
SELECT checkpoint_ns, checkpoint->'channel_versions', checkpoint->'vals' FROM checkpoints
WHERE thread_id = %s"""
SELECT_NAMESPACE_HEADS = """
SELECT DISTINCT ON (checkpoint_ns) checkpoint_ns, checkpoint_id, checkpoint->'channel_versions'
FROM checkpoints WHERE thread_id = %s ORDER BY checkpoint_ns, checkpoint_id DESC"""
SELECT_PARENT_ID = """
SELECT c.parent_checkpoint_id, t.incarnation, t.next_item
FROM checkpoints AS c JOIN threads AS t ON t.thread_id = c.thread_id
WHERE c.thread_id = %s AND c.checkpoint_ns = %s AND c.checkpoint_id = %s"""
SELECT_LATEST_PARENT_ID = """
SELECT c.parent_checkpoint_id, t.incarnation, t.next_item
FROM checkpoints AS c JOIN threads AS t ON t.thread_id = c.thread_id
WHERE c.thread_id = %s AND c.checkpoint_ns = %s
ORDER BY c.checkpoint_id DESC LIMIT 1"""
# Walks up the parent chain from a checkpoint, at most %s4 rows, nearest first.
SELECT_ANCESTORS = """
WITH RECURSIVE chain (thread_id, ns, cid, parent, versions, depth) AS (
    SELECT thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id,
           checkpoint->'channel_versions', 0
    FROM checkpoints WHERE thread_id = %s AND checkpoint_ns = %s AND checkpoint_id = %s
    UNION ALL
    SELECT c.thread_id, c.checkpoint_ns, c.checkpoint_id, c.parent_checkpoint_id,
           c.checkpoint->'channel_versions', chain.depth + 1
    FROM chain JOIN checkpoints AS c
      ON c.thread_id = chain.thread_id AND c.checkpoint_ns = chain.ns AND c.checkpoint_id = chain.parent
    WHERE chain.depth + 1 < %s
)
SELECT cid, parent, versions FROM chain ORDER BY depth"""

# The channel values (part 0: channel, version) and the pending writes (part 1: checkpoint id, task id,
# channel) of a page of checkpoints, in one round trip; writes in the order they were made.
SELECT_VALUES_AND_WRITES = """
SELECT 0 AS part, cv.thread_id, cv.checkpoint_ns, cv.channel AS a, NULL::text AS task_path, cv.version AS b,
       NULL::integer AS idx, NULL::text AS c, cv.kind, cv.value, cv.blob
FROM jsonb_to_recordset(%(values)s::jsonb) AS j (t text, n text, c text, v text)
  JOIN channel_values AS cv
    ON cv.thread_id = j.t AND cv.checkpoint_ns = j.n AND cv.channel = j.c AND cv.version = j.v
UNION ALL
SELECT 1, w.thread_id, w.checkpoint_ns, w.checkpoint_id, w.task_path, w.task_id, w.idx, w.channel, w.kind,
       w.value, w.blob
FROM jsonb_to_recordset(%(writes)s::jsonb) AS j (t text, n text, c text)
  JOIN writes AS w ON w.thread_id = j.t AND w.checkpoint_ns = j.n AND w.checkpoint_id = j.c
ORDER BY 1, 2, 3, 4, 5, 6, 7"""
SELECT_CHANNEL_WRITES = """
SELECT checkpoint_id, task_id, channel, idx, kind, value, blob FROM writes
WHERE thread_id = %s AND checkpoint_ns = %s
  AND checkpoint_id IN (SELECT jsonb_array_elements_text(%s::jsonb))
  AND channel IN (SELECT jsonb_array_elements_text(%s::jsonb))
ORDER BY checkpoint_id, task_path, task_id, idx"""
SELECT_THREAD_WRITE_REFS = """
SELECT kind, value FROM writes WHERE thread_id = %s AND kind IN ('items', 'delta', 'json')"""
DELETE_CHECKPOINT_WRITES = """
DELETE FROM task_writes WHERE thread_id = %s AND checkpoint_ns = %s AND checkpoint_id = %s"""
# Writes for a checkpoint that was never stored (its put failed, or the process died first), older than
# the newest checkpoint of their namespace: no run will store that checkpoint any more.
DELETE_ORPHAN_WRITES = """
DELETE FROM task_writes AS w
WHERE thread_id = %s
  AND NOT EXISTS (
    SELECT 1 FROM checkpoints AS c
    WHERE c.thread_id = w.thread_id AND c.checkpoint_ns = w.checkpoint_ns
      AND c.checkpoint_id = w.checkpoint_id
  )
  AND checkpoint_id < (
    SELECT MAX(c.checkpoint_id) FROM checkpoints AS c
    WHERE c.thread_id = w.thread_id AND c.checkpoint_ns = w.checkpoint_ns
  )"""

DELETE_THREAD = (
    "DELETE FROM tool_call_audit WHERE thread_id = %s",
    "DELETE FROM task_writes WHERE thread_id = %s",
    "DELETE FROM channel_values WHERE thread_id = %s",
    "DELETE FROM checkpoints WHERE thread_id = %s",
    "DELETE FROM item_tail WHERE thread_id = %s",
    "DELETE FROM item_pages WHERE thread_id = %s",
    "DELETE FROM threads WHERE thread_id = %s",
)
# After a thread's deletion has committed, its key range is read once through each primary key: the
# scan finds the rows dead to every transaction and marks their index entries dead, so that the next
# insert into their full leaf page drops them instead of splitting it. Left until a VACUUM, they keep
# their page full: another thread's next keys that sort just before them (its checkpoints ascend) then
# go to a page that is not the rightmost, and PostgreSQL splits that in halves (its 90/10 split for
# ascending keys applies to the rightmost page, or to keys of 16 B at most), leaving the thread's index
# pages half empty. After the benchmark's deleted warm-up thread, which sorts after the measured one:
# checkpoints_pkey 136 kB instead of 88 kB, task_writes_pkey 176 kB instead of 104 kB at 200 turns
# (docs/benchmarks.md). Index scans are forced (in the transaction only): on a table of a few pages the
# planner reads the heap instead, which marks no index entry.
INDEX_SCANS_ONLY = "SELECT set_config('enable_seqscan', 'off', true), set_config('enable_bitmapscan', 'off', true)"
READ_DELETED_THREAD = """SELECT
    (SELECT count(*) FROM checkpoints WHERE thread_id = %(thread_id)s),
    (SELECT count(*) FROM task_writes WHERE thread_id = %(thread_id)s),
    (SELECT count(*) FROM channel_values WHERE thread_id = %(thread_id)s)"""
# A scan takes a deleted row for dead only once every transaction older than the delete has ended, in
# any database of the server (the oldest one still running bounds it); until then it marks no index
# entry. With other sessions writing (three connections, back-to-back 20 ms transactions inserting a
# row, in another database), the read right after a deletion marked nothing in every run; waiting
# first until the oldest transaction running is younger than the transaction id that was next after
# the delete (13-23 ms there; two statements when the server is quiet), it marked every entry.
NEXT_TRANSACTION = "SELECT pg_snapshot_xmax(pg_current_snapshot())::text"
ENDED_SINCE = "SELECT pg_snapshot_xmin(pg_current_snapshot()) >= %s::xid8"
# A copy target holding checkpoints or writes is never overwritten (a row alone, e.g. a title, is).
THREAD_HAS_DATA = """
SELECT 1 FROM checkpoints WHERE thread_id = %s
UNION ALL
SELECT 1 FROM task_writes WHERE thread_id = %s
LIMIT 1"""
# A copy reads one moment of its source (every statement of READ COMMITTED reads its own, and a run
# committing between two of them left the copy's next item number behind its items): a snapshot.
COPY_ONE_MOMENT: tuple[str, ...] = ("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ",)
SELECT_THREAD_TO_COPY = SELECT_THREAD
COPY_THREAD_ROW = """
INSERT INTO threads (thread_id, incarnation, created_at, updated_at, metadata, status,
                     head_checkpoint_id, checkpoint_count, message_count, preview, next_item)
SELECT %s, %s, created_at, %s, metadata, status, head_checkpoint_id, checkpoint_count, message_count,
       preview, next_item
FROM threads WHERE thread_id = %s"""
COPY_THREAD_DATA = (
    """INSERT INTO tool_call_audit (audit_id, thread_id, checkpoint_ns, checkpoint_id, run_id, call_id, tool, args,
                               result, status, error, started_at, ended_at, duration_ms, attempt)
       SELECT md5(random()::text || clock_timestamp()::text || audit_id), %s, checkpoint_ns, checkpoint_id, run_id, call_id, tool, args,
              result, status, error, started_at, ended_at, duration_ms, attempt
       FROM tool_call_audit WHERE thread_id = %s""",
    """INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id,
                                checkpoint, metadata, run_id, schema_version)
       SELECT %s, checkpoint_ns, checkpoint_id, parent_checkpoint_id, checkpoint, metadata, run_id,
              schema_version
       FROM checkpoints WHERE thread_id = %s""",
    """INSERT INTO channel_values (thread_id, checkpoint_ns, channel, version, kind, value, blob)
       SELECT %s, checkpoint_ns, channel, version, kind, value, blob
       FROM channel_values WHERE thread_id = %s""",
    """INSERT INTO item_tail (thread_id, item_no, hash, value)
       SELECT %s, item_no, hash, value FROM item_tail WHERE thread_id = %s""",
    """INSERT INTO item_pages (thread_id, first_no, last_no, item_nos, hashes, items)
       SELECT %s, first_no, last_no, item_nos, hashes, items FROM item_pages WHERE thread_id = %s""",
    """INSERT INTO task_writes (thread_id, checkpoint_ns, checkpoint_id, task_id, task_path, writes)
       SELECT %s, checkpoint_ns, checkpoint_id, task_id, task_path, writes
       FROM task_writes WHERE thread_id = %s""",
)
# Uncompressed bytes of every stored value (the benchmark's "payload").
PAYLOAD_BYTES = """SELECT
    (SELECT COALESCE(SUM(octet_length(checkpoint::text)), 0) + COALESCE(SUM(octet_length(metadata::text)), 0) FROM checkpoints)
  + (SELECT COALESCE(SUM(octet_length(value::text)), 0) + COALESCE(SUM(octet_length(blob)), 0) FROM channel_values)
  + (SELECT COALESCE(SUM(octet_length(value::text)), 0) FROM item_tail)
  + (SELECT COALESCE(SUM(octet_length(items::text)), 0) FROM item_pages)
  + (SELECT COALESCE(SUM(octet_length(value::text)), 0) + COALESCE(SUM(octet_length(blob)), 0) FROM writes)"""

# Rows travel as one JSON text (`rows`, `items`): psycopg dumps array parameters element by element in
# Python, which cost ~10 % of a turn's client CPU; one json.dumps is C.
# Allocate numbers and insert new items in one round trip; hashes already stored are not returned.
STORE_ITEMS = """
WITH allocated AS (
    UPDATE threads SET next_item = next_item + %(n)s
    WHERE thread_id = %(thread_id)s AND incarnation = %(incarnation)s
    RETURNING next_item - %(n)s AS first
)
INSERT INTO item_tail (thread_id, item_no, hash, value)
SELECT %(thread_id)s, allocated.first + x.ord - 1, x.item->>0, (x.item->>1)::jsonb
FROM allocated, json_array_elements(%(items)s::json) WITH ORDINALITY AS x (item, ord)
ON CONFLICT (thread_id, hash) DO NOTHING
RETURNING hash, item_no"""

# The tail's items up to a page boundary become pages of PAGE_ITEMS numbers each, written once.
SEAL_ITEM_PAGES = """
WITH moved AS (
    DELETE FROM item_tail WHERE thread_id = %(thread_id)s AND item_no <= %(upto)s
    RETURNING item_no, hash, value
)
INSERT INTO item_pages (thread_id, first_no, last_no, item_nos, hashes, items)
SELECT %(thread_id)s, min(item_no), max(item_no), array_agg(item_no ORDER BY item_no),
       array_agg(hash ORDER BY item_no), jsonb_agg(value ORDER BY item_no)
FROM moved GROUP BY (item_no - 1) / %(page)s
-- a straggler of a page already sealed (another process stored it late) joins its page
ON CONFLICT (thread_id, first_no) DO UPDATE SET
    last_no = GREATEST(item_pages.last_no, excluded.last_no),
    item_nos = item_pages.item_nos || excluded.item_nos,
    hashes = item_pages.hashes || excluded.hashes,
    items = item_pages.items || excluded.items"""
# The tail's deleted rows are only reused once vacuumed, and autovacuum comes minutes later. The same
# holds for the threads table: a thread's row is updated by every put (~2,600 versions in 200 turns),
# and its dead versions and index entries took 0.17-0.31 MB for one live row.
VACUUM_ITEM_TAIL = "VACUUM (SKIP_LOCKED) item_tail, threads"

# A put in one statement: its channel values, its checkpoint row and its thread's row, written only
# if the thread is still the incarnation the put was encoded against (else no row comes back). The
# thread's row is updated first and the rest stored only if that matched: the update waits for a
# deletion of the thread in progress and then matches nothing, where a check against the statement's
# snapshot still saw the row and stored, after the deletion's own deletes, rows with the deleted
# thread's item numbers that the thread's next incarnation then tripped over.
_THREAD_MATCHED = "EXISTS (SELECT 1 FROM thread_row)"
# Items numbered by the saver (see `_store_items`) go in with the statement that refers to them; a
# number or hash stored meanwhile by another process fails the whole statement on the key.
_STORE_DEFERRED_ITEMS = f"""stored_items AS (
    INSERT INTO item_tail (thread_id, item_no, hash, value)
    SELECT %(thread_id)s, %(first_item)s + x.ord - 1, x.item->>0, (x.item->>1)::jsonb
    FROM json_array_elements(%(items)s::json) WITH ORDINALITY AS x (item, ord)
    WHERE {_THREAD_MATCHED}
)"""
# Whether the checkpoint was new is asked of the snapshot the statement started from (`earlier`), not
# of the row's `xmax`, which PostgreSQL refuses on a partitioned table (deploy/postgres/
# partition_by_month.sql partitions checkpoints too). Only the same checkpoint put twice at the very
# same moment by two sessions would count twice; LangGraph puts a checkpoint id once.
STORE_PUT = f"""
WITH earlier AS (
    SELECT 1 FROM checkpoints
    WHERE thread_id = %(thread_id)s AND checkpoint_ns = %(ns)s AND checkpoint_id = %(checkpoint_id)s
),
thread_row AS (
    UPDATE threads SET
        -- Unchanged indexed columns let PostgreSQL update the row in place (HOT) instead of adding index
        -- entries that every lookup of the thread walks until VACUUM: so updated_at moves at most every
        -- 10 ms (a turn's puts come a few ms apart) and the metadata only when the seed adds a key.
        updated_at = CASE
            -- (and at once after a keep_latest sweep marked the thread: its next activity must show)
            WHEN %(now)s - updated_at > interval '10 milliseconds' OR swept_updated_at >= updated_at THEN %(now)s
            ELSE updated_at
        END,
        metadata = CASE WHEN metadata @> %(seed)s::jsonb THEN metadata ELSE %(seed)s::jsonb || metadata END,
        checkpoint_count = checkpoint_count + CASE WHEN EXISTS (SELECT 1 FROM earlier) THEN 0 ELSE 1 END,
        -- The head is the newest root checkpoint (what a read without an id loads): a put another
        -- process's newer one overtook (two runs on one thread) leaves it, its count and preview alone.
        head_checkpoint_id = CASE
            WHEN %(head)s >= COALESCE(head_checkpoint_id, '') THEN %(head)s ELSE head_checkpoint_id
        END,
        -- the head's messages: a whole list (clear) or the parent's plus the messages written for it
        message_count = CASE
            WHEN %(head)s IS NULL OR %(head)s < COALESCE(head_checkpoint_id, '') THEN message_count
            WHEN %(clear)s = 1 THEN %(message_count)s
            -- a checkpoint stored again applies nothing new
            WHEN NOT EXISTS (SELECT 1 FROM earlier) THEN GREATEST(message_count + %(message_count)s, 0)
            ELSE message_count
        END,
        preview = CASE
            WHEN %(head)s >= COALESCE(head_checkpoint_id, '') THEN COALESCE(%(preview)s, preview) ELSE preview
        END,
        next_item = GREATEST(next_item, %(next_item)s),
        status = CASE
            WHEN %(root)s = 1 AND status = 'interrupted' AND NOT EXISTS (
                SELECT 1 FROM writes AS w
                WHERE w.thread_id = threads.thread_id AND w.checkpoint_ns = ''
                  AND w.checkpoint_id >= %(checkpoint_id)s AND w.channel = '__interrupt__'
            ) THEN 'idle'
            ELSE status
        END
    WHERE thread_id = %(thread_id)s AND incarnation = %(incarnation)s
    RETURNING 1
),
{_STORE_DEFERRED_ITEMS},
stored_values AS (
    INSERT INTO channel_values (thread_id, checkpoint_ns, channel, version, kind, value, blob)
    SELECT %(thread_id)s, %(ns)s, x.channel, x.version, x.kind, x.value::jsonb, decode(x.blob, 'base64')
    FROM json_to_recordset(%(rows)s::json) AS x (channel text, version text, kind text, value text, blob text)
    WHERE {_THREAD_MATCHED}
    ON CONFLICT DO NOTHING
)
INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id,
                         checkpoint, metadata, run_id, schema_version)
SELECT %(thread_id)s, %(ns)s, %(checkpoint_id)s, %(parent_id)s, %(checkpoint)s::json,
       %(metadata)s::jsonb, %(run_id)s, %(schema_version)s
WHERE {_THREAD_MATCHED}
ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id) DO UPDATE SET
    parent_checkpoint_id = excluded.parent_checkpoint_id, checkpoint = excluded.checkpoint,
    metadata = excluded.metadata, run_id = excluded.run_id,
    schema_version = excluded.schema_version
RETURNING 1"""

# A put_writes in one statement: its new items, the task's writes (one row, `rows` the JSON array
# [[idx, channel, kind, JSON text, base64 blob], …]), and the thread's row when they interrupt it or
# number items; nothing is stored unless the thread is still the `incarnation` the cache knew (the
# writes may refer to items by the cache's numbers), and a row comes back only if it is. The same task
# writing again at the same checkpoint merges into its row, write by write (by `idx`). The row is
# locked FOR SHARE, as a put updates it first (above): a deletion, or a prune's new incarnation
# (maintenance.py, `_collect_garbage`), in progress makes the write wait and then find no row.
_STORE_WRITES = f"""
WITH thread_row AS (
    SELECT 1 FROM threads WHERE thread_id = %(thread_id)s AND incarnation = %(incarnation)s FOR SHARE
),
{_STORE_DEFERRED_ITEMS},
stored AS (
    INSERT INTO task_writes AS w (thread_id, checkpoint_ns, checkpoint_id, task_id, task_path, writes)
    SELECT %(thread_id)s, %(ns)s, %(checkpoint_id)s, %(task_id)s, %(task_path)s, %(rows)s::json
    WHERE {_THREAD_MATCHED}
    ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id, task_id) DO UPDATE SET {{merge}}
),
marked AS (
    UPDATE threads SET
        status = CASE WHEN %(interrupted)s THEN 'interrupted' ELSE status END,
        next_item = GREATEST(next_item, %(next_item)s)
    WHERE thread_id = %(thread_id)s
      AND (%(interrupted)s OR %(next_item)s > 0)
      AND incarnation = %(incarnation)s
)
SELECT 1 FROM thread_row"""
# Regular writes are kept as first stored (only new indexes are added); special ones (errors,
# interrupts…) replace those of the same index.
STORE_WRITES = _STORE_WRITES.format(
    merge="""writes = (
        SELECT json_agg(e.value ORDER BY (e.value->>0)::integer) FROM (
            SELECT value FROM json_array_elements(w.writes)
            UNION ALL
            SELECT n.value FROM json_array_elements(excluded.writes) AS n
            WHERE NOT EXISTS (SELECT 1 FROM json_array_elements(w.writes) AS o WHERE o.value->>0 = n.value->>0)
        ) AS e
    )
    WHERE EXISTS (
        SELECT 1 FROM json_array_elements(excluded.writes) AS n
        WHERE NOT EXISTS (SELECT 1 FROM json_array_elements(w.writes) AS o WHERE o.value->>0 = n.value->>0)
    )"""
)
STORE_SPECIAL_WRITES = _STORE_WRITES.format(
    merge="""task_path = excluded.task_path, writes = (
        SELECT json_agg(e.value ORDER BY (e.value->>0)::integer) FROM (
            SELECT value FROM json_array_elements(excluded.writes)
            UNION ALL
            SELECT o.value FROM json_array_elements(w.writes) AS o
            WHERE NOT EXISTS (
                SELECT 1 FROM json_array_elements(excluded.writes) AS n WHERE n.value->>0 = o.value->>0
            )
        ) AS e
    )"""
)

# The calls read from the stored messages (the `tool_calls` view of migration 002), one thread, in order.
SELECT_TOOL_CALLS = """
SELECT item_no, call_id, tool, args, result, status FROM tool_calls
WHERE thread_id = %s ORDER BY item_no, position"""

# The tool-call audit (migration 005): one row per attempt of a call; `attempt` counts the thread's
# rows of the same call id, this one included.
AUDIT_COLUMNS = """audit_id, thread_id, checkpoint_ns, checkpoint_id, run_id, call_id, tool, args, result,
    status, error, started_at, ended_at, duration_ms, attempt"""
INSERT_TOOL_CALL = f"""
INSERT INTO tool_call_audit ({AUDIT_COLUMNS})
SELECT %s, %s, %s, %s, %s, %s, %s, %s::jsonb, %s, %s, %s, %s, %s, %s, COALESCE(MAX(attempt), 0) + 1
FROM tool_call_audit WHERE thread_id = %s AND call_id = %s"""
END_TOOL_CALL = """
UPDATE tool_call_audit SET status = %s, result = %s, error = %s, ended_at = %s, duration_ms = %s,
    args = COALESCE(%s::jsonb, args)
WHERE audit_id = %s"""
# A row as an archive carries it (`threads import`): attempt and times as they were.
INSERT_TOOL_CALL_AS_IS = f"""
INSERT INTO tool_call_audit ({AUDIT_COLUMNS})
VALUES (%s, %s, %s, %s, %s, %s, %s, %s::jsonb, %s, %s, %s, %s, %s, %s, %s)"""
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
  AND tool IN (SELECT jsonb_array_elements_text(%s::jsonb))
ORDER BY tool, duration_ms"""
SELECT_RECENT_FAILURES = """
SELECT thread_id, checkpoint_ns, checkpoint_id, run_id, tool, status, error, started_at FROM tool_call_audit
WHERE status IN ('error', 'cancelled')
ORDER BY started_at DESC, audit_id DESC LIMIT %s"""
# State upcasting (upcast.py): a checkpoint's state schema version and its document; `migrate-state`.
SELECT_STATE_VERSION = """
SELECT schema_version, checkpoint FROM checkpoints
WHERE thread_id = %s AND checkpoint_ns = %s AND checkpoint_id = %s"""
# A task's write version into a checkpoint's document, only onto the document as read (a put_writes
# runs without a transaction: a migrate-state that rewrote or restamped it meanwhile must not be undone).
NOTE_WRITE_VERSION = """
UPDATE checkpoints SET checkpoint = %s::json
WHERE thread_id = %s AND checkpoint_ns = %s AND checkpoint_id = %s AND schema_version = %s
  AND checkpoint::text = %s
RETURNING 1"""
# Threads holding a checkpoint older than the schema, or one that refers to older values.
OLD_STATE = "(schema_version < %s OR (checkpoint->'older_values') IS NOT NULL)"
COUNT_OLD_STATE_THREADS = "SELECT COUNT(DISTINCT thread_id) FROM checkpoints WHERE " + OLD_STATE
SELECT_OLD_STATE_THREADS = (
    "SELECT DISTINCT thread_id FROM checkpoints WHERE " + OLD_STATE
    + " AND thread_id > %s ORDER BY thread_id LIMIT %s"
)
SELECT_THREAD_STATE_VERSIONS = """
SELECT checkpoint_ns, checkpoint_id, schema_version, checkpoint FROM checkpoints WHERE thread_id = %s"""
UPDATE_CHECKPOINT_STATE = """
UPDATE checkpoints SET schema_version = %s, checkpoint = %s::json
WHERE thread_id = %s AND checkpoint_ns = %s AND checkpoint_id = %s"""
UPDATE_CHANNEL_VALUE = """
UPDATE channel_values SET kind = %s, value = %s::jsonb, blob = %s
WHERE thread_id = %s AND checkpoint_ns = %s AND channel = %s AND version = %s"""
# A value `migrate-state` upcast that no longer fits in its checkpoints' documents (migration 007).
UPSERT_CHANNEL_VALUE = """
INSERT INTO channel_values (thread_id, checkpoint_ns, channel, version, kind, value, blob)
VALUES (%s, %s, %s, %s, %s, %s::jsonb, %s)
ON CONFLICT (thread_id, checkpoint_ns, channel, version)
DO UPDATE SET kind = excluded.kind, value = excluded.value, blob = excluded.blob"""
# One write of a task's packed row (`writes` is a view, migration 007): its kind, JSON text and blob.
UPDATE_WRITE_VALUE = """
WITH p (kind, value, blob, thread_id, ns, checkpoint_id, task_id, idx) AS (
    SELECT %s::text, %s::text, %s::bytea, %s::text, %s::text, %s::text, %s::text, %s::integer
)
UPDATE task_writes AS w SET writes = (
    SELECT json_agg(
        CASE WHEN (e.value->>0)::integer = p.idx
             THEN json_build_array(p.idx, e.value->1, p.kind, p.value, translate(encode(p.blob, 'base64'), E'\\n', ''))
             ELSE e.value END
        ORDER BY (e.value->>0)::integer)
    FROM json_array_elements(w.writes) AS e
)
FROM p
WHERE w.thread_id = p.thread_id AND w.checkpoint_ns = p.ns AND w.checkpoint_id = p.checkpoint_id
  AND w.task_id = p.task_id"""
RESTAMP_THREAD_STATE = """
UPDATE checkpoints SET schema_version = %s WHERE thread_id = %s AND schema_version <> %s"""
# A new incarnation: other processes drop what they cached of the thread before their next write.
SET_INCARNATION = "UPDATE threads SET incarnation = %s WHERE thread_id = %s"
