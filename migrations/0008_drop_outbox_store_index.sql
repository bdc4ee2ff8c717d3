-- +goose Up
-- Nothing in the service reads the outbox by store (the dispatcher reads it
-- by dispatched_at); the index only cost every event write, three per
-- imported product counting the SKU index row (docs/benchmarks.md).
DROP INDEX outbox_store_idx;

-- +goose Down
CREATE INDEX outbox_store_idx ON outbox (store_id, created_at);
