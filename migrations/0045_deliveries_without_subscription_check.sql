-- +goose Up
-- A delivery is written by a statement that reads its subscription and
-- locks it (FOR KEY SHARE) once, for all of the statement's deliveries:
-- the dispatcher's claim of a round of the outbox, or a ping. The foreign
-- key checked and locked the same row once per delivery, about a third of
-- the cost of writing one (docs/decisions.md, "Webhook rows without
-- per-row checks"). What the key also did, taking a subscription's
-- deliveries with it, is one statement-level trigger; their attempts go
-- with them (migration 0044). The lock makes a delete of the subscription
-- wait for the writer's commit, so the trigger's read sees what it wrote.
ALTER TABLE webhook_deliveries DROP CONSTRAINT webhook_deliveries_store_id_subscription_id_fkey;

-- +goose StatementBegin
CREATE FUNCTION webhook_subscriptions_take_deliveries() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM webhook_deliveries d USING gone s WHERE d.store_id = s.store_id AND d.subscription_id = s.id;
    RETURN NULL;
END;
$$;
-- +goose StatementEnd
CREATE TRIGGER webhook_subscriptions_take_deliveries AFTER DELETE ON webhook_subscriptions
    REFERENCING OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION webhook_subscriptions_take_deliveries();

-- +goose Down
DROP TRIGGER webhook_subscriptions_take_deliveries ON webhook_subscriptions;
DROP FUNCTION webhook_subscriptions_take_deliveries();
DELETE FROM webhook_deliveries d WHERE NOT EXISTS (SELECT 1 FROM webhook_subscriptions s WHERE s.store_id = d.store_id AND s.id = d.subscription_id);
ALTER TABLE webhook_deliveries ADD FOREIGN KEY (store_id, subscription_id) REFERENCES webhook_subscriptions (store_id, id) ON DELETE CASCADE;
