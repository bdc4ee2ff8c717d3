-- +goose Up
-- Top products count an order once per product (§17) however many of its
-- lines hold that product (two variants). Grouping the lines of a range by
-- (product, order) first sorted every line of the range; a flag on the
-- order's first line of each product lets one aggregate count the orders
-- instead. Orders write it at creation; lines are never added to an order
-- afterwards.
ALTER TABLE order_lines ADD COLUMN first_of_product boolean NOT NULL DEFAULT false;
UPDATE order_lines SET first_of_product = true
    WHERE id IN (SELECT DISTINCT ON (store_id, order_id, product_id) id FROM order_lines
                 WHERE product_id IS NOT NULL ORDER BY store_id, order_id, product_id, position);
DROP INDEX order_lines_store_sold_idx;
CREATE INDEX order_lines_store_sold_idx ON order_lines (store_id, sold_at)
    INCLUDE (product_id, first_of_product, quantity, returned_quantity, unit_price, total, discount) WHERE sold_at IS NOT NULL;

-- A new order's figures are added to its quarter hour at commit rather
-- than at its insert: the bucket row is shared by every order of the
-- quarter hour, and taking its lock at the insert held it through the
-- rest of the order's transaction (lines, stock, discounts, outbox),
-- queueing concurrent orders behind each other. Deferred, the lock is
-- held for the commit alone. The delta is the inserted row's (a deferred
-- trigger sees the row as the event left it), so later updates in the
-- same transaction still add their own deltas through the update trigger.
DROP TRIGGER orders_roll_up_insert ON orders;
CREATE CONSTRAINT TRIGGER orders_roll_up_insert AFTER INSERT ON orders DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW WHEN (NEW.placed_at IS NOT NULL) EXECUTE FUNCTION roll_up_order();

-- +goose Down
DROP TRIGGER orders_roll_up_insert ON orders;
CREATE TRIGGER orders_roll_up_insert AFTER INSERT ON orders FOR EACH ROW WHEN (NEW.placed_at IS NOT NULL) EXECUTE FUNCTION roll_up_order();
DROP INDEX order_lines_store_sold_idx;
CREATE INDEX order_lines_store_sold_idx ON order_lines (store_id, sold_at)
    INCLUDE (product_id, order_id, quantity, returned_quantity, unit_price, total, discount) WHERE sold_at IS NOT NULL;
ALTER TABLE order_lines DROP COLUMN first_of_product;
