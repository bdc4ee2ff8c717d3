-- +goose Up
-- Inventory (decisions §11): stock lives on (variant, location) levels, every
-- change appends a movement, and every product has at least one variant.

-- A product created without variants gets a default one (options {}, sku
-- null); the first variant created on it converts it in place.
ALTER TABLE variants ADD COLUMN is_default boolean NOT NULL DEFAULT false;
CREATE UNIQUE INDEX variants_one_default_idx ON variants (store_id, product_id) WHERE is_default;

-- variants.quantity stays as the sum of `available` over the store's active
-- locations, kept in the same statement as every level change; a product's
-- quantity is the sum of its variants', read, not stored.

CREATE TABLE inventory_levels (
    store_id    uuid NOT NULL,
    variant_id  uuid NOT NULL,
    location_id uuid NOT NULL,
    product_id  uuid NOT NULL,
    on_hand     int NOT NULL DEFAULT 0 CHECK (on_hand >= 0),
    reserved    int NOT NULL DEFAULT 0 CHECK (reserved >= 0),
    updated_at  timestamptz NOT NULL,
    PRIMARY KEY (store_id, variant_id, location_id),
    CONSTRAINT inventory_levels_reserved_le_on_hand CHECK (reserved <= on_hand),
    FOREIGN KEY (store_id, variant_id) REFERENCES variants (store_id, id) ON DELETE CASCADE,
    FOREIGN KEY (store_id, location_id) REFERENCES locations (store_id, id)
);
CREATE INDEX inventory_levels_location_idx ON inventory_levels (store_id, location_id, variant_id);
CREATE INDEX inventory_levels_product_idx ON inventory_levels (store_id, product_id);

-- Adjustments posted through /inventory/adjustments; their movements carry the id.
CREATE TABLE inventory_adjustments (
    id         uuid PRIMARY KEY,
    store_id   uuid NOT NULL REFERENCES stores (id) ON DELETE CASCADE,
    reason     text NOT NULL CHECK (reason IN ('received', 'correction', 'damaged')),
    note       text NOT NULL DEFAULT '',
    reference  text,
    actor_type text NOT NULL,
    actor_id   uuid,
    created_at timestamptz NOT NULL
);

-- The ledger: append-only. Variants and locations may go; their history stays.
CREATE TABLE inventory_movements (
    seq            bigint GENERATED ALWAYS AS IDENTITY,
    id             uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    store_id       uuid NOT NULL REFERENCES stores (id) ON DELETE CASCADE,
    variant_id     uuid NOT NULL,
    location_id    uuid NOT NULL,
    reason         text NOT NULL CHECK (reason IN ('received', 'damaged', 'correction', 'order_reserve', 'order_release',
                                                    'order_ship', 'return_restock')),
    on_hand_delta  int NOT NULL,
    reserved_delta int NOT NULL,
    on_hand_after  int NOT NULL,
    reserved_after int NOT NULL,
    order_id       uuid,
    shipment_id    uuid,
    return_id      uuid,
    adjustment_id  uuid,
    note           text NOT NULL DEFAULT '',
    actor_type     text NOT NULL CHECK (actor_type IN ('user', 'app', 'system')),
    actor_id       uuid,
    created_at     timestamptz NOT NULL
);
CREATE INDEX inventory_movements_store_idx ON inventory_movements (store_id, seq DESC);
CREATE INDEX inventory_movements_variant_idx ON inventory_movements (store_id, variant_id, seq DESC);
CREATE INDEX inventory_movements_order_idx ON inventory_movements (store_id, order_id) WHERE order_id IS NOT NULL;
CREATE INDEX inventory_movements_adjustment_idx ON inventory_movements (store_id, adjustment_id) WHERE adjustment_id IS NOT NULL;

-- Where each order line's units are held: reserved until they ship, then
-- shipped until a return puts them back.
CREATE TABLE order_allocations (
    store_id    uuid NOT NULL,
    order_id    uuid NOT NULL,
    line_id     uuid NOT NULL,
    variant_id  uuid NOT NULL,
    location_id uuid NOT NULL,
    reserved    int NOT NULL DEFAULT 0 CHECK (reserved >= 0),
    shipped     int NOT NULL DEFAULT 0 CHECK (shipped >= 0),
    PRIMARY KEY (store_id, order_id, line_id, location_id),
    FOREIGN KEY (store_id, order_id) REFERENCES orders (store_id, id) ON DELETE CASCADE,
    FOREIGN KEY (store_id, location_id) REFERENCES locations (store_id, id) ON DELETE CASCADE
);
CREATE INDEX order_allocations_location_idx ON order_allocations (store_id, location_id);

