-- +goose Up
-- Storefront carts, which are also the abandoned checkouts (decisions §10:
-- the checkout id is the cart id).
ALTER TABLE stores
    ADD COLUMN abandonment_threshold_minutes int NOT NULL DEFAULT 60
        CHECK (abandonment_threshold_minutes BETWEEN 5 AND 2880);

CREATE TABLE carts (
    id                     uuid PRIMARY KEY,
    store_id               uuid NOT NULL REFERENCES stores (id) ON DELETE CASCADE,
    currency               text NOT NULL,
    status                 text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'abandoned', 'recovered', 'checked_out')),
    email                  citext,
    phone                  text,
    -- What the lines are worth at the current prices, and how many pieces,
    -- kept with every change (and kept after checkout, when the lines go).
    subtotal               bigint NOT NULL DEFAULT 0,
    item_count             int NOT NULL DEFAULT 0,
    last_activity_at       timestamptz NOT NULL,
    abandoned_at           timestamptz,
    recovered_at           timestamptz,
    recovery_source        text CHECK (recovery_source IN ('order', 'manual')),
    recovery_note          text,
    recovery_email_sent_at timestamptz,
    order_id               uuid,
    checked_out_at         timestamptz,
    created_at             timestamptz NOT NULL,
    updated_at             timestamptz NOT NULL,
    UNIQUE (store_id, id)
);
-- The sweep and the lazy marking: active carts with lines, by inactivity.
CREATE INDEX carts_active_idx ON carts (store_id, last_activity_at) WHERE status = 'active' AND item_count > 0;
-- The merchant's list and summary.
CREATE INDEX carts_abandoned_idx ON carts (store_id, abandoned_at DESC, id DESC) WHERE abandoned_at IS NOT NULL;

-- A buyer's key to a cart (the one from POST /carts, and the ones in
-- recovery emails); only the SHA-256 is kept.
CREATE TABLE cart_tokens (
    token_hash bytea PRIMARY KEY,
    store_id   uuid NOT NULL,
    cart_id    uuid NOT NULL,
    kind       text NOT NULL CHECK (kind IN ('buyer', 'recovery')),
    created_at timestamptz NOT NULL,
    FOREIGN KEY (store_id, cart_id) REFERENCES carts (store_id, id) ON DELETE CASCADE
);

-- Lines of carts still open. The variant key has no ON DELETE: a variant in
-- an open cart cannot be deleted (409 VARIANT_IN_USE). Lines are removed
-- when the cart is checked out or recovered.
CREATE TABLE cart_lines (
    store_id   uuid NOT NULL,
    cart_id    uuid NOT NULL,
    variant_id uuid NOT NULL,
    quantity   int NOT NULL CHECK (quantity BETWEEN 1 AND 10000),
    position   int NOT NULL,
    PRIMARY KEY (cart_id, variant_id),
    FOREIGN KEY (store_id, cart_id) REFERENCES carts (store_id, id) ON DELETE CASCADE,
    FOREIGN KEY (store_id, variant_id) REFERENCES variants (store_id, id)
);
CREATE INDEX cart_lines_variant_idx ON cart_lines (store_id, variant_id);

-- +goose Down
DROP TABLE cart_lines;
DROP TABLE cart_tokens;
DROP TABLE carts;
ALTER TABLE stores DROP COLUMN abandonment_threshold_minutes;
