-- +goose Up
-- Analytics (decisions §17). Stores gain the time zone and first weekday
-- their reports are read in; NULL timezone means the currency's default.
ALTER TABLE stores
    ADD COLUMN timezone   text,
    ADD COLUMN week_start text NOT NULL DEFAULT 'saturday' CHECK (week_start IN ('saturday', 'sunday', 'monday'));

-- An order counts at its placement: creation, or conversion for a draft.
-- Drafts have none. Converted drafts take their conversion's time.
ALTER TABLE orders ADD COLUMN placed_at timestamptz;
UPDATE orders o SET placed_at = COALESCE(
        (SELECT min(a.created_at) FROM order_activities a
         WHERE a.store_id = o.store_id AND a.order_id = o.id AND a.kind = 'status_changed' AND a.data->>'converted' = 'true'),
        o.created_at)
    WHERE o.status <> 'DRAFT';
CREATE INDEX orders_store_placed_idx ON orders (store_id, placed_at) WHERE placed_at IS NOT NULL;

-- A line's sold_at is its order's placed_at while the order counts in
-- sales (placed, not cancelled), NULL otherwise: top products read a
-- range of it from one covering index instead of probing the lines of
-- every order in the range. The order's insert writes it; the trigger on
-- orders below keeps it through conversion and cancellation.
ALTER TABLE order_lines ADD COLUMN sold_at timestamptz;
UPDATE order_lines l SET sold_at = o.placed_at FROM orders o
    WHERE o.store_id = l.store_id AND o.id = l.order_id AND o.placed_at IS NOT NULL AND o.status NOT IN ('DRAFT', 'CANCELLED');
CREATE INDEX order_lines_store_sold_idx ON order_lines (store_id, sold_at)
    INCLUDE (product_id, order_id, quantity, returned_quantity, unit_price, total, discount) WHERE sold_at IS NOT NULL;

-- order_rollups: one row per store and UTC quarter hour of placed_at,
-- holding every order counter of §17. A local day, week or month in any
-- IANA zone (:30, :45 and DST included) is a sum of whole quarter hours.
-- Today's UTC-day rows are replaced and rebuilt from the orders.
DROP TABLE order_rollups;
CREATE TABLE order_rollups (
    store_id         uuid NOT NULL REFERENCES stores (id) ON DELETE CASCADE,
    bucket           timestamptz NOT NULL,
    orders           bigint NOT NULL DEFAULT 0,
    cancelled_orders bigint NOT NULL DEFAULT 0,
    gross_sales      bigint NOT NULL DEFAULT 0,
    discounts        bigint NOT NULL DEFAULT 0,
    returns          bigint NOT NULL DEFAULT 0,
    shipping         bigint NOT NULL DEFAULT 0,
    refunds          bigint NOT NULL DEFAULT 0,
    delivered_orders bigint NOT NULL DEFAULT 0,
    returned_orders  bigint NOT NULL DEFAULT 0,
    cod_orders       bigint NOT NULL DEFAULT 0,
    cod_delivered    bigint NOT NULL DEFAULT 0,
    cod_returned     bigint NOT NULL DEFAULT 0,
    cod_collected    bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (store_id, bucket)
);

-- The quarter hour an instant falls in.
CREATE FUNCTION rollup_bucket(at timestamptz) RETURNS timestamptz LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN date_bin('15 minutes', at, timestamptz '2000-01-01 00:00:00+00');

