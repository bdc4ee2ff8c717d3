-- +goose Up
-- When a carrier confirmed an order's outcome (delivered or returned). Only
-- such outcomes count in other stores' COD trust checks: a merchant moving
-- its own orders to RETURNED speaks only for its own store. The carrier
-- callbacks of the fulfillment domain set it.
ALTER TABLE orders ADD COLUMN carrier_confirmed_at timestamptz;

-- +goose Down
ALTER TABLE orders DROP COLUMN carrier_confirmed_at;
