-- +goose Up
-- Card payments through the store's gateway (decisions §18).

-- How long a card order waits for its payment before it is cancelled.
ALTER TABLE stores ADD COLUMN card_payment_timeout_minutes int NOT NULL DEFAULT 30
    CHECK (card_payment_timeout_minutes BETWEEN 10 AND 1440);

-- One card payment per card order: the gateway's payment (intent) and the
-- secret the buyer's browser confirms it with (sealed like the gateway's
-- secrets), until when it may be paid, and where it is. The
-- card-payment:<order_id> workflow owns it; workflow_started_at is set
-- once that workflow is started (the dispatcher starts lost starts).
CREATE TABLE card_payments (
    store_id             uuid NOT NULL,
    order_id             uuid NOT NULL,
    provider             text NOT NULL,
    amount               bigint NOT NULL CHECK (amount > 0),
    currency             text NOT NULL,
    intent_id            text,
    client_secret_sealed bytea,
    status               text NOT NULL DEFAULT 'open'
        CHECK (status IN ('open', 'succeeded', 'expired', 'mismatched', 'refunded_late')),
    expires_at           timestamptz NOT NULL,
    workflow_started_at  timestamptz,
    created_at           timestamptz NOT NULL,
    updated_at           timestamptz NOT NULL,
    PRIMARY KEY (store_id, order_id),
    FOREIGN KEY (store_id, order_id) REFERENCES orders (store_id, id) ON DELETE CASCADE
);
CREATE INDEX card_payments_unstarted_idx ON card_payments (created_at) WHERE workflow_started_at IS NULL;

-- Every gateway event taken, once: a second delivery of the same id
-- changes nothing.
CREATE TABLE gateway_events (
    store_id    uuid NOT NULL REFERENCES stores (id) ON DELETE CASCADE,
    provider    text NOT NULL,
    event_id    text NOT NULL,
    type        text NOT NULL,
    received_at timestamptz NOT NULL,
    PRIMARY KEY (store_id, provider, event_id)
);

-- A gateway payment that succeeded after its order expired is paid back:
-- it stays in the ledger as refunded.
ALTER TABLE order_payments DROP CONSTRAINT order_payments_status_check,
    ADD CONSTRAINT order_payments_status_check CHECK (status IN ('succeeded', 'voided', 'reversed', 'failed', 'refunded'));

-- +goose Down
DELETE FROM order_payments WHERE status = 'refunded';
ALTER TABLE order_payments DROP CONSTRAINT order_payments_status_check,
    ADD CONSTRAINT order_payments_status_check CHECK (status IN ('succeeded', 'voided', 'reversed', 'failed'));
DROP TABLE gateway_events;
DROP TABLE card_payments;
ALTER TABLE stores DROP COLUMN card_payment_timeout_minutes;
