-- +goose Up
-- The event stream (GET /api/v1/events) filters in SQL: a reporter's
-- stream reads the cases they reported, an agent's the cases it has a task
-- on, and then ledger_events_case per case. Both lookups are index-only.
CREATE INDEX cases_reporter ON cases (workspace_id, reporter_id, id);
CREATE INDEX tasks_assignee_case ON tasks (workspace_id, assignee_id, case_id);

-- +goose Down
DROP INDEX tasks_assignee_case;
DROP INDEX cases_reporter;
