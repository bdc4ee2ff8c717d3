-- +goose Up
-- A webhook batch belongs to one store (issue 18): its dispatch workflow
-- carries the store's id as a search attribute, and one store's slow
-- receivers no longer share an activity with another store's deliveries.
-- Batches written before stay without a store; they are finished or swept.
ALTER TABLE webhook_batches ADD COLUMN store_id uuid;

-- The deliveries page shows each delivery's last attempt; the attempts were
-- only indexed by subscription.
CREATE INDEX webhook_attempts_delivery_idx ON webhook_attempts (delivery_id, attempted_at DESC);

-- +goose Down
DROP INDEX webhook_attempts_delivery_idx;
ALTER TABLE webhook_batches DROP COLUMN store_id;
