-- +goose Up
-- The evidence bundle of each verified candidate (a gzip'd tar of the
-- in-toto statements, the harness, its test files and the raw output of
-- every run), kept in the store so any instance can export it.
CREATE TABLE evidence_bundles (
    candidate_id TEXT PRIMARY KEY,
    workspace_id TEXT NOT NULL REFERENCES workspaces (id),
    case_id      TEXT NOT NULL REFERENCES cases (id),
    digest       TEXT NOT NULL,
    archive      BYTEA NOT NULL,
    created_at   BIGINT NOT NULL
);
CREATE INDEX evidence_bundles_case ON evidence_bundles (workspace_id, case_id);

-- +goose Down
DROP TABLE evidence_bundles;
