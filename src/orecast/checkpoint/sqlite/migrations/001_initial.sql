-- orecast checkpoint store, SQLite, version 1.
-- WITHOUT ROWID for the tables looked up by their primary key only: a rowid table would keep the
-- key a second time in an index of its own. Not for items: their rows near 1 kB would spill into
-- overflow pages of an index b-tree (checkpoint rows, ~600 bytes, still fit in a page's cell).
CREATE TABLE IF NOT EXISTS threads (
    thread_id          TEXT PRIMARY KEY,
    incarnation        TEXT NOT NULL,
    created_at         TEXT NOT NULL,
    updated_at         TEXT NOT NULL,
    metadata           TEXT NOT NULL DEFAULT '{}',
    status             TEXT NOT NULL DEFAULT 'idle',
    head_checkpoint_id TEXT,
    checkpoint_count   INTEGER NOT NULL DEFAULT 0,
    message_count      INTEGER NOT NULL DEFAULT 0,
    preview            TEXT,
    next_item          INTEGER NOT NULL DEFAULT 1
);
CREATE INDEX IF NOT EXISTS threads_updated_at ON threads (updated_at);

CREATE TABLE IF NOT EXISTS checkpoints (
    thread_id            TEXT NOT NULL,
    checkpoint_ns        TEXT NOT NULL DEFAULT '',
    checkpoint_id        TEXT NOT NULL,
    parent_checkpoint_id TEXT,
    checkpoint           TEXT NOT NULL,
    metadata             TEXT NOT NULL DEFAULT '{}',
    run_id               TEXT,
    schema_version       INTEGER NOT NULL,
    PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS checkpoints_run_id ON checkpoints (run_id) WHERE run_id IS NOT NULL;

CREATE TABLE IF NOT EXISTS channel_values (
    thread_id     TEXT NOT NULL,
    checkpoint_ns TEXT NOT NULL DEFAULT '',
    channel       TEXT NOT NULL,
    version       TEXT NOT NULL,
    kind          TEXT NOT NULL,
    value         TEXT,
    blob          BLOB,
    PRIMARY KEY (thread_id, checkpoint_ns, channel, version)
) WITHOUT ROWID;

CREATE TABLE IF NOT EXISTS items (
    thread_id TEXT NOT NULL,
    item_no   INTEGER NOT NULL,
    hash      TEXT NOT NULL,
    value     TEXT NOT NULL,
    PRIMARY KEY (thread_id, item_no),
    UNIQUE (thread_id, hash)
);

CREATE TABLE IF NOT EXISTS writes (
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
    PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id, task_id, idx)
) WITHOUT ROWID;
