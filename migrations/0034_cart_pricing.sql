-- +goose Up
-- Carts keep what they are priced with (decisions §14, §15): the buyer's
-- discount code, where they ship to (country, region, city), the rate they
-- picked and how they mean to pay. Prices are computed on every read.
ALTER TABLE carts
    ADD COLUMN discount_code text,
    ADD COLUMN ship_to jsonb,
    ADD COLUMN shipping_rate_id uuid,
    ADD COLUMN payment_method text;

-- +goose Down
ALTER TABLE carts DROP COLUMN discount_code, DROP COLUMN ship_to, DROP COLUMN shipping_rate_id, DROP COLUMN payment_method;
