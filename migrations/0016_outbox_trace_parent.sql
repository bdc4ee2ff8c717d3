-- +goose Up
-- The W3C traceparent of the request (or activity) that wrote an event, so
-- the webhook dispatch that sends it links to that trace.
ALTER TABLE outbox ADD COLUMN trace_parent text;

-- +goose Down
ALTER TABLE outbox DROP COLUMN trace_parent;
