-- +goose Up
CREATE TABLE customers (
    id         uuid PRIMARY KEY,
    store_id   uuid NOT NULL REFERENCES stores (id) ON DELETE CASCADE,
    name       text NOT NULL,
    email      citext,
    phone      text,
    addresses  jsonb NOT NULL DEFAULT '[]',
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE (store_id, id)
);
CREATE UNIQUE INDEX customers_store_email_idx ON customers (store_id, email) WHERE email IS NOT NULL;
CREATE UNIQUE INDEX customers_store_phone_idx ON customers (store_id, phone) WHERE phone IS NOT NULL;
CREATE INDEX customers_store_created_idx ON customers (store_id, created_at, id);

-- Per-store order numbers: the counter row is updated in the order's own
-- transaction, so a rolled-back order gives its number back (no gaps), and
-- concurrent orders queue on the row (no duplicates).
CREATE TABLE order_counters (
    store_id    uuid PRIMARY KEY REFERENCES stores (id) ON DELETE CASCADE,
    last_number bigint NOT NULL
);

CREATE TABLE orders (
    id                 uuid PRIMARY KEY,
    store_id           uuid NOT NULL REFERENCES stores (id) ON DELETE CASCADE,
    order_number       text NOT NULL,
    status             text NOT NULL CHECK (status IN ('DRAFT', 'PENDING', 'CONFIRMED', 'PROCESSING', 'READY_TO_SHIP',
                                                        'SHIPPED', 'DELIVERED', 'RETURNED', 'CANCELLED')),
    payment_status     text NOT NULL DEFAULT 'pending' CHECK (payment_status IN ('pending', 'awaiting_review', 'partially_paid',
                                                        'paid', 'partially_refunded', 'refunded')),
    fulfillment_status text NOT NULL DEFAULT 'unfulfilled' CHECK (fulfillment_status IN ('unfulfilled', 'in_transit',
                                                        'delivered', 'partially_delivered', 'returned')),
    payment_method     text NOT NULL CHECK (payment_method IN ('cod', 'card', 'instapay', 'mobile_wallet', 'bank_transfer')),
    currency           text NOT NULL,
    customer_id        uuid,
    customer           jsonb NOT NULL,
    shipping_address   jsonb NOT NULL,
    subtotal           bigint NOT NULL,
    shipping_fee       bigint NOT NULL DEFAULT 0,
    discount           bigint NOT NULL DEFAULT 0,
    total              bigint NOT NULL,
    paid_total         bigint NOT NULL DEFAULT 0,
    collectible_total  bigint NOT NULL,
    collected_total    bigint NOT NULL DEFAULT 0,
    refund_due         bigint NOT NULL DEFAULT 0,
    tracking_number    text,
    notes              text NOT NULL DEFAULT '',
    cancel_reason      text,
    search_text        text NOT NULL DEFAULT '',
    created_at         timestamptz NOT NULL DEFAULT now(),
    updated_at         timestamptz NOT NULL DEFAULT now(),
    UNIQUE (store_id, id),
    UNIQUE (store_id, order_number),
    FOREIGN KEY (store_id, customer_id) REFERENCES customers (store_id, id) ON DELETE SET NULL (customer_id)
);
-- The list and the counts: newest first within a store, drafts excluded,
-- narrowed by status or date.
CREATE INDEX orders_store_created_idx ON orders (store_id, created_at DESC, id DESC) WHERE status <> 'DRAFT';
CREATE INDEX orders_store_status_created_idx ON orders (store_id, status, created_at DESC) WHERE status <> 'DRAFT';
CREATE INDEX orders_store_customer_idx ON orders (store_id, customer_id, created_at DESC);

CREATE TABLE order_lines (
    id                uuid PRIMARY KEY,
    store_id          uuid NOT NULL,
    order_id          uuid NOT NULL,
    variant_id        uuid,
    product_id        uuid,
    name              text NOT NULL,
    sku               text,
    quantity          int NOT NULL CHECK (quantity > 0),
    unit_price        bigint NOT NULL,
    total             bigint NOT NULL,
    returned_quantity int NOT NULL DEFAULT 0,
    position          int NOT NULL,
    FOREIGN KEY (store_id, order_id) REFERENCES orders (store_id, id) ON DELETE CASCADE
);
CREATE INDEX order_lines_order_idx ON order_lines (store_id, order_id, position);

-- Staff comments and system events, newest first.
CREATE TABLE order_activities (
    id             uuid PRIMARY KEY,
    store_id       uuid NOT NULL,
    order_id       uuid NOT NULL,
    kind           text NOT NULL,
    body           text NOT NULL DEFAULT '',
    data           jsonb NOT NULL DEFAULT '{}',
    author_user_id uuid,
    created_at     timestamptz NOT NULL DEFAULT now(),
    FOREIGN KEY (store_id, order_id) REFERENCES orders (store_id, id) ON DELETE CASCADE
);
CREATE INDEX order_activities_order_idx ON order_activities (store_id, order_id, created_at DESC, id DESC);

-- +goose Down
DROP TABLE order_activities;
DROP TABLE order_lines;
DROP TABLE orders;
DROP TABLE order_counters;
DROP TABLE customers;
