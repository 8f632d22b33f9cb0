-- +goose Up
-- Web UI sessions. The cookie holds a random secret; only its SHA-256 is
-- stored, so a copy of the database signs no one in. A session ends at
-- expires_at, when its row is deleted (sign-out), and, for one opened with
-- an API token (token_id), when that token is revoked or expires.
CREATE TABLE web_sessions (
    secret_sha256 TEXT PRIMARY KEY,
    workspace_id  TEXT NOT NULL REFERENCES workspaces (id),
    actor_id      TEXT NOT NULL REFERENCES actors (id),
    token_id      TEXT NOT NULL,
    csrf          TEXT NOT NULL,
    created_at    BIGINT NOT NULL,
    expires_at    BIGINT NOT NULL
);
CREATE INDEX web_sessions_expiry ON web_sessions (expires_at);

-- One-time sign-in links (signoff login-link): stored hashed, valid until
-- expires_at, used once (used_at).
CREATE TABLE web_login_links (
    code_sha256  TEXT PRIMARY KEY,
    workspace_id TEXT NOT NULL REFERENCES workspaces (id),
    actor_id     TEXT NOT NULL REFERENCES actors (id),
    created_at   BIGINT NOT NULL,
    expires_at   BIGINT NOT NULL,
    used_at      BIGINT
);

-- +goose Down
DROP TABLE web_login_links;
DROP TABLE web_sessions;
