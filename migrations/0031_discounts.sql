-- +goose Up
-- Discounts (decisions §14): codes and automatic offers, their usage
-- counted in the order's transaction, per discount and per customer.
CREATE TABLE discounts (
    id                       uuid PRIMARY KEY,
    store_id                 uuid NOT NULL REFERENCES stores (id) ON DELETE CASCADE,
    method                   text NOT NULL CHECK (method IN ('code', 'automatic')),
    code                     text,
    code_key                 text, -- normalised: trimmed, NFKC, case-folded, ASCII digits
    title                    text NOT NULL,
    type                     text NOT NULL CHECK (type IN ('percentage', 'fixed_amount', 'free_shipping')),
    value                    bigint,
    max_discount             bigint,
    include_cod_fee          boolean NOT NULL DEFAULT false,
    scope                    text NOT NULL DEFAULT 'order' CHECK (scope IN ('order', 'products', 'categories')),
    product_ids              uuid[] NOT NULL DEFAULT '{}',
    category_ids             uuid[] NOT NULL DEFAULT '{}',
    min_subtotal             bigint,
    starts_at                timestamptz,
    ends_at                  timestamptz,
    usage_limit              integer,
    usage_limit_per_customer integer,
    combines_with_automatic  boolean NOT NULL DEFAULT true,
    enabled                  boolean NOT NULL DEFAULT true,
    times_used               integer NOT NULL DEFAULT 0 CHECK (times_used >= 0),
    deleted_at               timestamptz,
    created_at               timestamptz NOT NULL DEFAULT now(),
    updated_at               timestamptz NOT NULL DEFAULT now(),
    UNIQUE (store_id, id),
    CHECK ((method = 'code') = (code_key IS NOT NULL))
);
-- A live code is unique per store once normalised; deleting frees it.
CREATE UNIQUE INDEX discounts_code_key_idx ON discounts (store_id, code_key) WHERE deleted_at IS NULL AND code_key IS NOT NULL;
CREATE INDEX discounts_store_idx ON discounts (store_id, created_at DESC) WHERE deleted_at IS NULL;

-- Per-customer usage, counted by the same conditional upsert.
CREATE TABLE discount_customer_usage (
    store_id    uuid NOT NULL,
    discount_id uuid NOT NULL,
    customer_id uuid NOT NULL,
    times_used  integer NOT NULL DEFAULT 0 CHECK (times_used >= 0),
    PRIMARY KEY (discount_id, customer_id),
    FOREIGN KEY (store_id, discount_id) REFERENCES discounts (store_id, id) ON DELETE CASCADE
);

-- Each order's use of a discount: counted, or released by a cancel.
CREATE TABLE discount_redemptions (
    id          uuid PRIMARY KEY,
    store_id    uuid NOT NULL,
    discount_id uuid NOT NULL,
    order_id    uuid NOT NULL,
    customer_id uuid,
    amount      bigint NOT NULL,
    status      text NOT NULL DEFAULT 'counted' CHECK (status IN ('counted', 'released')),
    created_at  timestamptz NOT NULL DEFAULT now(),
    released_at timestamptz,
    UNIQUE (discount_id, order_id),
    FOREIGN KEY (store_id, discount_id) REFERENCES discounts (store_id, id) ON DELETE CASCADE,
    FOREIGN KEY (store_id, order_id) REFERENCES orders (store_id, id) ON DELETE CASCADE
);
CREATE INDEX discount_redemptions_discount_idx ON discount_redemptions (store_id, discount_id, created_at DESC);
CREATE INDEX discount_redemptions_order_idx ON discount_redemptions (store_id, order_id);

-- Orders keep each line's discount and the discounts applied.
ALTER TABLE order_lines ADD COLUMN discount bigint NOT NULL DEFAULT 0 CHECK (discount >= 0);
ALTER TABLE orders ADD COLUMN discounts jsonb NOT NULL DEFAULT '[]';

-- +goose Down
ALTER TABLE orders DROP COLUMN discounts;
ALTER TABLE order_lines DROP COLUMN discount;
DROP TABLE discount_redemptions;
DROP TABLE discount_customer_usage;
DROP TABLE discounts;
