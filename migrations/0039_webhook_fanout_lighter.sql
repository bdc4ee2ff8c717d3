-- +goose Up
-- A delivery is written once by the dispatcher and updated once by its
-- first attempt. Inserted rows filled their pages, so that update could
-- not stay on the page (HOT) and wrote every index of the table again;
-- room on each page keeps it there. It applies to pages written from now.
ALTER TABLE webhook_deliveries SET (fillfactor = 80);
-- An attempt belongs to its delivery, which belongs to its subscription
-- and goes with it (ON DELETE CASCADE on both); the attempt's own check
-- against the subscription repeated, on every insert, what its delivery's
-- already holds.
ALTER TABLE webhook_attempts DROP CONSTRAINT webhook_attempts_store_id_subscription_id_fkey;

-- +goose Down
ALTER TABLE webhook_attempts ADD FOREIGN KEY (store_id, subscription_id) REFERENCES webhook_subscriptions (store_id, id) ON DELETE CASCADE;
ALTER TABLE webhook_deliveries RESET (fillfactor);