-- Products without variants get their default variant, holding the product's quantity.
INSERT INTO variants (id, store_id, product_id, sku, barcode, price, cost_price, quantity, options, position, is_default, created_at, updated_at)
SELECT gen_random_uuid(), p.store_id, p.id, NULL, NULL, p.price, p.cost_price, greatest(p.quantity, 0), '{}', 1, true, p.created_at, now()
FROM products p
WHERE NOT EXISTS (SELECT 1 FROM variants v WHERE v.store_id = p.store_id AND v.product_id = p.id);

-- Reservations: the unshipped units of PENDING…READY_TO_SHIP orders, at the default location.
INSERT INTO order_allocations (store_id, order_id, line_id, variant_id, location_id, reserved)
SELECT l.store_id, l.order_id, l.id, l.variant_id, loc.id, l.quantity - l.returned_quantity
FROM order_lines l
JOIN orders o ON o.store_id = l.store_id AND o.id = l.order_id
JOIN variants v ON v.store_id = l.store_id AND v.id = l.variant_id
JOIN locations loc ON loc.store_id = l.store_id AND loc.is_default
WHERE o.status IN ('PENDING', 'CONFIRMED', 'PROCESSING', 'READY_TO_SHIP') AND l.quantity > l.returned_quantity;

-- Levels at the default location: on_hand = quantity + reserved.
INSERT INTO inventory_levels (store_id, variant_id, location_id, product_id, on_hand, reserved, updated_at)
SELECT v.store_id, v.id, loc.id, v.product_id, greatest(v.quantity, 0) + COALESCE(r.reserved, 0), COALESCE(r.reserved, 0), now()
FROM variants v
JOIN locations loc ON loc.store_id = v.store_id AND loc.is_default
LEFT JOIN (SELECT store_id, variant_id, sum(reserved)::int AS reserved FROM order_allocations GROUP BY store_id, variant_id) r
       ON r.store_id = v.store_id AND r.variant_id = v.id;

UPDATE variants SET quantity = 0 WHERE quantity < 0;

-- The ledger opens with what the levels hold, so every level is the sum of its movements.
INSERT INTO inventory_movements (store_id, variant_id, location_id, reason, on_hand_delta, reserved_delta, on_hand_after,
                                 reserved_after, note, actor_type, created_at)
SELECT store_id, variant_id, location_id, 'correction', on_hand, 0, on_hand, 0, 'opening balance', 'system', now()
FROM inventory_levels WHERE on_hand > 0
ORDER BY store_id, variant_id;
INSERT INTO inventory_movements (store_id, variant_id, location_id, reason, on_hand_delta, reserved_delta, on_hand_after,
                                 reserved_after, order_id, note, actor_type, created_at)
SELECT a.store_id, a.variant_id, a.location_id, 'order_reserve', 0, a.reserved, lv.on_hand,
       sum(a.reserved) OVER (PARTITION BY a.store_id, a.variant_id ORDER BY a.order_id, a.line_id), a.order_id,
       'opening balance', 'system', now()
FROM order_allocations a
JOIN inventory_levels lv ON lv.store_id = a.store_id AND lv.variant_id = a.variant_id AND lv.location_id = a.location_id;

ALTER TABLE products DROP COLUMN quantity;

-- +goose Down
ALTER TABLE products ADD COLUMN quantity int NOT NULL DEFAULT 0;
UPDATE products p SET quantity = COALESCE((SELECT sum(v.quantity) FROM variants v WHERE v.store_id = p.store_id AND v.product_id = p.id), 0);
DELETE FROM variants WHERE is_default;
DROP TABLE order_allocations;
DROP TABLE inventory_movements;
DROP TABLE inventory_adjustments;
DROP TABLE inventory_levels;
ALTER TABLE variants DROP COLUMN is_default;
