-- +goose Up
CREATE TABLE workspaces (
    id         TEXT PRIMARY KEY,
    name       TEXT NOT NULL,
    created_at INTEGER NOT NULL
);

CREATE TABLE actors (
    id           TEXT PRIMARY KEY,
    workspace_id TEXT NOT NULL REFERENCES workspaces (id),
    name         TEXT NOT NULL,
    role         TEXT NOT NULL,
    created_at   INTEGER NOT NULL,
    disabled_at  INTEGER,
    UNIQUE (workspace_id, name)
);

CREATE TABLE tokens (
    id            TEXT PRIMARY KEY,
    workspace_id  TEXT NOT NULL REFERENCES workspaces (id),
    actor_id      TEXT NOT NULL REFERENCES actors (id),
    label         TEXT NOT NULL,
    secret_sha256 BLOB NOT NULL,
    created_at    INTEGER NOT NULL,
    expires_at    INTEGER,
    revoked_at    INTEGER
);
CREATE INDEX tokens_actor ON tokens (workspace_id, actor_id);

CREATE TABLE projects (
    id           TEXT PRIMARY KEY,
    workspace_id TEXT NOT NULL REFERENCES workspaces (id),
    name         TEXT NOT NULL,
    repo_url     TEXT NOT NULL,
    description  TEXT NOT NULL,
    created_at   INTEGER NOT NULL,
    updated_at   INTEGER NOT NULL,
    UNIQUE (workspace_id, name)
);

CREATE TABLE cases (
    id               TEXT PRIMARY KEY,
    workspace_id     TEXT NOT NULL REFERENCES workspaces (id),
    project_id       TEXT NOT NULL REFERENCES projects (id),
    kind             TEXT NOT NULL,
    title            TEXT NOT NULL,
    state            TEXT NOT NULL,
    version          INTEGER NOT NULL,
    fix_attempts     INTEGER NOT NULL,
    max_fix_attempts INTEGER NOT NULL,
    reporter_id      TEXT NOT NULL,
    created_by       TEXT NOT NULL,
    created_at       INTEGER NOT NULL,
    updated_at       INTEGER NOT NULL
);
CREATE INDEX cases_workspace ON cases (workspace_id, id);

CREATE TABLE ledger_events (
    workspace_id TEXT NOT NULL,
    seq          INTEGER NOT NULL,
    case_id      TEXT NOT NULL,
    type         TEXT NOT NULL,
    actor_id     TEXT NOT NULL,
    occurred_at  INTEGER NOT NULL,
    payload      TEXT NOT NULL,
    prev_hash    TEXT NOT NULL,
    hash         TEXT NOT NULL,
    PRIMARY KEY (workspace_id, seq)
) WITHOUT ROWID;
CREATE INDEX ledger_events_case ON ledger_events (workspace_id, case_id, seq);

-- The head of each chain: the lock that serializes appends, and the signed
-- statement of where the chain ends.
CREATE TABLE ledger_heads (
    workspace_id TEXT PRIMARY KEY REFERENCES workspaces (id),
    seq          INTEGER NOT NULL,
    hash         TEXT NOT NULL,
    key_id       TEXT NOT NULL,
    signed_at    INTEGER NOT NULL,
    signature    BLOB NOT NULL
);

CREATE TABLE ledger_checkpoints (
    workspace_id TEXT NOT NULL,
    seq          INTEGER NOT NULL,
    hash         TEXT NOT NULL,
    key_id       TEXT NOT NULL,
    signed_at    INTEGER NOT NULL,
    signature    BLOB NOT NULL,
    PRIMARY KEY (workspace_id, seq)
);

-- Append-only: the application never updates or deletes history. These
-- triggers stop accidents; deliberate tampering is what ledger verify is for.
-- +goose StatementBegin
CREATE TRIGGER ledger_events_no_update BEFORE UPDATE ON ledger_events
BEGIN
    SELECT RAISE(ABORT, 'ledger_events is append-only');
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER ledger_events_no_delete BEFORE DELETE ON ledger_events
BEGIN
    SELECT RAISE(ABORT, 'ledger_events is append-only');
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER ledger_checkpoints_no_update BEFORE UPDATE ON ledger_checkpoints
BEGIN
    SELECT RAISE(ABORT, 'ledger_checkpoints is append-only');
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER ledger_checkpoints_no_delete BEFORE DELETE ON ledger_checkpoints
BEGIN
    SELECT RAISE(ABORT, 'ledger_checkpoints is append-only');
END;
-- +goose StatementEnd

-- +goose Down
DROP TABLE ledger_checkpoints;
DROP TABLE ledger_heads;
DROP TABLE ledger_events;
DROP TABLE cases;
DROP TABLE projects;
DROP TABLE tokens;
DROP TABLE actors;
DROP TABLE workspaces;
