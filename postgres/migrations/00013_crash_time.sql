-- +goose Up
-- The charts read a project's crash events by time: the newest one, and
-- those of the window before it.
CREATE INDEX crash_events_time ON crash_events (project_id, occurred_at);

-- +goose Down
DROP INDEX crash_events_time;
