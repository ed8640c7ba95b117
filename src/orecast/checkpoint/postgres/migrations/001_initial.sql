-- orecast checkpoint store, PostgreSQL, version 1.
CREATE TABLE IF NOT EXISTS threads (
    thread_id          TEXT PRIMARY KEY,
    incarnation        TEXT NOT NULL,
    created_at         TIMESTAMPTZ NOT NULL,
    updated_at         TIMESTAMPTZ NOT NULL,
    metadata           JSONB NOT NULL DEFAULT '{}',
    status             TEXT NOT NULL DEFAULT 'idle',
    head_checkpoint_id TEXT,
    checkpoint_count   INTEGER NOT NULL DEFAULT 0,
    message_count      INTEGER NOT NULL DEFAULT 0,
    preview            TEXT,
    next_item          BIGINT NOT NULL DEFAULT 1
) WITH (fillfactor = 50);  -- room for HOT updates: a thread's row is updated at every step
CREATE INDEX IF NOT EXISTS threads_updated_at ON threads (updated_at);
CREATE INDEX IF NOT EXISTS threads_metadata ON threads USING gin (metadata jsonb_path_ops);

CREATE TABLE IF NOT EXISTS checkpoints (
    thread_id            TEXT NOT NULL,
    checkpoint_ns        TEXT NOT NULL DEFAULT '',
    checkpoint_id        TEXT NOT NULL,
    parent_checkpoint_id TEXT,
    checkpoint           JSONB NOT NULL,
    metadata             JSONB NOT NULL DEFAULT '{}',
    run_id               TEXT,
    schema_version       INTEGER NOT NULL,
    PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id)
);
CREATE INDEX IF NOT EXISTS checkpoints_run_id ON checkpoints (run_id) WHERE run_id IS NOT NULL;

CREATE TABLE IF NOT EXISTS channel_values (
    thread_id     TEXT NOT NULL,
    checkpoint_ns TEXT NOT NULL DEFAULT '',
    channel       TEXT NOT NULL,
    version       TEXT NOT NULL,
    kind          TEXT NOT NULL,
    value         JSONB,
    blob          BYTEA,
    PRIMARY KEY (thread_id, checkpoint_ns, channel, version)
);

CREATE TABLE IF NOT EXISTS items (
    thread_id TEXT NOT NULL,
    item_no   BIGINT NOT NULL,
    hash      TEXT NOT NULL,
    value     JSONB NOT NULL,
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
    value         JSONB,
    blob          BYTEA,
    PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id, task_id, idx)
);

