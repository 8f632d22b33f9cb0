-- +goose Up
-- How a project's bugs are reproduced, fixed, verified and released. The
-- settings are JSON (signoff.RepoSettings without the webhook secret); the
-- secret is kept apart so that no read of the settings carries it.
CREATE TABLE repo_settings (
    project_id     TEXT PRIMARY KEY REFERENCES projects (id),
    workspace_id   TEXT NOT NULL REFERENCES workspaces (id),
    settings       TEXT NOT NULL,
    webhook_secret TEXT NOT NULL DEFAULT '',
    updated_at     INTEGER NOT NULL
);

-- One bug loop per bug case: its harnesses, candidates, merge and release
-- (signoff.BugLoopState JSON), guarded by an optimistic version.
CREATE TABLE bug_loops (
    case_id      TEXT PRIMARY KEY REFERENCES cases (id),
    workspace_id TEXT NOT NULL REFERENCES workspaces (id),
    project_id   TEXT NOT NULL REFERENCES projects (id),
    state        TEXT NOT NULL,
    version      INTEGER NOT NULL,
    created_at   INTEGER NOT NULL,
    updated_at   INTEGER NOT NULL
);
CREATE INDEX bug_loops_project ON bug_loops (workspace_id, project_id, case_id);

-- Humans' Ed25519 approval keys. The id is keys.ID of the public key, so a
-- key is registered once, in one workspace.
CREATE TABLE approver_keys (
    id           TEXT PRIMARY KEY,
    workspace_id TEXT NOT NULL REFERENCES workspaces (id),
    actor_id     TEXT NOT NULL REFERENCES actors (id),
    public_key   TEXT NOT NULL,
    created_at   INTEGER NOT NULL,
    revoked_at   INTEGER
);
CREATE INDEX approver_keys_actor ON approver_keys (workspace_id, actor_id);

-- Verified approval envelopes. A nonce is used once per workspace.
CREATE TABLE approvals (
    id             TEXT PRIMARY KEY,
    workspace_id   TEXT NOT NULL REFERENCES workspaces (id),
    case_id        TEXT NOT NULL REFERENCES cases (id),
    subject_digest TEXT NOT NULL,
    decision       TEXT NOT NULL,
    approver_id    TEXT NOT NULL REFERENCES actors (id),
    key_id         TEXT NOT NULL REFERENCES approver_keys (id),
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
CREATE UNIQUE INDEX approvals_nonce ON approvals (workspace_id, nonce);
CREATE INDEX approvals_case ON approvals (workspace_id, case_id, status);

-- Deployments of a project. The id is the webhook's (or the deploy hook's),
-- so a repeated delivery is stored once.
CREATE TABLE deployments (
    project_id   TEXT NOT NULL REFERENCES projects (id),
    id           TEXT NOT NULL,
    workspace_id TEXT NOT NULL REFERENCES workspaces (id),
    commit_sha   TEXT NOT NULL,
    environment  TEXT NOT NULL,
    url          TEXT NOT NULL,
    source       TEXT NOT NULL,
    received_at  INTEGER NOT NULL,
    PRIMARY KEY (project_id, id)
);
CREATE INDEX deployments_received ON deployments (project_id, received_at);

-- +goose Down
DROP TABLE deployments;
DROP TABLE approvals;
DROP TABLE approver_keys;
DROP TABLE bug_loops;
DROP TABLE repo_settings;
