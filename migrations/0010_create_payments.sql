-- +goose Up
-- Payments: the order's payment ledger, payment proofs (buyer uploads and
-- merchant-recorded receipts), the platform wallet's commission ledger, and
-- tax-authority e-invoices. Nothing here is deleted to undo a payment: an
-- undo is a new row or a status change with its time and reason.

ALTER TABLE stores
    -- Platform commission on paid orders, in basis points (100 = 1%).
    ADD COLUMN commission_bps int NOT NULL DEFAULT 100 CHECK (commission_bps BETWEEN 0 AND 10000),
    -- Whether paid orders are reported to the tax authority.
    ADD COLUMN e_invoicing boolean NOT NULL DEFAULT false;

-- The pending-review list reads this instead of the latest proof of every
-- order; it is rewritten in the transaction of every proof change.
ALTER TABLE orders ADD COLUMN latest_proof_status text;
CREATE INDEX orders_pending_review_idx ON orders (store_id, created_at DESC, id DESC)
    WHERE latest_proof_status = 'awaiting_review' AND payment_method IN ('instapay', 'mobile_wallet');

-- A buyer's key to the proof upload of one order (handed out at storefront
-- checkout); only its SHA-256 is kept.
CREATE TABLE order_tokens (
    token_hash bytea PRIMARY KEY,
    store_id   uuid NOT NULL,
    order_id   uuid NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    FOREIGN KEY (store_id, order_id) REFERENCES orders (store_id, id) ON DELETE CASCADE
);

CREATE TABLE payment_proofs (
    id                  uuid PRIMARY KEY,
    store_id            uuid NOT NULL,
    order_id            uuid NOT NULL,
    kind                text NOT NULL CHECK (kind IN ('proof', 'recorded')),
    status              text NOT NULL CHECK (status IN ('awaiting_review', 'approved', 'rejected', 'recorded', 'voided')),
    amount              bigint CHECK (amount > 0),
    image_key           text NOT NULL,
    content_type        text NOT NULL,
    perceptual_hash     bigint,
    -- Multi-index hashing: the hash cut into three bands of 21, 21 and 22
    -- bits, each indexed. Two hashes within distance 8 agree within
    -- distance 2 on at least one band (3 bands × 3 bits would be 9).
    band0               int GENERATED ALWAYS AS ((perceptual_hash >> 43) & 2097151) STORED,
    band1               int GENERATED ALWAYS AS ((perceptual_hash >> 22) & 2097151) STORED,
    band2               int GENERATED ALWAYS AS (perceptual_hash & 4194303) STORED,
    duplicate_suspected boolean NOT NULL DEFAULT false,
    duplicate_of        uuid,
    reason              text,
    reviewed_by         uuid,
    reviewed_at         timestamptz,
    hash_started_at     timestamptz,
    created_at          timestamptz NOT NULL DEFAULT now(),
    updated_at          timestamptz NOT NULL DEFAULT now(),
    UNIQUE (store_id, id),
    FOREIGN KEY (store_id, order_id) REFERENCES orders (store_id, id) ON DELETE CASCADE,
    CHECK (kind = 'proof' OR amount IS NOT NULL)
);
CREATE INDEX payment_proofs_order_idx ON payment_proofs (store_id, order_id, created_at DESC, id DESC);
CREATE INDEX payment_proofs_band0_idx ON payment_proofs (store_id, band0) INCLUDE (perceptual_hash, created_at) WHERE perceptual_hash IS NOT NULL;
CREATE INDEX payment_proofs_band1_idx ON payment_proofs (store_id, band1) INCLUDE (perceptual_hash, created_at) WHERE perceptual_hash IS NOT NULL;
CREATE INDEX payment_proofs_band2_idx ON payment_proofs (store_id, band2) INCLUDE (perceptual_hash, created_at) WHERE perceptual_hash IS NOT NULL;
CREATE INDEX payment_proofs_unhashed_idx ON payment_proofs (created_at) WHERE hash_started_at IS NULL AND kind = 'proof';

