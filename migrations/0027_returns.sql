-- +goose Up
-- Returns (decisions §13's shape), opened so far by fulfillment (§12): a
-- shipment returned to sender opens an approved return for its pieces
-- (reason refused_delivery), restocked when it is received.

CREATE TABLE returns (
    id               uuid PRIMARY KEY,
    store_id         uuid NOT NULL REFERENCES stores (id) ON DELETE CASCADE,
    order_id         uuid NOT NULL,
    shipment_id      uuid,
    status           text NOT NULL CHECK (status IN ('requested', 'approved', 'received', 'declined', 'cancelled')),
    tracking_number  text,
    suggested_refund bigint NOT NULL CHECK (suggested_refund >= 0),
    created_at       timestamptz NOT NULL,
    updated_at       timestamptz NOT NULL,
    UNIQUE (store_id, id),
    FOREIGN KEY (store_id, order_id) REFERENCES orders (store_id, id) ON DELETE CASCADE,
    FOREIGN KEY (store_id, shipment_id) REFERENCES shipments (store_id, id) ON DELETE SET NULL (shipment_id)
);
CREATE INDEX returns_order_idx ON returns (store_id, order_id);
CREATE INDEX returns_created_idx ON returns (store_id, created_at DESC, id DESC);

CREATE TABLE return_lines (
    store_id           uuid NOT NULL,
    return_id          uuid NOT NULL,
    line_id            uuid NOT NULL REFERENCES order_lines (id) ON DELETE CASCADE,
    position           int NOT NULL,
    quantity           int NOT NULL CHECK (quantity > 0),
    reason             text NOT NULL,
    note               text,
    received_quantity  int NOT NULL DEFAULT 0 CHECK (received_quantity BETWEEN 0 AND quantity),
    restocked_quantity int NOT NULL DEFAULT 0 CHECK (restocked_quantity BETWEEN 0 AND received_quantity),
    location_id        uuid,
    PRIMARY KEY (store_id, return_id, line_id),
    FOREIGN KEY (store_id, return_id) REFERENCES returns (store_id, id) ON DELETE CASCADE
);

-- +goose Down
DROP TABLE return_lines;
DROP TABLE returns;
