-- +goose Up
-- Project data for triage: the built-in tracker, the crash log, release
-- data and CODEOWNERS. Times are unix microseconds, as everywhere.

-- Tickets of the built-in tracker. Ids are the tracker's own ("APP-101"),
-- unique per project; position keeps the tracker's order. Lists and
-- comments are JSON arrays; fixed_in is NULL until a fix ships.
CREATE TABLE tickets (
    workspace_id      TEXT NOT NULL REFERENCES workspaces (id),
    project_id        TEXT NOT NULL REFERENCES projects (id),
    id                TEXT NOT NULL,
    position          INTEGER NOT NULL,
    title             TEXT NOT NULL,
    status            TEXT NOT NULL,
    severity          TEXT NOT NULL,
    component         TEXT NOT NULL,
    affected_versions TEXT NOT NULL,
    fixed_in          TEXT,
    owner             TEXT NOT NULL,
    created           TEXT NOT NULL,
    description       TEXT NOT NULL,
    comments          TEXT NOT NULL,
    approved_by       TEXT NOT NULL,
    created_by        TEXT NOT NULL,
    created_at        INTEGER NOT NULL,
    updated_at        INTEGER NOT NULL,
    PRIMARY KEY (project_id, id)
);
CREATE INDEX tickets_order ON tickets (project_id, position);

-- The crash log, in arrival order (seq per project). Timestamps keep
-- microseconds. No foreign keys: every writer locks the project row in the
-- same transaction (and projects are never deleted), and checking two keys
-- per row would double the time of a 100,000-event import on PostgreSQL.
CREATE TABLE crash_events (
    workspace_id TEXT NOT NULL,
    project_id   TEXT NOT NULL,
    seq          INTEGER NOT NULL,
    occurred_at  INTEGER NOT NULL,
    app_version  TEXT NOT NULL,
    device       TEXT NOT NULL,
    os           TEXT NOT NULL,
    signature    TEXT NOT NULL,
    stack_top    TEXT NOT NULL,
    user_id      TEXT NOT NULL,
    PRIMARY KEY (project_id, seq)
);
CREATE INDEX crash_events_signature ON crash_events (project_id, signature);

-- Release data, one JSON document (triage.Releases) per project.
CREATE TABLE project_releases (
    project_id   TEXT PRIMARY KEY REFERENCES projects (id),
    workspace_id TEXT NOT NULL REFERENCES workspaces (id),
    doc          TEXT NOT NULL,
    updated_at   INTEGER NOT NULL,
    updated_by   TEXT NOT NULL
);

-- CODEOWNERS: component -> team (and channel), in file order.
CREATE TABLE code_owners (
    workspace_id TEXT NOT NULL REFERENCES workspaces (id),
    project_id   TEXT NOT NULL REFERENCES projects (id),
    component    TEXT NOT NULL,
    position     INTEGER NOT NULL,
    team         TEXT NOT NULL,
    channel      TEXT NOT NULL,
    PRIMARY KEY (project_id, component)
);

-- +goose Down
DROP TABLE code_owners;
DROP TABLE project_releases;
DROP TABLE crash_events;
DROP TABLE tickets;