-- Every amount credited to an order, and how it ended. paid_total on the
-- order is the sum of the succeeded rows, kept in the same transaction.
CREATE TABLE order_payments (
    id          uuid PRIMARY KEY,
    store_id    uuid NOT NULL,
    order_id    uuid NOT NULL,
    source      text NOT NULL CHECK (source IN ('mark_paid', 'recorded', 'proof', 'partial_acceptance', 'gateway')),
    proof_id    uuid,
    amount      bigint NOT NULL CHECK (amount > 0),
    status      text NOT NULL CHECK (status IN ('succeeded', 'voided', 'reversed', 'failed')),
    reason      text,
    actor_id    uuid,
    created_at  timestamptz NOT NULL DEFAULT now(),
    ended_at    timestamptz,
    FOREIGN KEY (store_id, order_id) REFERENCES orders (store_id, id) ON DELETE CASCADE
);
CREATE INDEX order_payments_order_idx ON order_payments (store_id, order_id, created_at);

-- Refunds (gateway or manual); a completed refund makes a payment final.
CREATE TABLE order_refunds (
    id         uuid PRIMARY KEY,
    store_id   uuid NOT NULL,
    order_id   uuid NOT NULL,
    amount     bigint NOT NULL CHECK (amount > 0),
    status     text NOT NULL CHECK (status IN ('pending', 'completed', 'failed')),
    created_at timestamptz NOT NULL DEFAULT now(),
    FOREIGN KEY (store_id, order_id) REFERENCES orders (store_id, id) ON DELETE CASCADE
);
CREATE INDEX order_refunds_order_idx ON order_refunds (store_id, order_id);

-- The merchant's platform wallet: commission charged when an order is paid
-- (negative) and its reversal (positive, pointing at what it reverses).
CREATE TABLE wallet_entries (
    id           uuid PRIMARY KEY,
    store_id     uuid NOT NULL REFERENCES stores (id) ON DELETE CASCADE,
    order_id     uuid,
    kind         text NOT NULL CHECK (kind IN ('commission', 'commission_reversal')),
    amount       bigint NOT NULL,
    reverses_id  uuid UNIQUE REFERENCES wallet_entries (id),
    reason       text,
    created_at   timestamptz NOT NULL DEFAULT now(),
    CHECK ((kind = 'commission_reversal') = (reverses_id IS NOT NULL))
);
CREATE INDEX wallet_entries_store_idx ON wallet_entries (store_id, created_at);
CREATE INDEX wallet_entries_order_idx ON wallet_entries (store_id, order_id);

-- One e-invoice per payment of an order. The worker reports it to the tax
-- authority (issued) and cancels it there when the payment is undone.
CREATE TABLE e_invoices (
    id                  uuid PRIMARY KEY,
    store_id            uuid NOT NULL,
    order_id            uuid NOT NULL,
    amount              bigint NOT NULL,
    currency            text NOT NULL,
    status              text NOT NULL CHECK (status IN ('pending', 'issued', 'cancel_requested', 'cancelled', 'failed')),
    authority_reference text,
    cancel_reason       text,
    last_error          text,
    sync_started_at     timestamptz,
    issued_at           timestamptz,
    cancelled_at        timestamptz,
    created_at          timestamptz NOT NULL DEFAULT now(),
    updated_at          timestamptz NOT NULL DEFAULT now(),
    FOREIGN KEY (store_id, order_id) REFERENCES orders (store_id, id) ON DELETE CASCADE
);
CREATE INDEX e_invoices_order_idx ON e_invoices (store_id, order_id, created_at);
CREATE INDEX e_invoices_unsynced_idx ON e_invoices (updated_at) WHERE sync_started_at IS NULL;

-- +goose Down
DROP TABLE e_invoices;
DROP TABLE wallet_entries;
DROP TABLE order_refunds;
DROP TABLE order_payments;
DROP TABLE payment_proofs;
DROP TABLE order_tokens;
DROP INDEX orders_pending_review_idx;
ALTER TABLE orders DROP COLUMN latest_proof_status;
ALTER TABLE stores DROP COLUMN commission_bps, DROP COLUMN e_invoicing;
