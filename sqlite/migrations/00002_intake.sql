-- +goose Up
-- Reporter text: the first report of a case and every later answer. The
-- original is kept for owners only; everyone else reads the dossier.
CREATE TABLE reporter_texts (
    id           TEXT PRIMARY KEY,
    workspace_id TEXT NOT NULL REFERENCES workspaces (id),
    case_id      TEXT NOT NULL REFERENCES cases (id),
    kind         TEXT NOT NULL,
    original     TEXT NOT NULL,
    contact      TEXT NOT NULL,
    dossier      TEXT NOT NULL,
    metadata     TEXT NOT NULL,
    created_at   INTEGER NOT NULL
);
CREATE INDEX reporter_texts_case ON reporter_texts (workspace_id, case_id, id);

-- Tracking links: a capability bound to one case. Only the SHA-256 of the
-- secret is stored.
CREATE TABLE tracking_links (
    id            TEXT PRIMARY KEY,
    workspace_id  TEXT NOT NULL REFERENCES workspaces (id),
    case_id       TEXT NOT NULL REFERENCES cases (id),
    secret_sha256 BLOB NOT NULL,
    created_at    INTEGER NOT NULL,
    revoked_at    INTEGER
);

-- +goose Down
DROP TABLE tracking_links;
DROP TABLE reporter_texts;
