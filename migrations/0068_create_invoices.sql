-- +goose Up
-- Invoices (decisions §27): one per paid order, with a number from a
-- gapless series per store and year, lines with their tax, and credit notes
-- that correct them. The e_invoices rows of before (one per payment, a
-- cancel asked of the authority on unmark-paid) become invoices and notes.

-- The last number issued in a store's year; the issuing transaction locks
-- its row, so numbers follow the commits without a gap.
CREATE TABLE invoice_counters (
    store_id    uuid NOT NULL REFERENCES stores (id) ON DELETE CASCADE,
    year        int NOT NULL,
    last_number bigint NOT NULL,
    PRIMARY KEY (store_id, year)
);

CREATE TABLE invoices (
    id                          uuid PRIMARY KEY,
    store_id                    uuid NOT NULL,
    order_id                    uuid NOT NULL,
    number                      text NOT NULL,
    year                        int NOT NULL,
    sequence                    bigint NOT NULL,
    kind                        text NOT NULL CHECK (kind IN ('invoice', 'credit_note', 'debit_note')),
    type                        text NOT NULL CHECK (type IN ('simplified', 'standard')),
    -- Why the document exists: paid (an invoice), refund, partial_acceptance,
    -- unmark_paid, cancellation or reissue (a credit note), migrated.
    reason                      text NOT NULL,
    credits_invoice_id          uuid REFERENCES invoices (id),
    refund_id                   uuid,
    issued_at                   timestamptz NOT NULL,
    supply_date                 date NOT NULL,
    currency                    text NOT NULL,
    seller                      jsonb NOT NULL,
    buyer                       jsonb NOT NULL,
    lines                       jsonb NOT NULL,
    net_total                   bigint NOT NULL,
    discount_total              bigint NOT NULL,
    tax_total                   bigint NOT NULL,
    total                       bigint NOT NULL CHECK (total >= 0),
    status                      text NOT NULL CHECK (status IN ('pending', 'issued', 'reported', 'cleared', 'rejected', 'failed', 'cancelled')),
    cancelled_by_credit_note_id uuid REFERENCES invoices (id),
    regime                      text,
    authority_uuid              uuid,
    icv                         bigint,
    pih                         text,
    hash                        text,
    qr                          text,
    authority_reference         text,
    submitted_at                timestamptz,
    warnings                    jsonb NOT NULL DEFAULT '[]',
    errors                      jsonb NOT NULL DEFAULT '[]',
    sync_started_at             timestamptz,
    created_at                  timestamptz NOT NULL,
    updated_at                  timestamptz NOT NULL,
    UNIQUE (store_id, number),
    UNIQUE (store_id, year, sequence),
    FOREIGN KEY (store_id, order_id) REFERENCES orders (store_id, id) ON DELETE CASCADE,
    CHECK ((kind = 'invoice') = (credits_invoice_id IS NULL))
);
CREATE INDEX invoices_store_idx ON invoices (store_id, created_at DESC, id DESC);
CREATE INDEX invoices_order_idx ON invoices (store_id, order_id, created_at);
CREATE UNIQUE INDEX invoices_refund_idx ON invoices (store_id, refund_id) WHERE refund_id IS NOT NULL;
-- An order's live invoice (not credited whole). One per order is kept by
-- the code under the order's row lock, not by a unique index: an old
-- failed e-invoice and the one of a later payment are both uncredited.
CREATE INDEX invoices_live_idx ON invoices (store_id, order_id) WHERE kind = 'invoice' AND cancelled_by_credit_note_id IS NULL;
CREATE INDEX invoices_unsynced_idx ON invoices (updated_at) WHERE sync_started_at IS NULL;

