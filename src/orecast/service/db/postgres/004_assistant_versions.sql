-- orecast service tables, version 4: every version of an assistant (`assistants.get_versions`); an
-- update adds one, `set_latest` copies one back into `service_assistants`. The assistants already
-- there get their current state as a version.
CREATE TABLE IF NOT EXISTS service_assistant_versions (
    assistant_id TEXT NOT NULL,
    version      INTEGER NOT NULL,
    graph_id     TEXT NOT NULL,
    name         TEXT NOT NULL,
    description  TEXT,
    config       TEXT NOT NULL DEFAULT '{}',
    context      TEXT NOT NULL DEFAULT '{}',
    metadata     TEXT NOT NULL DEFAULT '{}',
    created_at   TEXT NOT NULL,
    PRIMARY KEY (assistant_id, version)
);
INSERT INTO service_assistant_versions (assistant_id, version, graph_id, name, description, config, context,
    metadata, created_at)
SELECT assistant_id, version, graph_id, name, description, config, context, metadata, updated_at
FROM service_assistants;