-- What an order row adds to its quarter hour, times sign; nothing for a
-- draft. Returned units and refunds are added from their own rows.
--   gross_sales: line totals before discounts; discounts: what discounts
--   took off the lines (the order's discount less what they took off
--   shipping); shipping: the shipping charged, net of its discounts. All
--   three leave out a cancelled order. cod_orders and its outcomes leave
--   out a cancelled order too: cod_orders = delivered + returned + pending.
-- +goose StatementBegin
CREATE FUNCTION order_rollup_figures(o orders, sign int)
    RETURNS TABLE (store_id uuid, bucket timestamptz, orders bigint, cancelled_orders bigint, gross_sales bigint, discounts bigint,
                   shipping bigint, delivered_orders bigint, returned_orders bigint, cod_orders bigint, cod_delivered bigint,
                   cod_returned bigint, cod_collected bigint)
    LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT o.store_id, rollup_bucket(o.placed_at), sign::bigint,
           (sign * (o.status = 'CANCELLED')::int)::bigint,
           sign * live * o.subtotal,
           sign * live * (o.discount - shipping_discount),
           sign * live * (o.shipping_fee - shipping_discount),
           (sign * (o.status = 'DELIVERED')::int)::bigint,
           (sign * (o.status = 'RETURNED')::int)::bigint,
           sign * live * cod,
           sign * cod * (o.status = 'DELIVERED')::int,
           sign * cod * (o.status = 'RETURNED')::int,
           sign * live * cod * o.collected_total
    FROM (SELECT (o.status <> 'CANCELLED')::int::bigint AS live, (o.payment_method = 'cod')::int::bigint AS cod,
                 COALESCE((SELECT sum((d->>'shipping_amount')::bigint) FROM jsonb_array_elements(o.discounts) d), 0)::bigint AS shipping_discount) x
    WHERE o.placed_at IS NOT NULL AND o.status <> 'DRAFT'
$$;
-- +goose StatementEnd

-- What a line's returned units are worth: their price less their share of
-- the line's discount (prorated by quantity, half up, as §14). It takes
-- columns, not the row, so top products can call it from an index-only scan.
CREATE FUNCTION line_returns(quantity int, returned_quantity int, unit_price bigint, discount bigint) RETURNS bigint
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN returned_quantity * unit_price - CASE
        WHEN returned_quantity <= 0 THEN 0
        WHEN returned_quantity >= quantity THEN discount
        ELSE (discount * returned_quantity * 2 + quantity) / (quantity * 2) END;

-- What a refund adds: its amount once it succeeded.
CREATE FUNCTION refund_rollup(r order_refunds) RETURNS bigint LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN CASE WHEN r.status = 'succeeded' THEN r.amount ELSE 0 END;

-- The rollups of one store's orders placed in [from_at, to_at), computed
-- from the orders themselves: the backfill, the consistency test's
-- reference and the benchmark's baseline.
-- +goose StatementBegin
CREATE FUNCTION recompute_order_rollups(store uuid, from_at timestamptz, to_at timestamptz) RETURNS SETOF order_rollups
    LANGUAGE sql STABLE AS $$
    WITH placed AS (
        SELECT * FROM orders o WHERE o.store_id = store AND o.placed_at >= from_at AND o.placed_at < to_at AND o.status <> 'DRAFT'
    ), figures AS (
        SELECT f.*, 0::bigint AS returns, 0::bigint AS refunds FROM placed o, order_rollup_figures(o, 1) f
        UNION ALL
        SELECT o.store_id, rollup_bucket(o.placed_at), 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, line_returns(l.quantity, l.returned_quantity, l.unit_price, l.discount), 0
        FROM placed o JOIN order_lines l ON l.store_id = o.store_id AND l.order_id = o.id WHERE l.returned_quantity <> 0
        UNION ALL
        SELECT o.store_id, rollup_bucket(o.placed_at), 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, refund_rollup(r)
        FROM placed o JOIN order_refunds r ON r.store_id = o.store_id AND r.order_id = o.id WHERE r.status = 'succeeded'
    )
    SELECT store_id, bucket, sum(orders)::bigint, sum(cancelled_orders)::bigint, sum(gross_sales)::bigint, sum(discounts)::bigint,
           sum(returns)::bigint, sum(shipping)::bigint, sum(refunds)::bigint, sum(delivered_orders)::bigint, sum(returned_orders)::bigint,
           sum(cod_orders)::bigint, sum(cod_delivered)::bigint, sum(cod_returned)::bigint, sum(cod_collected)::bigint
    FROM figures GROUP BY store_id, bucket
