-- +goose Up
-- Every movement names what caused it (decisions §11): a shipment's
-- movements its shipment, a return's its return. For a while the stock
-- moves wrote both as null; this fills them where the shipments' and
-- returns' own rows tell which one, and leaves them null where they cannot
-- (docs/decisions.md, "Movement references").
--
-- What ties a movement to its cause is the transaction that wrote both:
-- the return's receipt or the shipment event written with it shares its
-- xmin and follows it within the minute (the service stamps rows with its
-- own clock, call by call, so their times are close but never equal). The
-- cause must also hold the movement's variant, and exactly one may match:
-- two shipments of one order that moved together with the same variant
-- (the SHIPPED status endpoint, one carrier batch) leave it null.

-- A return's receipt, written with the return's move to received (its
-- updated_at; a received return never moves again), restocking the
-- movement's variant at its location. A return refused at the door also
-- names its shipment.
WITH candidate AS (
    SELECT m.id, r.id AS return_id, r.shipment_id
    FROM inventory_movements m
    JOIN returns r ON r.store_id = m.store_id AND r.order_id = m.order_id
    WHERE m.reason = 'return_restock' AND m.return_id IS NULL AND r.status = 'received'
      AND r.xmin = m.xmin AND r.updated_at >= m.created_at AND r.updated_at < m.created_at + interval '1 minute'
      AND EXISTS (SELECT 1 FROM return_lines rl JOIN order_lines ol ON ol.store_id = rl.store_id AND ol.id = rl.line_id
                  WHERE rl.store_id = r.store_id AND rl.return_id = r.id AND rl.restocked_quantity > 0
                    AND rl.location_id = m.location_id AND ol.variant_id = m.variant_id)
), single AS (
    SELECT id, (array_agg(return_id))[1] AS return_id, (array_agg(shipment_id))[1] AS shipment_id FROM candidate GROUP BY id HAVING count(*) = 1
)
UPDATE inventory_movements m SET return_id = single.return_id, shipment_id = COALESCE(m.shipment_id, single.shipment_id)
FROM single WHERE m.id = single.id;

-- A shipment's own moves, each written with one of its events:
--   order_ship, with its departure (or with the delivery a partial
--     acceptance reported for a label, whose pieces left then);
--   order_release, a reservation moved to a new shipment's location, with
--     its label_created event;
--   return_restock not from a return: pieces refused at the door of a
--     departed shipment (a partial acceptance), with the delivery the
--     acceptance reported for it.
WITH cause (reason, note, statuses, source) AS (VALUES
    ('order_ship', NULL, '{in_transit,out_for_delivery,delivered}'::text[], NULL),
    ('order_release', 'reservation moved to the shipment''s location', '{label_created}', NULL),
    ('return_restock', NULL, '{delivered}', 'system')
), candidate AS (
    SELECT m.id, s.id AS shipment_id
    FROM inventory_movements m
    JOIN cause c ON c.reason = m.reason AND (c.note IS NULL OR c.note = m.note)
    JOIN shipments s ON s.store_id = m.store_id AND s.order_id = m.order_id
    WHERE m.shipment_id IS NULL AND m.return_id IS NULL
      AND EXISTS (SELECT 1 FROM shipment_events e
                  WHERE e.store_id = s.store_id AND e.shipment_id = s.id AND e.applied
                    AND e.status = ANY (c.statuses) AND e.source = COALESCE(c.source, e.source)
                    AND e.xmin = m.xmin AND e.created_at >= m.created_at AND e.created_at < m.created_at + interval '1 minute')
      AND EXISTS (SELECT 1 FROM shipment_lines l JOIN order_lines ol ON ol.store_id = l.store_id AND ol.id = l.line_id
                  WHERE l.store_id = s.store_id AND l.shipment_id = s.id AND ol.variant_id = m.variant_id)
), single AS (
    SELECT id, (array_agg(shipment_id))[1] AS shipment_id FROM candidate GROUP BY id HAVING count(*) = 1
)
UPDATE inventory_movements m SET shipment_id = single.shipment_id FROM single WHERE m.id = single.id;

-- The old write called both sides of a moved reservation order_release;
-- the side that arrived at the shipment's location is the order_reserve
-- §11 names.
UPDATE inventory_movements SET reason = 'order_reserve'
WHERE reason = 'order_release' AND note = 'reservation moved to the shipment''s location' AND reserved_delta > 0;

-- GET /inventory/movements?shipment_id= and ?return_id=.
CREATE INDEX inventory_movements_shipment_idx ON inventory_movements (store_id, shipment_id) WHERE shipment_id IS NOT NULL;
CREATE INDEX inventory_movements_return_idx ON inventory_movements (store_id, return_id) WHERE return_id IS NOT NULL;

-- +goose Down
-- The references filled stay, as the reasons corrected: the service
-- writes them so too.
DROP INDEX inventory_movements_return_idx;
DROP INDEX inventory_movements_shipment_idx;
