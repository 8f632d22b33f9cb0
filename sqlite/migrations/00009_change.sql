-- +goose Up
-- Each workspace's change policy: the YAML as written and the digest of its
-- parsed form (change.Policy.Digest), which every approval names. Version
-- is the compare-and-swap token of its writes.
CREATE TABLE change_policies (
    workspace_id TEXT PRIMARY KEY REFERENCES workspaces (id),
    yaml         TEXT NOT NULL,
    digest       TEXT NOT NULL,
    version      INTEGER NOT NULL,
    updated_at   INTEGER NOT NULL,
    updated_by   TEXT NOT NULL
);

-- One change loop per change case (signoff.ChangeLoopState JSON), guarded
-- by an optimistic version like the bug loop's.
CREATE TABLE change_loops (
    case_id      TEXT PRIMARY KEY REFERENCES cases (id),
    workspace_id TEXT NOT NULL REFERENCES workspaces (id),
    project_id   TEXT NOT NULL REFERENCES projects (id),
    state        TEXT NOT NULL,
    version      INTEGER NOT NULL,
    created_at   INTEGER NOT NULL,
    updated_at   INTEGER NOT NULL
);
CREATE INDEX change_loops_project ON change_loops (workspace_id, project_id, case_id);

-- Every plan drafted for a change case, kept as its canonical JSON exactly
-- as drafted. The gate recomputes the digest from the body, so the stored
-- digest is a record, not a trust anchor.
CREATE TABLE change_plans (
    id           TEXT PRIMARY KEY,
    workspace_id TEXT NOT NULL REFERENCES workspaces (id),
    case_id      TEXT NOT NULL REFERENCES cases (id),
    body         TEXT NOT NULL,
    digest       TEXT NOT NULL,
    proposer     TEXT NOT NULL,
    via          TEXT NOT NULL,
    created_at   INTEGER NOT NULL
);
CREATE INDEX change_plans_case ON change_plans (workspace_id, case_id, created_at);

-- DSSE-signed receipts of what the gate did; digest is the SHA-256 of the
-- envelope's payload.
CREATE TABLE change_receipts (
    id           TEXT PRIMARY KEY,
    workspace_id TEXT NOT NULL REFERENCES workspaces (id),
    case_id      TEXT NOT NULL REFERENCES cases (id),
    kind         TEXT NOT NULL,
    envelope     TEXT NOT NULL,
    digest       TEXT NOT NULL,
    created_at   INTEGER NOT NULL
);
CREATE INDEX change_receipts_case ON change_receipts (workspace_id, case_id, created_at);

-- The per-target execution locks: a lease held by one holder until
-- expires_at, taken over by anyone once it expired.
CREATE TABLE target_locks (
    workspace_id TEXT NOT NULL REFERENCES workspaces (id),
    target       TEXT NOT NULL,
    holder       TEXT NOT NULL,
    expires_at   INTEGER NOT NULL,
    PRIMARY KEY (workspace_id, target)
);

-- +goose Down
DROP TABLE target_locks;
DROP TABLE change_receipts;
DROP TABLE change_plans;
DROP TABLE change_loops;
DROP TABLE change_policies;
