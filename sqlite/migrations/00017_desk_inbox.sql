-- +goose Up
-- The desk's "Needs me" reads a workspace's cases in the few states a
-- person acts in, newest first: by state, then id, without a scan of
-- every case.
CREATE INDEX cases_state ON cases (workspace_id, state, id);

-- +goose Down
DROP INDEX cases_state;
