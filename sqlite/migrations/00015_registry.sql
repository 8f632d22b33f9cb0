-- +goose Up
-- The registry: one chain for the whole database recording which workspace
-- chains must exist, each entry binding a workspace to the hash of its
-- first event. Without it, deleting a workspace's rows everywhere leaves
-- nothing for ledger verify to miss.
CREATE TABLE ledger_registry (
    seq           INTEGER PRIMARY KEY,
    workspace_id  TEXT NOT NULL UNIQUE,
    genesis_hash  TEXT NOT NULL,
    registered_at INTEGER NOT NULL,
    prev_hash     TEXT NOT NULL,
    hash          TEXT NOT NULL
);

-- The signed end of the registry (one row), moved on every registration.
-- The row starts unsigned: the first process that opens the database with
-- the server key registers the workspaces that already exist and signs it.
CREATE TABLE ledger_registry_head (
    id        INTEGER PRIMARY KEY CHECK (id = 1),
    seq       INTEGER NOT NULL,
    hash      TEXT NOT NULL,
    key_id    TEXT NOT NULL,
    signed_at INTEGER NOT NULL,
    signature BLOB NOT NULL
);
INSERT INTO ledger_registry_head (id, seq, hash, key_id, signed_at, signature)
VALUES (1, 0, '0000000000000000000000000000000000000000000000000000000000000000', '', 0, X'');

-- Append-only like the events; the head is refused deletion so that an
-- accident cannot leave the registry without its signed end.
-- +goose StatementBegin
CREATE TRIGGER ledger_registry_no_update BEFORE UPDATE ON ledger_registry
BEGIN
    SELECT RAISE(ABORT, 'ledger_registry is append-only');
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER ledger_registry_no_delete BEFORE DELETE ON ledger_registry
BEGIN
    SELECT RAISE(ABORT, 'ledger_registry is append-only');
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER ledger_registry_head_no_delete BEFORE DELETE ON ledger_registry_head
BEGIN
    SELECT RAISE(ABORT, 'ledger_registry_head is append-only');
END;
-- +goose StatementEnd

-- +goose Down
DROP TABLE ledger_registry_head;
DROP TABLE ledger_registry;