-- Every old row keeps its id (a running e-invoice:<id> workflow finds it);
-- an invoice cancelled or asked to be cancelled gains the credit note that
-- is now the cancellation (its id derived from the invoice's). Numbers run
-- in creation order per store and year of the store's zone. The old rows
-- knew only an amount: each document has one line of it, its tax unknown (0).
INSERT INTO invoices (id, store_id, order_id, number, year, sequence, kind, type, reason, credits_invoice_id, refund_id,
    issued_at, supply_date, currency, seller, buyer, lines, net_total, discount_total, tax_total, total, status,
    authority_reference, submitted_at, errors, sync_started_at, created_at, updated_at)
WITH docs AS (
    SELECT e.id, e.store_id, e.order_id, e.kind, e.credits AS credits_invoice_id, e.refund_id, e.amount, e.currency,
        CASE
            WHEN e.status = 'issued' THEN 'reported'
            WHEN e.status = 'cancelled' THEN 'cancelled'
            WHEN e.status = 'failed' THEN 'failed'
            WHEN e.authority_reference IS NOT NULL THEN 'reported'
            ELSE 'pending'
        END AS status,
        CASE WHEN e.kind = 'credit_note' THEN 'refund' ELSE 'migrated' END AS reason,
        e.authority_reference, e.issued_at AS submitted_at, e.last_error,
        CASE WHEN e.status IN ('issued', 'cancelled', 'failed') OR e.authority_reference IS NOT NULL
            THEN COALESCE(e.sync_started_at, e.updated_at) END AS sync_started_at,
        e.created_at, e.updated_at
    FROM e_invoices e
    UNION ALL
    SELECT md5('credit-note:' || e.id::text)::uuid, e.store_id, e.order_id, 'credit_note', e.id, NULL, e.amount, e.currency,
        -- The authority cancelled the invoice itself: the note was never sent.
        CASE WHEN e.status = 'cancelled' THEN 'issued' ELSE 'pending' END,
        'unmark_paid', NULL, NULL, NULL,
        CASE WHEN e.status = 'cancelled' THEN COALESCE(e.cancelled_at, e.updated_at) END,
        COALESCE(e.cancelled_at, e.updated_at), e.updated_at
    FROM e_invoices e WHERE e.kind = 'invoice' AND e.status IN ('cancel_requested', 'cancelled')
), zoned AS (
    SELECT d.*, s.name AS store_name, o.order_number, o.customer,
        (d.created_at AT TIME ZONE COALESCE(s.timezone, CASE s.currency
            WHEN 'EGP' THEN 'Africa/Cairo' WHEN 'SAR' THEN 'Asia/Riyadh' WHEN 'AED' THEN 'Asia/Dubai' WHEN 'KWD' THEN 'Asia/Kuwait'
            WHEN 'BHD' THEN 'Asia/Bahrain' WHEN 'OMR' THEN 'Asia/Muscat' WHEN 'JOD' THEN 'Asia/Amman' WHEN 'QAR' THEN 'Asia/Qatar'
            ELSE 'UTC' END)) AS local_created
    FROM docs d JOIN stores s ON s.id = d.store_id JOIN orders o ON o.store_id = d.store_id AND o.id = d.order_id
), numbered AS (
    SELECT z.*, extract(year FROM z.local_created)::int AS year,
        row_number() OVER (PARTITION BY z.store_id, extract(year FROM z.local_created) ORDER BY z.created_at, z.kind DESC, z.id) AS seq
    FROM zoned z
)
SELECT n.id, n.store_id, n.order_id, 'INV-' || n.year || '-' || lpad(n.seq::text, 6, '0'), n.year, n.seq, n.kind, 'simplified',
    n.reason, n.credits_invoice_id, n.refund_id, n.created_at, n.local_created::date, n.currency,
    jsonb_build_object('name', jsonb_build_object('ar', n.store_name, 'en', n.store_name)),
    jsonb_strip_nulls(jsonb_build_object('name', COALESCE(n.customer->>'name', ''), 'phone', n.customer->>'phone')),
    jsonb_build_array(jsonb_build_object('description', 'Order ' || n.order_number, 'quantity', 1, 'unit_price_excl', n.amount,
        'discount', 0, 'tax_class', 'standard', 'tax_rate_bp', 0, 'tax', 0, 'total_incl', n.amount)),
    n.amount, 0, 0, n.amount, n.status, n.authority_reference, n.submitted_at,
    CASE WHEN n.last_error IS NULL THEN '[]'::jsonb ELSE jsonb_build_array(n.last_error) END,
    n.sync_started_at, n.created_at, n.updated_at
FROM numbered n;

UPDATE invoices i SET cancelled_by_credit_note_id = md5('credit-note:' || i.id::text)::uuid
FROM e_invoices e WHERE e.id = i.id AND e.kind = 'invoice' AND e.status IN ('cancel_requested', 'cancelled');

INSERT INTO invoice_counters (store_id, year, last_number)
SELECT store_id, year, max(sequence) FROM invoices GROUP BY store_id, year;

DROP TABLE e_invoices;

-- +goose Down
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
    kind                text NOT NULL DEFAULT 'invoice' CHECK (kind IN ('invoice', 'credit_note')),
    refund_id           uuid,
    credits             uuid,
    FOREIGN KEY (store_id, order_id) REFERENCES orders (store_id, id) ON DELETE CASCADE
);
CREATE INDEX e_invoices_order_idx ON e_invoices (store_id, order_id, created_at);
CREATE INDEX e_invoices_unsynced_idx ON e_invoices (updated_at) WHERE sync_started_at IS NULL;
CREATE UNIQUE INDEX e_invoices_refund_idx ON e_invoices (store_id, refund_id) WHERE refund_id IS NOT NULL;
INSERT INTO e_invoices (id, store_id, order_id, amount, currency, status, authority_reference, last_error, sync_started_at,
    issued_at, created_at, updated_at, kind, refund_id, credits)
SELECT id, store_id, order_id, total, currency,
    CASE WHEN status IN ('reported', 'cleared', 'issued') THEN 'issued' WHEN status IN ('rejected', 'failed') THEN 'failed'
        WHEN status = 'cancelled' THEN 'cancelled' ELSE 'pending' END,
    authority_reference, errors->>0, sync_started_at, submitted_at, created_at, updated_at,
    CASE WHEN kind = 'invoice' THEN 'invoice' ELSE 'credit_note' END, refund_id, credits_invoice_id
FROM invoices WHERE kind = 'invoice' OR refund_id IS NOT NULL;
DROP TABLE invoice_counters;
DROP TABLE invoices;
