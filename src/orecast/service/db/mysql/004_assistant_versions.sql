-- orecast service tables, version 4: every version of an assistant (`assistants.get_versions`); an
-- update adds one, `set_latest` copies one back into `service_assistants`. The assistants already
-- there get their current state as a version.
CREATE TABLE IF NOT EXISTS service_assistant_versions (
    assistant_id VARBINARY(255) NOT NULL,
    version      INT NOT NULL,
    graph_id     TEXT NOT NULL,
    name         TEXT NOT NULL,
    description  TEXT,
    config       LONGTEXT NOT NULL DEFAULT ('{}'),
    context      LONGTEXT NOT NULL DEFAULT ('{}'),
    metadata     LONGTEXT NOT NULL DEFAULT ('{}'),
    created_at   VARCHAR(40) CHARACTER SET ascii NOT NULL,
    PRIMARY KEY (assistant_id, version)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;
INSERT INTO service_assistant_versions (assistant_id, version, graph_id, name, description, config, context,
    metadata, created_at)
SELECT assistant_id, version, graph_id, name, description, config, context, metadata, updated_at
FROM service_assistants;
