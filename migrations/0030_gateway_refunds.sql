-- +goose Up
-- Card refunds through the store's gateway (decisions §13, §18) and credit
-- notes for refunds of e-invoiced orders.

-- A store's gateway account. Secrets are sealed (AES-256-GCM under
-- SVC_SECRETS_KEY); the plain key is never stored.
CREATE TABLE payment_gateways (
    store_id              uuid NOT NULL REFERENCES stores (id) ON DELETE CASCADE,
    provider              text NOT NULL CHECK (provider IN ('stripe')),
    secret_key_sealed     bytea NOT NULL,
    webhook_secret_sealed bytea NOT NULL,
    account_hint          text NOT NULL,
    statement_descriptor  text,
    created_at            timestamptz NOT NULL DEFAULT now(),
    updated_at            timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (store_id, provider)
);

-- A gateway payment names its provider and the gateway's id for it.
ALTER TABLE order_payments
    ADD COLUMN provider  text,
    ADD COLUMN reference text;

-- A refund paid back through the gateway names the provider; it settles
-- itself, through the refund:<id> workflow the dispatcher starts.
ALTER TABLE order_refunds
    ADD COLUMN gateway            text,
    ADD COLUMN gateway_started_at timestamptz;
CREATE INDEX order_refunds_gateway_unstarted_idx ON order_refunds (created_at)
    WHERE gateway IS NOT NULL AND gateway_started_at IS NULL;

-- A succeeded refund of an e-invoiced order is reported as a credit note
-- against the order's invoice.
ALTER TABLE e_invoices
    ADD COLUMN kind      text NOT NULL DEFAULT 'invoice' CHECK (kind IN ('invoice', 'credit_note')),
    ADD COLUMN refund_id uuid,
    ADD COLUMN credits   uuid;
CREATE UNIQUE INDEX e_invoices_refund_idx ON e_invoices (store_id, refund_id) WHERE refund_id IS NOT NULL;

-- +goose Down
DROP INDEX e_invoices_refund_idx;
ALTER TABLE e_invoices DROP COLUMN kind, DROP COLUMN refund_id, DROP COLUMN credits;
DROP INDEX order_refunds_gateway_unstarted_idx;
ALTER TABLE order_refunds DROP COLUMN gateway, DROP COLUMN gateway_started_at;
ALTER TABLE order_payments DROP COLUMN provider, DROP COLUMN reference;
DROP TABLE payment_gateways;
