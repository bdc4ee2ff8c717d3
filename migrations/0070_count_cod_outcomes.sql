-- +goose Up
-- The trust check (storage/customer_codrisk.go) scores a COD order's phone from its
-- outcomes: every store's own delivered and returned COD orders, and the
-- other stores' carrier-confirmed ones. It counted them from the orders on
-- every order, so a phone's thousandth order read a thousand rows while it
-- held the store's stock and number locks (issue 59: 10 000 orders of one
-- customer halved the store's order rate). cod_phone_outcomes keeps the
-- counts per phone and store, maintained by a trigger on orders in the
-- transaction that changes an outcome; the check reads one row per store
-- the phone has an outcome in, whatever its history.
CREATE TABLE cod_phone_outcomes (
    customer_phone      text NOT NULL,
    store_id            uuid NOT NULL REFERENCES stores (id) ON DELETE CASCADE,
    returned            integer NOT NULL DEFAULT 0, -- RETURNED, however recorded
    completed           integer NOT NULL DEFAULT 0, -- DELIVERED or RETURNED
    confirmed_returned  integer NOT NULL DEFAULT 0, -- the same, carrier-confirmed only
    confirmed_completed integer NOT NULL DEFAULT 0,
    PRIMARY KEY (customer_phone, store_id)
);

-- The counts recomputed from the orders, of one store or (NULL) all: the
-- backfill below, and what tests and the growth benchmark compare the
-- kept counts with.
-- +goose StatementBegin
CREATE FUNCTION recount_cod_phone_outcomes(p_store uuid)
RETURNS TABLE (customer_phone text, store_id uuid, returned integer, completed integer, confirmed_returned integer, confirmed_completed integer)
LANGUAGE sql STABLE AS $$
    SELECT o.customer_phone, o.store_id,
        count(*) FILTER (WHERE o.status = 'RETURNED')::int,
        count(*)::int,
        count(*) FILTER (WHERE o.status = 'RETURNED' AND o.carrier_confirmed_at IS NOT NULL)::int,
        count(*) FILTER (WHERE o.carrier_confirmed_at IS NOT NULL)::int
    FROM orders o
    WHERE o.payment_method = 'cod' AND o.status IN ('DELIVERED', 'RETURNED') AND o.customer_phone IS NOT NULL
      AND (p_store IS NULL OR o.store_id = p_store)
    GROUP BY o.customer_phone, o.store_id
$$;
-- +goose StatementEnd

INSERT INTO cod_phone_outcomes SELECT * FROM recount_cod_phone_outcomes(NULL);

-- An order row's outcome leaves its old phone's counts and joins its new
-- one's: a status, payment method, phone or carrier confirmation change,
-- an insert (seeded or imported orders) and a delete.
-- +goose StatementBegin
CREATE FUNCTION count_cod_outcome() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP <> 'INSERT' AND OLD.payment_method = 'cod' AND OLD.status IN ('DELIVERED', 'RETURNED') AND OLD.customer_phone IS NOT NULL THEN
        UPDATE cod_phone_outcomes c SET
            returned = c.returned - (OLD.status = 'RETURNED')::int,
            completed = c.completed - 1,
            confirmed_returned = c.confirmed_returned - (OLD.status = 'RETURNED' AND OLD.carrier_confirmed_at IS NOT NULL)::int,
            confirmed_completed = c.confirmed_completed - (OLD.carrier_confirmed_at IS NOT NULL)::int
        WHERE c.customer_phone = OLD.customer_phone AND c.store_id = OLD.store_id;
    END IF;
    IF TG_OP <> 'DELETE' AND NEW.payment_method = 'cod' AND NEW.status IN ('DELIVERED', 'RETURNED') AND NEW.customer_phone IS NOT NULL THEN
        INSERT INTO cod_phone_outcomes AS c (customer_phone, store_id, returned, completed, confirmed_returned, confirmed_completed)
        VALUES (NEW.customer_phone, NEW.store_id, (NEW.status = 'RETURNED')::int, 1,
            (NEW.status = 'RETURNED' AND NEW.carrier_confirmed_at IS NOT NULL)::int, (NEW.carrier_confirmed_at IS NOT NULL)::int)
        ON CONFLICT (customer_phone, store_id) DO UPDATE SET
            returned = c.returned + excluded.returned,
            completed = c.completed + excluded.completed,
            confirmed_returned = c.confirmed_returned + excluded.confirmed_returned,
            confirmed_completed = c.confirmed_completed + excluded.confirmed_completed;
    END IF;
    RETURN NULL;
END
$$;
-- +goose StatementEnd

-- Most orders never fire it: a new order is PENDING, and most updates
-- leave the outcome alone.
CREATE TRIGGER orders_count_cod_outcome_insert AFTER INSERT ON orders FOR EACH ROW
    WHEN (NEW.payment_method = 'cod' AND NEW.status IN ('DELIVERED', 'RETURNED'))
    EXECUTE FUNCTION count_cod_outcome();
CREATE TRIGGER orders_count_cod_outcome_update AFTER UPDATE OF status, payment_method, customer_phone, carrier_confirmed_at, store_id ON orders FOR EACH ROW
    WHEN ((OLD.payment_method = 'cod' AND OLD.status IN ('DELIVERED', 'RETURNED')) OR (NEW.payment_method = 'cod' AND NEW.status IN ('DELIVERED', 'RETURNED')))
    EXECUTE FUNCTION count_cod_outcome();
CREATE TRIGGER orders_count_cod_outcome_delete AFTER DELETE ON orders FOR EACH ROW
    WHEN (OLD.payment_method = 'cod' AND OLD.status IN ('DELIVERED', 'RETURNED'))
    EXECUTE FUNCTION count_cod_outcome();

-- +goose Down
DROP TRIGGER orders_count_cod_outcome_delete ON orders;
DROP TRIGGER orders_count_cod_outcome_update ON orders;
DROP TRIGGER orders_count_cod_outcome_insert ON orders;
DROP FUNCTION count_cod_outcome();
DROP FUNCTION recount_cod_phone_outcomes(uuid);
DROP TABLE cod_phone_outcomes;
