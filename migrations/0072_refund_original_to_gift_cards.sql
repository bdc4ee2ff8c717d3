-- +goose Up
-- An `original` refund gives the card-paid part of an order back to the gift
-- cards that paid it (decisions §19): each gift_card payment keeps what has
-- gone back to its card, so a later cancel reverses only the rest, and each
-- refund keeps the part it credited to cards, so a gateway refund asks the
-- gateway for the remainder alone.
ALTER TABLE order_payments ADD COLUMN refunded bigint NOT NULL DEFAULT 0,
    ADD CONSTRAINT order_payments_refunded_check CHECK (refunded >= 0 AND (refunded = 0 OR (source = 'gift_card' AND refunded <= amount)));
ALTER TABLE order_refunds ADD COLUMN gift_card_amount bigint NOT NULL DEFAULT 0,
    ADD CONSTRAINT order_refunds_gift_card_amount_check CHECK (gift_card_amount >= 0 AND gift_card_amount <= amount);

-- +goose Down
ALTER TABLE order_refunds DROP COLUMN gift_card_amount;
ALTER TABLE order_payments DROP COLUMN refunded;
