-- +goose Up
-- Storefront abuse limits (README "Limits"): how many pieces one cart line
-- and one storefront order may hold, per store.
ALTER TABLE stores
    ADD COLUMN max_line_quantity int NOT NULL DEFAULT 50 CHECK (max_line_quantity BETWEEN 1 AND 100000),
    ADD COLUMN max_order_quantity int NOT NULL DEFAULT 200 CHECK (max_order_quantity BETWEEN 1 AND 1000000);

-- When a store last sent an automatic confirmation to a contact (a hashed
-- email or phone) on a channel: confirmations go once per contact per
-- interval, so a buyer cannot make a store message someone over and over.
CREATE TABLE contact_sends (
    store_id     uuid NOT NULL REFERENCES stores (id) ON DELETE CASCADE,
    channel      text NOT NULL,
    contact_hash bytea NOT NULL,
    last_sent_at timestamptz NOT NULL,
    order_id     uuid NOT NULL, -- whose confirmation claimed it (its retries may send)
    PRIMARY KEY (store_id, channel, contact_hash)
);

-- +goose Down
DROP TABLE contact_sends;
ALTER TABLE stores DROP COLUMN max_line_quantity, DROP COLUMN max_order_quantity;
