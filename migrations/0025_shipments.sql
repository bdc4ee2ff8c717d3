-- +goose Up
-- Shipments (decisions §12): an order ships in one or several, each with its
-- lines, status, location, carrier, COD amount, waybill state and events.
-- Until now one row per order was written by the worker and never read.

ALTER TABLE shipments DROP CONSTRAINT shipments_order_id_key;
ALTER TABLE shipments
    ADD COLUMN number             text,
    ADD COLUMN location_id        uuid,
    ADD COLUMN carrier_account_id uuid,
    ADD COLUMN carrier            text NOT NULL DEFAULT 'other',
    ADD COLUMN service            text,
    ADD COLUMN tracking_number    text,
    ADD COLUMN tracking_url       text,
    ADD COLUMN cod_amount         bigint NOT NULL DEFAULT 0 CHECK (cod_amount >= 0),
    ADD COLUMN cod_collected      bigint CHECK (cod_collected >= 0),
    ADD COLUMN cod_fee            bigint CHECK (cod_fee >= 0),
    ADD COLUMN waybill_status     text NOT NULL DEFAULT 'pending' CHECK (waybill_status IN ('pending', 'ready', 'failed')),
    ADD COLUMN shipped_at         timestamptz,
    ADD COLUMN delivered_at       timestamptz,
    ADD COLUMN updated_at         timestamptz;

-- Orders that left before shipments were kept get one, carrier "other".
INSERT INTO shipments (id, store_id, order_id, status, created_at)
SELECT gen_random_uuid(), o.store_id, o.id, 'created', o.updated_at
FROM orders o
WHERE o.status IN ('SHIPPED', 'DELIVERED', 'RETURNED')
  AND NOT EXISTS (SELECT 1 FROM shipments s WHERE s.store_id = o.store_id AND s.order_id = o.id);

-- Each order's shipment takes the status its order implies, all its
-- lines, the default location and, on COD, the balance due.
UPDATE shipments s SET
    status = CASE o.status WHEN 'SHIPPED' THEN 'in_transit' WHEN 'DELIVERED' THEN 'delivered'
                           WHEN 'RETURNED' THEN 'returned_to_sender' WHEN 'CANCELLED' THEN 'cancelled'
                           ELSE 'label_created' END,
    number = o.order_number || '-1',
    location_id = (SELECT l.id FROM locations l WHERE l.store_id = s.store_id AND l.is_default),
    tracking_number = o.tracking_number,
    cod_amount = CASE WHEN o.payment_method = 'cod' THEN GREATEST(o.total - o.paid_total, 0) ELSE 0 END,
    shipped_at = CASE WHEN o.status IN ('SHIPPED', 'DELIVERED', 'RETURNED') THEN o.updated_at END,
    delivered_at = CASE WHEN o.status = 'DELIVERED' THEN o.updated_at END,
    updated_at = now()
FROM orders o
WHERE o.store_id = s.store_id AND o.id = s.order_id;

ALTER TABLE shipments
    ALTER COLUMN number SET NOT NULL,
    ALTER COLUMN location_id SET NOT NULL,
    ALTER COLUMN updated_at SET NOT NULL,
    ALTER COLUMN status DROP DEFAULT,
    ADD CONSTRAINT shipments_status_check CHECK (status IN ('label_created', 'in_transit', 'out_for_delivery', 'failed_attempt',
                                                            'delivered', 'returned_to_sender', 'cancelled')),
    ADD CONSTRAINT shipments_store_number_key UNIQUE (store_id, number),
    ADD CONSTRAINT shipments_store_id_key UNIQUE (store_id, id),
    ADD CONSTRAINT shipments_location_fkey FOREIGN KEY (store_id, location_id) REFERENCES locations (store_id, id);
CREATE INDEX shipments_order_idx ON shipments (store_id, order_id);
-- Not unique: orders from before may share a tracking number; the API
-- refuses a duplicate (DUPLICATE_TRACKING_NUMBER) from now on.
CREATE INDEX shipments_tracking_idx ON shipments (store_id, tracking_number) WHERE tracking_number IS NOT NULL;
CREATE INDEX shipments_updated_idx ON shipments (store_id, updated_at, id);

-- The order lines (and how many of each) a shipment carries.
CREATE TABLE shipment_lines (
    store_id    uuid NOT NULL,
    shipment_id uuid NOT NULL,
    line_id     uuid NOT NULL REFERENCES order_lines (id) ON DELETE CASCADE,
    quantity    int NOT NULL CHECK (quantity > 0),
    PRIMARY KEY (store_id, shipment_id, line_id),
    FOREIGN KEY (store_id, shipment_id) REFERENCES shipments (store_id, id) ON DELETE CASCADE
);
CREATE INDEX shipment_lines_line_idx ON shipment_lines (store_id, line_id);

INSERT INTO shipment_lines (store_id, shipment_id, line_id, quantity)
SELECT s.store_id, s.id, ol.id, ol.quantity
FROM shipments s JOIN order_lines ol ON ol.store_id = s.store_id AND ol.order_id = s.order_id
WHERE ol.quantity > 0;

-- Everything reported about a shipment, applied or not: carriers resend
-- out of order, and a stale or illegal report is kept but changes nothing.
CREATE TABLE shipment_events (
    seq         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    store_id    uuid NOT NULL,
    shipment_id uuid NOT NULL,
    status      text NOT NULL,
    occurred_at timestamptz NOT NULL,
    source      text NOT NULL CHECK (source IN ('api', 'carrier', 'system')),
    note        text,
    event_id    text,
    applied     boolean NOT NULL,
    ignored     text,
    created_at  timestamptz NOT NULL,
    FOREIGN KEY (store_id, shipment_id) REFERENCES shipments (store_id, id) ON DELETE CASCADE
);
CREATE INDEX shipment_events_shipment_idx ON shipment_events (store_id, shipment_id, seq);
CREATE UNIQUE INDEX shipment_events_event_id_idx ON shipment_events (store_id, shipment_id, event_id) WHERE event_id IS NOT NULL;

INSERT INTO shipment_events (store_id, shipment_id, status, occurred_at, source, note, applied, created_at)
SELECT store_id, id, status, COALESCE(shipped_at, created_at), 'system', 'recorded when shipments became several per order', true, now()
FROM shipments;

-- +goose Down
DROP TABLE shipment_events;
DROP TABLE shipment_lines;
DROP INDEX shipments_updated_idx;
DROP INDEX shipments_tracking_idx;
DROP INDEX shipments_order_idx;
ALTER TABLE shipments
    DROP CONSTRAINT shipments_location_fkey,
    DROP CONSTRAINT shipments_store_id_key,
    DROP CONSTRAINT shipments_store_number_key,
    DROP CONSTRAINT shipments_status_check,
    DROP COLUMN number, DROP COLUMN location_id, DROP COLUMN carrier_account_id, DROP COLUMN carrier, DROP COLUMN service,
    DROP COLUMN tracking_number, DROP COLUMN tracking_url, DROP COLUMN cod_amount, DROP COLUMN cod_collected, DROP COLUMN cod_fee,
    DROP COLUMN waybill_status, DROP COLUMN shipped_at, DROP COLUMN delivered_at, DROP COLUMN updated_at;
DELETE FROM shipments s WHERE EXISTS (SELECT 1 FROM shipments x WHERE x.order_id = s.order_id AND x.id < s.id);
UPDATE shipments SET status = 'created';
ALTER TABLE shipments ALTER COLUMN status SET DEFAULT 'created', ADD CONSTRAINT shipments_order_id_key UNIQUE (order_id);
