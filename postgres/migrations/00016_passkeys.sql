-- +goose Up
-- Passkeys (WebAuthn credentials) registered as approval keys. The key
-- itself is a row of approver_keys (kind told by its PEM type, SIGNOFF
-- WEBAUTHN CREDENTIAL), so approvals reference it, revoking it voids them
-- and the ledger, the gate and evidence bundles carry it like an Ed25519
-- key. This table holds what only a WebAuthn credential has: its id (to
-- ask the authenticator for it) and the signature counter, which only
-- ever goes up (a clone check), and the exact origin it was registered
-- on: WebAuthn scopes a passkey to a host name, not a port, so a page on
-- another port of the same host could have it sign; approvals are taken
-- only from the registered origin.
CREATE TABLE passkeys (
    workspace_id  TEXT NOT NULL,
    key_id        TEXT NOT NULL,
    actor_id      TEXT NOT NULL REFERENCES actors (id),
    credential_id TEXT NOT NULL,
    rp_id         TEXT NOT NULL,
    origin        TEXT NOT NULL,
    sign_count    BIGINT NOT NULL,
    created_at    BIGINT NOT NULL,
    PRIMARY KEY (workspace_id, key_id),
    FOREIGN KEY (workspace_id, key_id) REFERENCES approver_keys (workspace_id, id)
);
-- One credential is one person's in a workspace.
CREATE UNIQUE INDEX passkeys_credential ON passkeys (workspace_id, credential_id);
CREATE INDEX passkeys_actor ON passkeys (workspace_id, actor_id);

-- +goose Down
DROP TABLE passkeys;
