-- Pending writes keyed by (thread, checkpoint id, namespace, task, index) instead of (thread, namespace,
-- checkpoint id, task, index). A write is nearly always for its namespace's newest checkpoint, and
-- checkpoint ids grow with time, so new rows now go to the end of their thread's range. Under the old
-- key, a subgraph's writes (a new namespace, `<node>:<task id>`, each time it runs) went to a random
-- place among the thread's older namespaces: a commit wrote a page there, split it when full, and
-- wrote more of the table's inner pages as the thread grew (bench/sqlite_pages.py, subgraph workload:
-- 10.3–11.6 → 13.9–15.0 pages of `writes` a turn from turns 1–10 to 51–60; 9.1 → 10.5 with this key).
-- Every lookup names the thread, namespace and checkpoint id, or the thread alone, so each still finds
-- its rows by the key. In the root namespace both keys sort alike: a store without subgraphs keeps its
-- order and its size.
CREATE TABLE writes_by_checkpoint (
    thread_id     TEXT NOT NULL,
    checkpoint_ns TEXT NOT NULL DEFAULT '',
    checkpoint_id TEXT NOT NULL,
    task_id       TEXT NOT NULL,
    idx           INTEGER NOT NULL,
    channel       TEXT NOT NULL,
    task_path     TEXT NOT NULL DEFAULT '',
    kind          TEXT NOT NULL,
    value         TEXT,
    blob          BLOB,
    PRIMARY KEY (thread_id, checkpoint_id, checkpoint_ns, task_id, idx)
) WITHOUT ROWID;

INSERT INTO writes_by_checkpoint (thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, task_path,
                                  kind, value, blob)
SELECT thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, task_path, kind, value, blob
FROM writes
ORDER BY thread_id, checkpoint_id, checkpoint_ns, task_id, idx;

DROP TABLE writes;

ALTER TABLE writes_by_checkpoint RENAME TO writes;
