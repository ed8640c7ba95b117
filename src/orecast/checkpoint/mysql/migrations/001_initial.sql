-- orecast checkpoint store, MySQL 8 / MariaDB >= 10.6, version 1.
-- Ids are VARBINARY: compared byte for byte (no case folding, no trailing-space padding), and InnoDB
-- counts a VARBINARY key by its bytes, where a utf8mb4 VARCHAR counts 4 bytes a character: the ids
-- the store accepts (1,024 bytes, see ids.py) fit a 3,072-byte key only this way. JSON columns are
-- MySQL 8's binary JSON, or on MariaDB a LONGTEXT checked with JSON_VALID; both take JSON functions.
CREATE TABLE IF NOT EXISTS threads (
    thread_id          VARBINARY(1024) NOT NULL,
    incarnation        VARCHAR(32) CHARACTER SET ascii NOT NULL,
    created_at         DATETIME(6) NOT NULL,
    updated_at         DATETIME(6) NOT NULL,
    metadata           JSON NOT NULL,
    status             VARCHAR(16) CHARACTER SET ascii NOT NULL DEFAULT 'idle',
    head_checkpoint_id VARBINARY(256),
    checkpoint_count   INT NOT NULL DEFAULT 0,
    message_count      INT NOT NULL DEFAULT 0,
    preview            TEXT,
    next_item          BIGINT NOT NULL DEFAULT 1,
    PRIMARY KEY (thread_id),
    INDEX threads_updated_at (updated_at)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

CREATE TABLE IF NOT EXISTS checkpoints (
    thread_id            VARBINARY(1024) NOT NULL,
    checkpoint_ns        VARBINARY(1024) NOT NULL DEFAULT '',
    checkpoint_id        VARBINARY(256) NOT NULL,
    parent_checkpoint_id VARBINARY(256),
    checkpoint           JSON NOT NULL,
    metadata             JSON NOT NULL,
    run_id               BLOB,
    schema_version       INT NOT NULL,
    PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id),
    INDEX checkpoints_run_id (run_id(255))
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

CREATE TABLE IF NOT EXISTS channel_values (
    thread_id     VARBINARY(1024) NOT NULL,
    checkpoint_ns VARBINARY(1024) NOT NULL DEFAULT '',
    channel       VARBINARY(768) NOT NULL,
    version       VARBINARY(128) NOT NULL,
    kind          VARCHAR(8) CHARACTER SET ascii NOT NULL,
    value         JSON,
    `blob`        LONGBLOB,
    PRIMARY KEY (thread_id, checkpoint_ns, channel, version)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

CREATE TABLE IF NOT EXISTS items (
    thread_id VARBINARY(1024) NOT NULL,
    item_no   BIGINT NOT NULL,
    hash      CHAR(32) CHARACTER SET ascii NOT NULL,
    value     JSON NOT NULL,
    PRIMARY KEY (thread_id, item_no),
    UNIQUE KEY items_hash (thread_id, hash)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

CREATE TABLE IF NOT EXISTS writes (
    thread_id     VARBINARY(1024) NOT NULL,
    checkpoint_ns VARBINARY(1024) NOT NULL DEFAULT '',
    checkpoint_id VARBINARY(256) NOT NULL,
    task_id       VARBINARY(256) NOT NULL,
    idx           INT NOT NULL,
    channel       VARBINARY(768) NOT NULL,
    task_path     VARBINARY(1024) NOT NULL DEFAULT '',
    kind          VARCHAR(8) CHARACTER SET ascii NOT NULL,
    value         JSON,
    `blob`        LONGBLOB,
    PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id, task_id, idx)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;
