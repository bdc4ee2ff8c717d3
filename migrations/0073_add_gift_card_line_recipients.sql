-- +goose Up
-- A gift card line names whom its cards are for (decisions §19: "sent to the
-- line's recipient"): the cart line keeps the buyer's choice and the order
-- line snapshots it; null sends the cards to the order's customer.
ALTER TABLE cart_lines ADD COLUMN recipient jsonb;
ALTER TABLE order_lines ADD COLUMN gift_card_recipient jsonb;

-- +goose Down
ALTER TABLE order_lines DROP COLUMN gift_card_recipient;
ALTER TABLE cart_lines DROP COLUMN recipient;
