-- +goose Up
-- What a person answered beyond yes or no (e.g. a corrected severity).
ALTER TABLE decisions ADD COLUMN amendment TEXT NOT NULL DEFAULT '';

-- One triage run per bug case: the crew's working state (intake record,
-- the search results the investigator actually saw, the investigation, the
-- assessment, the gate). Seq orders runs within a project by arrival, which
-- the batch memory depends on.
CREATE TABLE triage_runs (
    case_id      TEXT PRIMARY KEY REFERENCES cases (id),
    workspace_id TEXT NOT NULL REFERENCES workspaces (id),
    project_id   TEXT NOT NULL REFERENCES projects (id),
    seq          BIGINT NOT NULL,
    item_id      TEXT NOT NULL,
    status       TEXT NOT NULL,
    outcome      TEXT NOT NULL DEFAULT '',
    ticket_id    TEXT NOT NULL DEFAULT '',
    resolves     TEXT NOT NULL DEFAULT '',
    state        TEXT NOT NULL,
    version      BIGINT NOT NULL,
    created_at   BIGINT NOT NULL,
    updated_at   BIGINT NOT NULL
);
CREATE UNIQUE INDEX triage_runs_seq ON triage_runs (project_id, seq);

-- +goose Down
DROP TABLE triage_runs;
ALTER TABLE decisions DROP COLUMN amendment;
