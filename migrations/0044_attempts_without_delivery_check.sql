-- +goose Up
-- An attempt is written only by the transaction that updates its delivery
-- (the batch writes both in one statement, the attempt's row from the
-- delivery's updated row), and that update holds the delivery's row lock
-- until commit, so the attempt's foreign key check repeated, once per
-- attempt, what the update had just established: about half the cost of
-- logging a first attempt (docs/decisions.md, "Webhook rows without
-- per-row checks"). What the key also did, taking the attempts with their
-- delivery, is one statement-level trigger: it runs once per delete of
-- deliveries (a subscription's, when it or its app is deleted) and reads
-- with a snapshot taken after the delete waited on any attempt being
-- written.
ALTER TABLE webhook_attempts DROP CONSTRAINT webhook_attempts_delivery_id_fkey;

-- +goose StatementBegin
CREATE FUNCTION webhook_deliveries_take_attempts() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM webhook_attempts a USING gone d WHERE a.delivery_id = d.id;
    RETURN NULL;
END;
$$;
-- +goose StatementEnd
CREATE TRIGGER webhook_deliveries_take_attempts AFTER DELETE ON webhook_deliveries
    REFERENCING OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION webhook_deliveries_take_attempts();

-- +goose Down
DROP TRIGGER webhook_deliveries_take_attempts ON webhook_deliveries;
DROP FUNCTION webhook_deliveries_take_attempts();
DELETE FROM webhook_attempts a WHERE NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.id = a.delivery_id);
ALTER TABLE webhook_attempts ADD FOREIGN KEY (delivery_id) REFERENCES webhook_deliveries (id) ON DELETE CASCADE;
