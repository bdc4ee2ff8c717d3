-- +goose Up
-- Dispatched outbox events are kept 30 days, as their deliveries are
-- (migration 0047; docs/decisions.md, "Webhook delivery retention"); the
-- hourly purge finds the old ones by their time through a block-range
-- index, which costs an event's insert and its dispatch mark next to
-- nothing.
CREATE INDEX outbox_created_brin ON outbox USING brin (created_at);

-- +goose Down
DROP INDEX outbox_created_brin;
