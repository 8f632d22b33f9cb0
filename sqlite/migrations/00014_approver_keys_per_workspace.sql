-- +goose Up
-- Approval key ids are unique per workspace, not across all of them: with
-- the id alone as the key, a second tenant registering the same public key
-- was refused, which told it that the key exists elsewhere and let it
-- block the owner's registration. The key becomes (workspace_id, id) and
-- approvals reference their key within their own workspace.
--
-- SQLite cannot change a primary key or a foreign key in place: both tables
-- are rebuilt, approvals first, so that no row ever references a missing
-- key. Renaming a table rewrites the references to it in other tables.
CREATE TABLE approver_keys_v14 (
    workspace_id TEXT NOT NULL REFERENCES workspaces (id),
    id           TEXT NOT NULL,
    actor_id     TEXT NOT NULL REFERENCES actors (id),
    public_key   TEXT NOT NULL,
    created_at   INTEGER NOT NULL,
    revoked_at   INTEGER,
    PRIMARY KEY (workspace_id, id)
);
INSERT INTO approver_keys_v14 (workspace_id, id, actor_id, public_key, created_at, revoked_at)
    SELECT workspace_id, id, actor_id, public_key, created_at, revoked_at FROM approver_keys;

CREATE TABLE approvals_v14 (
    id             TEXT PRIMARY KEY,
    workspace_id   TEXT NOT NULL REFERENCES workspaces (id),
    case_id        TEXT NOT NULL REFERENCES cases (id),
    subject_digest TEXT NOT NULL,
    decision       TEXT NOT NULL,
    approver_id    TEXT NOT NULL REFERENCES actors (id),
    key_id         TEXT NOT NULL,
    nonce          TEXT NOT NULL,
    policy_digest  TEXT NOT NULL,
    issued_at      INTEGER NOT NULL,
    expires_at     INTEGER NOT NULL,
    envelope       TEXT NOT NULL,
    via            TEXT NOT NULL,
    status         TEXT NOT NULL,
    created_at     INTEGER NOT NULL,
    consumed_at    INTEGER,
    FOREIGN KEY (workspace_id, key_id) REFERENCES approver_keys_v14 (workspace_id, id)
);
INSERT INTO approvals_v14 SELECT id, workspace_id, case_id, subject_digest, decision, approver_id, key_id, nonce, policy_digest,
    issued_at, expires_at, envelope, via, status, created_at, consumed_at FROM approvals;

DROP TABLE approvals;
DROP TABLE approver_keys;
ALTER TABLE approver_keys_v14 RENAME TO approver_keys;
ALTER TABLE approvals_v14 RENAME TO approvals;
CREATE INDEX approver_keys_actor ON approver_keys (workspace_id, actor_id);
CREATE UNIQUE INDEX approvals_nonce ON approvals (workspace_id, nonce);
CREATE INDEX approvals_case ON approvals (workspace_id, case_id, status);
-- Revoking a key or disabling a person voids their approvals that still
-- count, found by key and by approver.
CREATE INDEX approvals_key ON approvals (workspace_id, key_id, status);
CREATE INDEX approvals_approver ON approvals (workspace_id, approver_id, status);

-- +goose Down
-- Going back needs every key id to be unique again: it fails while two
-- workspaces hold the same key.
CREATE TABLE approver_keys_v6 (
    id           TEXT PRIMARY KEY,
    workspace_id TEXT NOT NULL REFERENCES workspaces (id),
    actor_id     TEXT NOT NULL REFERENCES actors (id),
    public_key   TEXT NOT NULL,
    created_at   INTEGER NOT NULL,
    revoked_at   INTEGER
);
INSERT INTO approver_keys_v6 (id, workspace_id, actor_id, public_key, created_at, revoked_at)
    SELECT id, workspace_id, actor_id, public_key, created_at, revoked_at FROM approver_keys;
CREATE TABLE approvals_v6 (
    id             TEXT PRIMARY KEY,
    workspace_id   TEXT NOT NULL REFERENCES workspaces (id),
    case_id        TEXT NOT NULL REFERENCES cases (id),
    subject_digest TEXT NOT NULL,
    decision       TEXT NOT NULL,
    approver_id    TEXT NOT NULL REFERENCES actors (id),
    key_id         TEXT NOT NULL REFERENCES approver_keys_v6 (id),
    nonce          TEXT NOT NULL,
    policy_digest  TEXT NOT NULL,
    issued_at      INTEGER NOT NULL,
    expires_at     INTEGER NOT NULL,
    envelope       TEXT NOT NULL,
    via            TEXT NOT NULL,
    status         TEXT NOT NULL,
    created_at     INTEGER NOT NULL,
    consumed_at    INTEGER
);
INSERT INTO approvals_v6 SELECT id, workspace_id, case_id, subject_digest, decision, approver_id, key_id, nonce, policy_digest,
    issued_at, expires_at, envelope, via, status, created_at, consumed_at FROM approvals;
DROP TABLE approvals;
DROP TABLE approver_keys;
ALTER TABLE approver_keys_v6 RENAME TO approver_keys;
ALTER TABLE approvals_v6 RENAME TO approvals;
CREATE INDEX approver_keys_actor ON approver_keys (workspace_id, actor_id);
CREATE UNIQUE INDEX approvals_nonce ON approvals (workspace_id, nonce);
CREATE INDEX approvals_case ON approvals (workspace_id, case_id, status);
