-- +goose Up
-- Merchant switches for what happens after an order is placed.
ALTER TABLE stores
    ADD COLUMN auto_create_shipment   boolean NOT NULL DEFAULT false,
    ADD COLUMN chat_confirmations     boolean NOT NULL DEFAULT true,
    ADD COLUMN confirm_in_chat        boolean NOT NULL DEFAULT false,
    ADD COLUMN chat_templates_approved text[] NOT NULL DEFAULT ARRAY['order_confirmation', 'order_confirmation_request'];

ALTER TABLE customers ADD COLUMN chat_opt_out boolean NOT NULL DEFAULT false;

-- The COD trust check reads the platform's own history of a phone across
-- stores; only the score leaves the query, never another store's order.
ALTER TABLE orders ADD COLUMN customer_phone text;
CREATE INDEX orders_cod_phone_idx ON orders (customer_phone, status) WHERE payment_method = 'cod';

-- Orders that need a person: high COD risk, or a side effect that failed.
CREATE TABLE autopilot_exceptions (
    id          uuid PRIMARY KEY,
    store_id    uuid NOT NULL,
    order_id    uuid NOT NULL,
    reason      text NOT NULL,
    message     text NOT NULL,
    message_ar  text NOT NULL,
    data        jsonb NOT NULL DEFAULT '{}',
    status      text NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'resolved')),
    created_at  timestamptz NOT NULL DEFAULT now(),
    resolved_at timestamptz,
    FOREIGN KEY (store_id, order_id) REFERENCES orders (store_id, id) ON DELETE CASCADE
);
CREATE INDEX autopilot_exceptions_open_idx ON autopilot_exceptions (store_id, created_at DESC) WHERE status = 'open';
CREATE UNIQUE INDEX autopilot_exceptions_order_reason_idx ON autopilot_exceptions (order_id, reason) WHERE status = 'open';

-- Each side effect of a placed order, recorded once (the unique pair makes
-- a retried or repeated workflow skip what is done).
CREATE TABLE order_side_effects (
    store_id   uuid NOT NULL,
    order_id   uuid NOT NULL,
    kind       text NOT NULL CHECK (kind IN ('email', 'chat', 'shipment', 'rollup')),
    status     text NOT NULL CHECK (status IN ('succeeded', 'skipped', 'failed')),
    detail     jsonb NOT NULL DEFAULT '{}',
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (order_id, kind),
    FOREIGN KEY (store_id, order_id) REFERENCES orders (store_id, id) ON DELETE CASCADE
);

CREATE TABLE shipments (
    id         uuid PRIMARY KEY,
    store_id   uuid NOT NULL,
    order_id   uuid NOT NULL UNIQUE,
    status     text NOT NULL DEFAULT 'created',
    created_at timestamptz NOT NULL DEFAULT now(),
    FOREIGN KEY (store_id, order_id) REFERENCES orders (store_id, id) ON DELETE CASCADE
);

-- Daily figures for the dashboard, one row per store and day (UTC).
CREATE TABLE order_rollups (
    store_id uuid NOT NULL REFERENCES stores (id) ON DELETE CASCADE,
    day      date NOT NULL,
    orders   int NOT NULL DEFAULT 0,
    revenue  bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (store_id, day)
);

CREATE TABLE chat_messages (
    id                  uuid PRIMARY KEY,
    store_id            uuid NOT NULL,
    order_id            uuid NOT NULL,
    template            text NOT NULL,
    to_phone            text NOT NULL,
    status              text NOT NULL CHECK (status IN ('queued', 'sent', 'delivered', 'read', 'failed')),
    error_code          int,
    error_message       text,
    provider_message_id text UNIQUE,
    created_at          timestamptz NOT NULL DEFAULT now(),
    updated_at          timestamptz NOT NULL DEFAULT now(),
    FOREIGN KEY (store_id, order_id) REFERENCES orders (store_id, id) ON DELETE CASCADE
);
CREATE INDEX chat_messages_order_idx ON chat_messages (store_id, order_id, created_at DESC);

-- +goose Down
DROP TABLE chat_messages;
DROP TABLE order_rollups;
DROP TABLE shipments;
DROP TABLE order_side_effects;
DROP TABLE autopilot_exceptions;
DROP INDEX orders_cod_phone_idx;
ALTER TABLE orders DROP COLUMN customer_phone;
ALTER TABLE customers DROP COLUMN chat_opt_out;
ALTER TABLE stores DROP COLUMN auto_create_shipment, DROP COLUMN chat_confirmations, DROP COLUMN confirm_in_chat,
    DROP COLUMN chat_templates_approved;
