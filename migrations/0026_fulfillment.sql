-- +goose Up
-- Fulfillment (decisions §12): carrier accounts with signed callbacks, the
-- waybill's render requests, COD state per shipment and COD remittances.

CREATE TABLE carrier_accounts (
    id                        uuid PRIMARY KEY,
    store_id                  uuid NOT NULL REFERENCES stores (id) ON DELETE CASCADE,
    carrier                   text NOT NULL,
    name                      text NOT NULL,
    -- The callback secret must be readable to check signatures, like a
    -- webhook's signing secret; it is never logged or answered again.
    secret                    text NOT NULL,
    previous_secret           text,
    previous_secret_expires_at timestamptz,
    created_at                timestamptz NOT NULL,
    updated_at                timestamptz NOT NULL,
    UNIQUE (store_id, id),
    UNIQUE (store_id, carrier, name)
);

ALTER TABLE shipments
    ADD COLUMN cod_state       text NOT NULL DEFAULT 'none'
        CHECK (cod_state IN ('none', 'pending', 'collected', 'remitted', 'mismatch')),
    ADD COLUMN cod_remitted    bigint NOT NULL DEFAULT 0,
    ADD COLUMN cancel_reason   text,
    -- A render is wanted when waybill_wanted passes waybill_started; the
    -- dispatcher starts shipment-waybill:<id> and records the generation.
    ADD COLUMN waybill_wanted  int NOT NULL DEFAULT 1,
    ADD COLUMN waybill_started int NOT NULL DEFAULT 0,
    ADD COLUMN waybill_error   text,
    ADD CONSTRAINT shipments_carrier_account_fkey FOREIGN KEY (store_id, carrier_account_id)
        REFERENCES carrier_accounts (store_id, id) ON DELETE SET NULL (carrier_account_id);
-- A deleted location leaves its closed shipments without one (an open
-- shipment keeps its location in use).
ALTER TABLE shipments
    DROP CONSTRAINT shipments_location_fkey,
    ALTER COLUMN location_id DROP NOT NULL,
    ADD CONSTRAINT shipments_location_fkey FOREIGN KEY (store_id, location_id) REFERENCES locations (store_id, id) ON DELETE SET NULL (location_id);
CREATE INDEX shipments_location_idx ON shipments (store_id, location_id) WHERE location_id IS NOT NULL;
CREATE INDEX shipments_waybill_due_idx ON shipments (created_at) WHERE waybill_wanted > waybill_started;

UPDATE shipments SET cod_state = CASE
    WHEN status = 'cancelled' OR cod_amount = 0 THEN 'none'
    WHEN status = 'delivered' THEN 'collected'
    ELSE 'pending' END,
    cod_collected = CASE WHEN status = 'delivered' AND cod_amount > 0 THEN cod_amount END;

-- Cash the couriers collected pays an order as source 'cod'.
ALTER TABLE order_payments DROP CONSTRAINT order_payments_source_check,
    ADD CONSTRAINT order_payments_source_check CHECK (source IN ('mark_paid', 'recorded', 'proof', 'partial_acceptance', 'gateway', 'cod'));

CREATE TABLE cod_remittances (
    id                 uuid PRIMARY KEY,
    store_id           uuid NOT NULL REFERENCES stores (id) ON DELETE CASCADE,
    carrier_account_id uuid,
    carrier            text NOT NULL,
    reference          text NOT NULL,
    remitted_at        timestamptz NOT NULL,
    total_collected    bigint NOT NULL,
    total_fees         bigint NOT NULL,
    net                bigint NOT NULL,
    discrepancies      jsonb NOT NULL,
    created_at         timestamptz NOT NULL,
    UNIQUE (store_id, id),
    UNIQUE (store_id, carrier, reference),
    FOREIGN KEY (store_id, carrier_account_id) REFERENCES carrier_accounts (store_id, id) ON DELETE SET NULL (carrier_account_id)
);
CREATE INDEX cod_remittances_created_idx ON cod_remittances (store_id, created_at DESC, id);

CREATE TABLE cod_remittance_items (
    store_id      uuid NOT NULL,
    remittance_id uuid NOT NULL,
    shipment_id   uuid NOT NULL,
    collected     bigint NOT NULL CHECK (collected >= 0),
    fee           bigint NOT NULL CHECK (fee >= 0),
    PRIMARY KEY (store_id, remittance_id, shipment_id),
    FOREIGN KEY (store_id, remittance_id) REFERENCES cod_remittances (store_id, id) ON DELETE CASCADE,
    FOREIGN KEY (store_id, shipment_id) REFERENCES shipments (store_id, id) ON DELETE CASCADE
);
CREATE INDEX cod_remittance_items_shipment_idx ON cod_remittance_items (store_id, shipment_id);

-- +goose Down
UPDATE order_payments SET source = 'mark_paid' WHERE source = 'cod';
ALTER TABLE order_payments DROP CONSTRAINT order_payments_source_check,
    ADD CONSTRAINT order_payments_source_check CHECK (source IN ('mark_paid', 'recorded', 'proof', 'partial_acceptance', 'gateway'));
DROP TABLE cod_remittance_items;
DROP TABLE cod_remittances;
DROP INDEX shipments_waybill_due_idx;
DROP INDEX shipments_location_idx;
DELETE FROM shipments WHERE location_id IS NULL;
ALTER TABLE shipments
    DROP CONSTRAINT shipments_location_fkey,
    ALTER COLUMN location_id SET NOT NULL,
    ADD CONSTRAINT shipments_location_fkey FOREIGN KEY (store_id, location_id) REFERENCES locations (store_id, id);
ALTER TABLE shipments
    DROP CONSTRAINT shipments_carrier_account_fkey,
    DROP COLUMN cod_state, DROP COLUMN cod_remitted, DROP COLUMN cancel_reason,
    DROP COLUMN waybill_wanted, DROP COLUMN waybill_started, DROP COLUMN waybill_error;
DROP TABLE carrier_accounts;
