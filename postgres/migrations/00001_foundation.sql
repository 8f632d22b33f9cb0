-- +goose Up
CREATE TABLE workspaces (
    id         TEXT PRIMARY KEY,
    name       TEXT NOT NULL,
    created_at BIGINT NOT NULL
);

CREATE TABLE actors (
    id           TEXT PRIMARY KEY,
    workspace_id TEXT NOT NULL REFERENCES workspaces (id),
    name         TEXT NOT NULL,
    role         TEXT NOT NULL,
    created_at   BIGINT NOT NULL,
    disabled_at  BIGINT,
    UNIQUE (workspace_id, name)
);

CREATE TABLE tokens (
    id            TEXT PRIMARY KEY,
    workspace_id  TEXT NOT NULL REFERENCES workspaces (id),
    actor_id      TEXT NOT NULL REFERENCES actors (id),
    label         TEXT NOT NULL,
    secret_sha256 BYTEA NOT NULL,
    created_at    BIGINT NOT NULL,
    expires_at    BIGINT,
    revoked_at    BIGINT
);
CREATE INDEX tokens_actor ON tokens (workspace_id, actor_id);

CREATE TABLE projects (
    id           TEXT PRIMARY KEY,
    workspace_id TEXT NOT NULL REFERENCES workspaces (id),
    name         TEXT NOT NULL,
    repo_url     TEXT NOT NULL,
    description  TEXT NOT NULL,
    created_at   BIGINT NOT NULL,
    updated_at   BIGINT NOT NULL,
    UNIQUE (workspace_id, name)
);

CREATE TABLE cases (
    id               TEXT PRIMARY KEY,
    workspace_id     TEXT NOT NULL REFERENCES workspaces (id),
    project_id       TEXT NOT NULL REFERENCES projects (id),
    kind             TEXT NOT NULL,
    title            TEXT NOT NULL,
    state            TEXT NOT NULL,
    version          BIGINT NOT NULL,
    fix_attempts     BIGINT NOT NULL,
    max_fix_attempts BIGINT NOT NULL,
    reporter_id      TEXT NOT NULL,
    created_by       TEXT NOT NULL,
    created_at       BIGINT NOT NULL,
    updated_at       BIGINT NOT NULL
);
CREATE INDEX cases_workspace ON cases (workspace_id, id);

CREATE TABLE ledger_events (
    workspace_id TEXT NOT NULL,
    seq          BIGINT NOT NULL,
    case_id      TEXT NOT NULL,
    type         TEXT NOT NULL,
    actor_id     TEXT NOT NULL,
    occurred_at  BIGINT NOT NULL,
    payload      TEXT NOT NULL,
    prev_hash    TEXT NOT NULL,
    hash         TEXT NOT NULL,
    PRIMARY KEY (workspace_id, seq)
);
CREATE INDEX ledger_events_case ON ledger_events (workspace_id, case_id, seq);

-- The head of each chain: the lock that serializes appends, and the signed
-- statement of where the chain ends.
CREATE TABLE ledger_heads (
    workspace_id TEXT PRIMARY KEY REFERENCES workspaces (id),
    seq          BIGINT NOT NULL,
    hash         TEXT NOT NULL,
    key_id       TEXT NOT NULL,
    signed_at    BIGINT NOT NULL,
    signature    BYTEA NOT NULL
);

CREATE TABLE ledger_checkpoints (
    workspace_id TEXT NOT NULL,
    seq          BIGINT NOT NULL,
    hash         TEXT NOT NULL,
    key_id       TEXT NOT NULL,
    signed_at    BIGINT NOT NULL,
    signature    BYTEA NOT NULL,
    PRIMARY KEY (workspace_id, seq)
);

-- Append-only: the application never updates or deletes history. These
-- triggers stop accidents; deliberate tampering is what ledger verify is for.
-- +goose StatementBegin
CREATE FUNCTION ledger_events_append_only() RETURNS trigger AS $$
BEGIN
    RAISE EXCEPTION '% is append-only', TG_TABLE_NAME;
END;
$$ LANGUAGE plpgsql;
-- +goose StatementEnd
CREATE TRIGGER ledger_events_no_change BEFORE UPDATE OR DELETE ON ledger_events
    FOR EACH ROW EXECUTE FUNCTION ledger_events_append_only();
CREATE TRIGGER ledger_events_no_truncate BEFORE TRUNCATE ON ledger_events
    FOR EACH STATEMENT EXECUTE FUNCTION ledger_events_append_only();
CREATE TRIGGER ledger_checkpoints_no_change BEFORE UPDATE OR DELETE ON ledger_checkpoints
    FOR EACH ROW EXECUTE FUNCTION ledger_events_append_only();
CREATE TRIGGER ledger_checkpoints_no_truncate BEFORE TRUNCATE ON ledger_checkpoints
    FOR EACH STATEMENT EXECUTE FUNCTION ledger_events_append_only();

-- +goose Down
DROP TABLE ledger_checkpoints;
DROP TABLE ledger_heads;
DROP TABLE ledger_events;
DROP FUNCTION ledger_events_append_only;
DROP TABLE cases;
DROP TABLE projects;
DROP TABLE tokens;
DROP TABLE actors;
DROP TABLE workspaces;
