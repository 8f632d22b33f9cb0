-- +goose Up
-- The built-in feature-flag store: one typed value per project, environment
-- and key, with a version that every write moves by one (the
-- compare-and-swap token of the change gate). The value is RFC 8785
-- canonical JSON.
CREATE TABLE flags (
    project_id   TEXT NOT NULL REFERENCES projects (id),
    environment  TEXT NOT NULL,
    flag_key     TEXT NOT NULL,
    workspace_id TEXT NOT NULL REFERENCES workspaces (id),
    type         TEXT NOT NULL,
    value        TEXT NOT NULL,
    version      BIGINT NOT NULL,
    created_at   BIGINT NOT NULL,
    updated_at   BIGINT NOT NULL,
    updated_by   TEXT NOT NULL,
    PRIMARY KEY (project_id, environment, flag_key)
);

-- OFREP API keys, one environment of one project each. Only the SHA-256 of
-- the secret is stored.
CREATE TABLE flag_keys (
    id            TEXT PRIMARY KEY,
    workspace_id  TEXT NOT NULL REFERENCES workspaces (id),
    project_id    TEXT NOT NULL REFERENCES projects (id),
    environment   TEXT NOT NULL,
    label         TEXT NOT NULL,
    secret_sha256 BYTEA NOT NULL,
    created_by    TEXT NOT NULL,
    created_at    BIGINT NOT NULL,
    revoked_at    BIGINT
);
CREATE INDEX flag_keys_project ON flag_keys (workspace_id, project_id, environment);

-- +goose Down
DROP TABLE flag_keys;
DROP TABLE flags;
