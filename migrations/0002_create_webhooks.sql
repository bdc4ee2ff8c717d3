-- +goose Up
CREATE TABLE webhook_subscriptions (
    id          uuid PRIMARY KEY,
    store_id    uuid NOT NULL REFERENCES stores (id) ON DELETE CASCADE,
    url         text NOT NULL,
    events      text[] NOT NULL,
    description text NOT NULL DEFAULT '',
    is_active   boolean NOT NULL DEFAULT true,
    -- The signing secret must be readable to sign; it is never logged or
    -- returned except at creation and rotation.
    secret      text NOT NULL,
    disabled_at timestamptz,
    disabled_reason text,
    created_at  timestamptz NOT NULL DEFAULT now(),
    updated_at  timestamptz NOT NULL DEFAULT now(),
    UNIQUE (store_id, id)
);
CREATE INDEX webhook_subscriptions_store_idx ON webhook_subscriptions (store_id, created_at);

-- One row per (event, subscription): the unit that is retried and logged.
CREATE TABLE webhook_deliveries (
    id              uuid PRIMARY KEY,
    store_id        uuid NOT NULL,
    subscription_id uuid NOT NULL,
    outbox_id       uuid REFERENCES outbox (id) ON DELETE SET NULL,
    batch_id        uuid,
    event           text NOT NULL,
    body            bytea NOT NULL,
    status          text NOT NULL CHECK (status IN ('pending', 'retrying', 'succeeded', 'failed', 'exhausted', 'gone', 'skipped')),
    attempts        int NOT NULL DEFAULT 0,
    last_response_code int,
    created_at      timestamptz NOT NULL,
    completed_at    timestamptz,
    FOREIGN KEY (store_id, subscription_id) REFERENCES webhook_subscriptions (store_id, id) ON DELETE CASCADE,
    UNIQUE (outbox_id, subscription_id)
);
CREATE INDEX webhook_deliveries_sub_idx ON webhook_deliveries (store_id, subscription_id, created_at);
CREATE INDEX webhook_deliveries_batch_idx ON webhook_deliveries (batch_id);

-- Dispatch batches: one Temporal workflow each, started after commit.
CREATE TABLE webhook_batches (
    id         uuid PRIMARY KEY,
    created_at timestamptz NOT NULL DEFAULT now(),
    started_at timestamptz
);
CREATE INDEX webhook_batches_unstarted_idx ON webhook_batches (created_at) WHERE started_at IS NULL;

CREATE TABLE webhook_attempts (
    id              uuid PRIMARY KEY,
    store_id        uuid NOT NULL,
    subscription_id uuid NOT NULL,
    delivery_id     uuid NOT NULL REFERENCES webhook_deliveries (id) ON DELETE CASCADE,
    attempt         int NOT NULL,
    status          text NOT NULL CHECK (status IN ('succeeded', 'failed', 'exhausted', 'gone', 'skipped')),
    response_code   int,
    response_body   text NOT NULL DEFAULT '',
    error           text NOT NULL DEFAULT '',
    duration_ms     int NOT NULL DEFAULT 0,
    attempted_at    timestamptz NOT NULL,
    FOREIGN KEY (store_id, subscription_id) REFERENCES webhook_subscriptions (store_id, id) ON DELETE CASCADE
);
CREATE INDEX webhook_attempts_sub_idx ON webhook_attempts (store_id, subscription_id, attempted_at DESC);

-- Dashboard notifications for the merchant (webhook switched off, import finished, ...).
CREATE TABLE notifications (
    id         uuid PRIMARY KEY,
    store_id   uuid NOT NULL REFERENCES stores (id) ON DELETE CASCADE,
    kind       text NOT NULL,
    title      text NOT NULL,
    title_ar   text NOT NULL,
    body       text NOT NULL,
    body_ar    text NOT NULL,
    data       jsonb NOT NULL DEFAULT '{}',
    created_at timestamptz NOT NULL DEFAULT now(),
    read_at    timestamptz
);
CREATE INDEX notifications_store_idx ON notifications (store_id, created_at DESC);

-- +goose Down
DROP TABLE notifications;
DROP TABLE webhook_attempts;
DROP TABLE webhook_batches;
DROP TABLE webhook_deliveries;
DROP TABLE webhook_subscriptions;
