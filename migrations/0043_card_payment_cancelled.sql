-- +goose Up
-- A card payment closed unpaid because its order no longer waits on it:
-- the merchant cancelled the order (the payment is closed at the gateway at
-- once), or it was paid some other way (decisions, "A merchant's cancel of
-- a card order").
ALTER TABLE card_payments DROP CONSTRAINT card_payments_status_check,
    ADD CONSTRAINT card_payments_status_check CHECK (status IN ('open', 'succeeded', 'expired', 'mismatched', 'refunded_late', 'cancelled'));

-- +goose Down
UPDATE card_payments SET status = 'expired' WHERE status = 'cancelled';
ALTER TABLE card_payments DROP CONSTRAINT card_payments_status_check,
    ADD CONSTRAINT card_payments_status_check CHECK (status IN ('open', 'succeeded', 'expired', 'mismatched', 'refunded_late'));
