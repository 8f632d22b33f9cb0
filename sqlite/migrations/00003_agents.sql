-- +goose Up
-- Agents: who is responsible for each agent, and its presence.
ALTER TABLE actors ADD COLUMN owner_id TEXT;
ALTER TABLE actors ADD COLUMN last_seen_at INTEGER;
ALTER TABLE actors ADD COLUMN client TEXT NOT NULL DEFAULT '';
CREATE INDEX actors_role ON actors (workspace_id, role, id);

-- Tasks: server-issued assignments of one step to one agent identity. The
-- id and input digest are the receipt a submission must quote.
CREATE TABLE tasks (
    id            TEXT PRIMARY KEY,
    workspace_id  TEXT NOT NULL REFERENCES workspaces (id),
    case_id       TEXT NOT NULL REFERENCES cases (id),
    kind          TEXT NOT NULL,
    role          TEXT NOT NULL,
    assignee_id   TEXT NOT NULL REFERENCES actors (id),
    input         TEXT NOT NULL,
    input_digest  TEXT NOT NULL,
    status        TEXT NOT NULL,
    outcome       TEXT NOT NULL DEFAULT '',
    reason        TEXT NOT NULL DEFAULT '',
    output        TEXT,
    output_digest TEXT NOT NULL DEFAULT '',
    evidence      TEXT NOT NULL DEFAULT '',
    parent_id     TEXT NOT NULL DEFAULT '',
    created_by    TEXT NOT NULL,
    created_at    INTEGER NOT NULL,
    updated_at    INTEGER NOT NULL,
    closed_at     INTEGER,
    receipt_seq   INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX tasks_assignee ON tasks (workspace_id, assignee_id, status, id);
CREATE INDEX tasks_status ON tasks (workspace_id, status, id);
CREATE INDEX tasks_case ON tasks (workspace_id, case_id, id);

-- Model transcripts: what an agent was shown and what it answered.
CREATE TABLE model_calls (
    id                TEXT PRIMARY KEY,
    workspace_id      TEXT NOT NULL REFERENCES workspaces (id),
    task_id           TEXT NOT NULL REFERENCES tasks (id),
    case_id           TEXT NOT NULL,
    actor_id          TEXT NOT NULL,
    turn              INTEGER NOT NULL,
    provider          TEXT NOT NULL,
    model             TEXT NOT NULL,
    evidence          TEXT NOT NULL,
    prompt_digest     TEXT NOT NULL,
    request           TEXT NOT NULL,
    response          TEXT,
    response_digest   TEXT NOT NULL,
    prompt_tokens     INTEGER NOT NULL,
    completion_tokens INTEGER NOT NULL,
    cost_micros       INTEGER NOT NULL,
    latency_ms        INTEGER NOT NULL,
    outcome           TEXT NOT NULL,
    error             TEXT NOT NULL,
    created_at        INTEGER NOT NULL
);
CREATE INDEX model_calls_task ON model_calls (workspace_id, task_id, turn, id);

-- Case rooms. Mentions are JSON: each @handle and what came of it.
CREATE TABLE messages (
    id           TEXT PRIMARY KEY,
    workspace_id TEXT NOT NULL REFERENCES workspaces (id),
    case_id      TEXT NOT NULL REFERENCES cases (id),
    author_id    TEXT NOT NULL,
    author_role  TEXT NOT NULL,
    body         TEXT NOT NULL,
    mentions     TEXT NOT NULL,
    addressed    INTEGER NOT NULL,
    created_at   INTEGER NOT NULL
);
CREATE INDEX messages_case ON messages (workspace_id, case_id, id);

-- Who may address each agent (JSON signoff.AddressingPolicy).
CREATE TABLE addressing_policies (
    agent_id     TEXT PRIMARY KEY REFERENCES actors (id),
    workspace_id TEXT NOT NULL REFERENCES workspaces (id),
    policy       TEXT NOT NULL,
    updated_at   INTEGER NOT NULL,
    updated_by   TEXT NOT NULL
);

-- Requests for a human decision over one subject digest.
CREATE TABLE decisions (
    id             TEXT PRIMARY KEY,
    workspace_id   TEXT NOT NULL REFERENCES workspaces (id),
    case_id        TEXT NOT NULL REFERENCES cases (id),
    kind           TEXT NOT NULL,
    subject_digest TEXT NOT NULL,
    subject        TEXT NOT NULL,
    status         TEXT NOT NULL,
    reason         TEXT NOT NULL DEFAULT '',
    requested_by   TEXT NOT NULL,
    decided_by     TEXT NOT NULL DEFAULT '',
    created_at     INTEGER NOT NULL,
    expires_at     INTEGER NOT NULL,
    decided_at     INTEGER
);
CREATE INDEX decisions_case ON decisions (workspace_id, case_id, kind, status);
-- At most one pending decision per case and kind: a new request supersedes.
CREATE UNIQUE INDEX decisions_one_pending ON decisions (workspace_id, case_id, kind) WHERE status = 'pending';

-- Small per-workspace documents (the role configuration is one).
CREATE TABLE settings (
    workspace_id TEXT NOT NULL REFERENCES workspaces (id),
    key          TEXT NOT NULL,
    value        BLOB NOT NULL,
    updated_at   INTEGER NOT NULL,
    updated_by   TEXT NOT NULL,
    PRIMARY KEY (workspace_id, key)
);

-- +goose Down
DROP TABLE settings;
DROP TABLE decisions;
DROP TABLE addressing_policies;
DROP TABLE messages;
DROP TABLE model_calls;
DROP TABLE tasks;
DROP INDEX actors_role;
ALTER TABLE actors DROP COLUMN client;
ALTER TABLE actors DROP COLUMN last_seen_at;
ALTER TABLE actors DROP COLUMN owner_id;
