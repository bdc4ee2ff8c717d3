-- +goose Up
-- A delivery is made from its outbox event, in the transaction that marks
-- the event dispatched, and outbox events are never deleted; the foreign
-- key checked, on every delivery written, that the event it was made from
-- exists. The unique (outbox_id, subscription_id) that makes a claim
-- idempotent stays.
ALTER TABLE webhook_deliveries DROP CONSTRAINT webhook_deliveries_outbox_id_fkey;

-- +goose Down
ALTER TABLE webhook_deliveries ADD FOREIGN KEY (outbox_id) REFERENCES outbox (id) ON DELETE SET NULL;
