-- +goose Up
-- Approval key ids are unique per workspace, not across all of them: with
-- the id alone as the key, a second tenant registering the same public key
-- was refused, which told it that the key exists elsewhere and let it
-- block the owner's registration. The key becomes (workspace_id, id) and
-- approvals reference their key within their own workspace.
ALTER TABLE approvals DROP CONSTRAINT approvals_key_id_fkey;
ALTER TABLE approver_keys DROP CONSTRAINT approver_keys_pkey;
ALTER TABLE approver_keys ADD PRIMARY KEY (workspace_id, id);
ALTER TABLE approvals ADD CONSTRAINT approvals_key_fkey
    FOREIGN KEY (workspace_id, key_id) REFERENCES approver_keys (workspace_id, id);
-- Revoking a key or disabling a person voids their approvals that still
-- count, found by key and by approver.
CREATE INDEX approvals_key ON approvals (workspace_id, key_id, status);
CREATE INDEX approvals_approver ON approvals (workspace_id, approver_id, status);

-- +goose Down
-- Going back needs every key id to be unique again: it fails while two
-- workspaces hold the same key.
DROP INDEX approvals_approver;
DROP INDEX approvals_key;
ALTER TABLE approvals DROP CONSTRAINT approvals_key_fkey;
ALTER TABLE approver_keys DROP CONSTRAINT approver_keys_pkey;
ALTER TABLE approver_keys ADD PRIMARY KEY (id);
ALTER TABLE approvals ADD CONSTRAINT approvals_key_id_fkey FOREIGN KEY (key_id) REFERENCES approver_keys (id);