$$;
-- +goose StatementEnd

-- Each change that moves a counter writes its delta in its own
-- transaction: the triggers see every statement that changes an order, a
-- line's returned units or a refund, whichever code path makes it.
-- +goose StatementBegin
CREATE FUNCTION roll_up_order() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    -- A placement that moves (a draft's conversion) takes the order's
    -- returned units and refunds along; any other change leaves them.
    moved_returns bigint := 0;
    moved_refunds bigint := 0;
BEGIN
    IF TG_OP = 'INSERT' THEN
        -- A new order: its own figures only (its lines and refunds come later).
        INSERT INTO order_rollups AS r (store_id, bucket, orders, cancelled_orders, gross_sales, discounts, shipping, delivered_orders,
                                        returned_orders, cod_orders, cod_delivered, cod_returned, cod_collected)
        SELECT * FROM order_rollup_figures(NEW, 1)
        ON CONFLICT (store_id, bucket) DO UPDATE SET
            orders = r.orders + EXCLUDED.orders, cancelled_orders = r.cancelled_orders + EXCLUDED.cancelled_orders,
            gross_sales = r.gross_sales + EXCLUDED.gross_sales, discounts = r.discounts + EXCLUDED.discounts,
            shipping = r.shipping + EXCLUDED.shipping, delivered_orders = r.delivered_orders + EXCLUDED.delivered_orders,
            returned_orders = r.returned_orders + EXCLUDED.returned_orders, cod_orders = r.cod_orders + EXCLUDED.cod_orders,
            cod_delivered = r.cod_delivered + EXCLUDED.cod_delivered, cod_returned = r.cod_returned + EXCLUDED.cod_returned,
            cod_collected = r.cod_collected + EXCLUDED.cod_collected;
        RETURN NULL;
    END IF;
    IF OLD.placed_at IS DISTINCT FROM NEW.placed_at OR (OLD.status IN ('DRAFT', 'CANCELLED')) <> (NEW.status IN ('DRAFT', 'CANCELLED')) THEN
        UPDATE order_lines SET sold_at = CASE WHEN NEW.status NOT IN ('DRAFT', 'CANCELLED') THEN NEW.placed_at END
        WHERE store_id = NEW.store_id AND order_id = NEW.id;
    END IF;
    IF OLD.placed_at IS DISTINCT FROM NEW.placed_at THEN
        SELECT COALESCE(sum(line_returns(l.quantity, l.returned_quantity, l.unit_price, l.discount)), 0) INTO moved_returns FROM order_lines l WHERE l.store_id = NEW.store_id AND l.order_id = NEW.id;
        SELECT COALESCE(sum(refund_rollup(x)), 0) INTO moved_refunds FROM order_refunds x WHERE x.store_id = NEW.store_id AND x.order_id = NEW.id;
    END IF;
    INSERT INTO order_rollups AS r (store_id, bucket, orders, cancelled_orders, gross_sales, discounts, shipping, delivered_orders,
                                    returned_orders, cod_orders, cod_delivered, cod_returned, cod_collected, returns, refunds)
    SELECT f.store_id, f.bucket, sum(f.orders), sum(f.cancelled_orders), sum(f.gross_sales), sum(f.discounts), sum(f.shipping),
           sum(f.delivered_orders), sum(f.returned_orders), sum(f.cod_orders), sum(f.cod_delivered), sum(f.cod_returned), sum(f.cod_collected),
           sum(f.returns), sum(f.refunds)
    FROM (SELECT f.*, moved_returns AS returns, moved_refunds AS refunds FROM order_rollup_figures(NEW, 1) f
          UNION ALL
          SELECT f.*, -moved_returns, -moved_refunds FROM order_rollup_figures(OLD, -1) f) f
    GROUP BY f.store_id, f.bucket
    HAVING sum(abs(f.orders) + abs(f.cancelled_orders) + abs(f.gross_sales) + abs(f.discounts) + abs(f.shipping) + abs(f.delivered_orders)
               + abs(f.returned_orders) + abs(f.cod_orders) + abs(f.cod_delivered) + abs(f.cod_returned) + abs(f.cod_collected)
               + abs(f.returns) + abs(f.refunds)) <> 0
    ON CONFLICT (store_id, bucket) DO UPDATE SET
        returns = r.returns + EXCLUDED.returns, refunds = r.refunds + EXCLUDED.refunds,
        orders = r.orders + EXCLUDED.orders, cancelled_orders = r.cancelled_orders + EXCLUDED.cancelled_orders,
        gross_sales = r.gross_sales + EXCLUDED.gross_sales, discounts = r.discounts + EXCLUDED.discounts,
        shipping = r.shipping + EXCLUDED.shipping, delivered_orders = r.delivered_orders + EXCLUDED.delivered_orders,
        returned_orders = r.returned_orders + EXCLUDED.returned_orders, cod_orders = r.cod_orders + EXCLUDED.cod_orders,
        cod_delivered = r.cod_delivered + EXCLUDED.cod_delivered, cod_returned = r.cod_returned + EXCLUDED.cod_returned,
        cod_collected = r.cod_collected + EXCLUDED.cod_collected;
    RETURN NULL;
END $$;
-- +goose StatementEnd
CREATE TRIGGER orders_roll_up_insert AFTER INSERT ON orders FOR EACH ROW WHEN (NEW.placed_at IS NOT NULL) EXECUTE FUNCTION roll_up_order();
CREATE TRIGGER orders_roll_up_update AFTER UPDATE ON orders FOR EACH ROW
    WHEN (OLD.status IS DISTINCT FROM NEW.status OR OLD.placed_at IS DISTINCT FROM NEW.placed_at
          OR OLD.collected_total IS DISTINCT FROM NEW.collected_total OR OLD.subtotal IS DISTINCT FROM NEW.subtotal
          OR OLD.discount IS DISTINCT FROM NEW.discount OR OLD.shipping_fee IS DISTINCT FROM NEW.shipping_fee
          OR OLD.payment_method IS DISTINCT FROM NEW.payment_method OR OLD.discounts IS DISTINCT FROM NEW.discounts)
    EXECUTE FUNCTION roll_up_order();

-- Adds returns and refunds to the quarter hour an order was placed in;
-- nothing while it is a draft.
-- +goose StatementBegin
CREATE FUNCTION add_to_order_bucket(store uuid, order_id uuid, returns bigint, refunds bigint) RETURNS void LANGUAGE sql
BEGIN ATOMIC
    INSERT INTO order_rollups AS r (store_id, bucket, returns, refunds)
    SELECT o.store_id, rollup_bucket(o.placed_at), add_to_order_bucket.returns, add_to_order_bucket.refunds FROM orders o
    WHERE o.store_id = add_to_order_bucket.store AND o.id = add_to_order_bucket.order_id AND o.placed_at IS NOT NULL AND o.status <> 'DRAFT'
    ON CONFLICT (store_id, bucket) DO UPDATE SET returns = r.returns + EXCLUDED.returns, refunds = r.refunds + EXCLUDED.refunds;
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE FUNCTION roll_up_line_returns() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    delta bigint := line_returns(NEW.quantity, NEW.returned_quantity, NEW.unit_price, NEW.discount)
        - CASE WHEN TG_OP = 'UPDATE' THEN line_returns(OLD.quantity, OLD.returned_quantity, OLD.unit_price, OLD.discount) ELSE 0 END;
BEGIN
    IF delta <> 0 THEN
        PERFORM add_to_order_bucket(NEW.store_id, NEW.order_id, delta, 0);
    END IF;
    RETURN NULL;
END $$;
-- +goose StatementEnd
CREATE TRIGGER order_lines_roll_up_insert AFTER INSERT ON order_lines FOR EACH ROW WHEN (NEW.returned_quantity <> 0)
    EXECUTE FUNCTION roll_up_line_returns();
CREATE TRIGGER order_lines_roll_up_update AFTER UPDATE ON order_lines FOR EACH ROW
    WHEN (OLD.returned_quantity IS DISTINCT FROM NEW.returned_quantity OR OLD.quantity IS DISTINCT FROM NEW.quantity
          OR OLD.unit_price IS DISTINCT FROM NEW.unit_price OR OLD.discount IS DISTINCT FROM NEW.discount)
    EXECUTE FUNCTION roll_up_line_returns();

-- +goose StatementBegin
CREATE FUNCTION roll_up_refund() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    delta bigint := refund_rollup(NEW) - CASE WHEN TG_OP = 'UPDATE' THEN refund_rollup(OLD) ELSE 0 END;
BEGIN
    IF delta <> 0 THEN
        PERFORM add_to_order_bucket(NEW.store_id, NEW.order_id, 0, delta);
    END IF;
    RETURN NULL;
END $$;
-- +goose StatementEnd
CREATE TRIGGER order_refunds_roll_up_insert AFTER INSERT ON order_refunds FOR EACH ROW WHEN (NEW.status = 'succeeded')
    EXECUTE FUNCTION roll_up_refund();
CREATE TRIGGER order_refunds_roll_up_update AFTER UPDATE ON order_refunds FOR EACH ROW
    WHEN (OLD.status IS DISTINCT FROM NEW.status OR OLD.amount IS DISTINCT FROM NEW.amount)
    EXECUTE FUNCTION roll_up_refund();

INSERT INTO order_rollups SELECT r.* FROM stores s, recompute_order_rollups(s.id, '-infinity', 'infinity') r;

-- +goose Down
DROP TRIGGER order_refunds_roll_up_update ON order_refunds;
DROP TRIGGER order_refunds_roll_up_insert ON order_refunds;
DROP TRIGGER order_lines_roll_up_update ON order_lines;
DROP TRIGGER order_lines_roll_up_insert ON order_lines;
DROP TRIGGER orders_roll_up_update ON orders;
DROP TRIGGER orders_roll_up_insert ON orders;
DROP FUNCTION roll_up_refund();
DROP FUNCTION roll_up_line_returns();
DROP FUNCTION add_to_order_bucket(uuid, uuid, bigint, bigint);
DROP FUNCTION roll_up_order();
DROP FUNCTION recompute_order_rollups(uuid, timestamptz, timestamptz);
DROP FUNCTION refund_rollup(order_refunds);
DROP FUNCTION line_returns(int, int, bigint, bigint);
DROP FUNCTION order_rollup_figures(orders, int);
DROP FUNCTION rollup_bucket(timestamptz);
DROP TABLE order_rollups;
CREATE TABLE order_rollups (
    store_id uuid NOT NULL REFERENCES stores (id) ON DELETE CASCADE,
    day      date NOT NULL,
    orders   int NOT NULL DEFAULT 0,
    revenue  bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (store_id, day)
);
INSERT INTO order_rollups (store_id, day, orders, revenue)
    SELECT store_id, (created_at AT TIME ZONE 'UTC')::date, count(*), sum(total) FROM orders WHERE status <> 'DRAFT' GROUP BY 1, 2;
DROP INDEX order_lines_store_sold_idx;
ALTER TABLE order_lines DROP COLUMN sold_at;
DROP INDEX orders_store_placed_idx;
ALTER TABLE orders DROP COLUMN placed_at;
ALTER TABLE stores DROP COLUMN timezone, DROP COLUMN week_start;
