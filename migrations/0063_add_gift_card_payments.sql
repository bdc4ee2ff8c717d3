-- +goose Up
-- Gift cards pay orders (decisions §19): each card a checkout debits is an
-- order_payments row of source gift_card naming its card; an order the
-- cards cover whole is paid by gift_card; a cart keeps the ids of the
-- cards its buyer applied (never their codes), in the order given.
ALTER TABLE order_payments ADD COLUMN gift_card_id uuid,
    DROP CONSTRAINT order_payments_source_check,
    ADD CONSTRAINT order_payments_source_check
        CHECK (source IN ('mark_paid', 'recorded', 'proof', 'partial_acceptance', 'gateway', 'cod', 'gift_card')),
    ADD CONSTRAINT order_payments_gift_card_check CHECK ((source = 'gift_card') = (gift_card_id IS NOT NULL)),
    ADD CONSTRAINT order_payments_gift_card_fkey FOREIGN KEY (store_id, gift_card_id) REFERENCES gift_cards (store_id, id);
CREATE INDEX order_payments_gift_card_idx ON order_payments (store_id, gift_card_id) WHERE gift_card_id IS NOT NULL;
ALTER TABLE orders DROP CONSTRAINT orders_payment_method_check,
    ADD CONSTRAINT orders_payment_method_check
        CHECK (payment_method IN ('cod', 'card', 'instapay', 'mobile_wallet', 'bank_transfer', 'gift_card'));
ALTER TABLE carts ADD COLUMN gift_card_ids uuid[] NOT NULL DEFAULT '{}';
-- A draft checks its cards and keeps their ids; its conversion debits them.
ALTER TABLE orders ADD COLUMN gift_card_ids uuid[] NOT NULL DEFAULT '{}';

-- +goose Down
ALTER TABLE carts DROP COLUMN gift_card_ids;
ALTER TABLE orders DROP COLUMN gift_card_ids;
DELETE FROM order_payments WHERE source = 'gift_card';
UPDATE orders SET payment_method = 'cod' WHERE payment_method = 'gift_card';
ALTER TABLE orders DROP CONSTRAINT orders_payment_method_check,
    ADD CONSTRAINT orders_payment_method_check
        CHECK (payment_method IN ('cod', 'card', 'instapay', 'mobile_wallet', 'bank_transfer'));
DROP INDEX order_payments_gift_card_idx;
ALTER TABLE order_payments DROP CONSTRAINT order_payments_gift_card_fkey,
    DROP CONSTRAINT order_payments_gift_card_check,
    DROP CONSTRAINT order_payments_source_check,
    ADD CONSTRAINT order_payments_source_check CHECK (source IN ('mark_paid', 'recorded', 'proof', 'partial_acceptance', 'gateway', 'cod')),
    DROP COLUMN gift_card_id;
