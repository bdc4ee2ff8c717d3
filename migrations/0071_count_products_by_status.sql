-- +goose Up
-- A product list's total (the storefront's catalog, the merchant's list
-- with no filter or a status alone) counted the store's product rows on
-- every page: a cost that grows with the catalog, and whose plan changed
-- with the other stores' products (issue 59: the storefront's catalog
-- list of a 10 000-product store ran at 0.77 of its rate once the table
-- held 1 000 000 products across stores). product_status_counts keeps
-- the count per store and status, in the transaction of every write that
-- adds, removes or moves a product between statuses; lists with other
-- filters still count.
CREATE TABLE product_status_counts (
    store_id uuid NOT NULL REFERENCES stores (id) ON DELETE CASCADE,
    status   text NOT NULL,
    n        bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (store_id, status)
);

-- The counts recomputed from the products: the backfill, and what tests
-- compare the kept counts with.
-- +goose StatementBegin
CREATE FUNCTION recount_product_statuses(p_store uuid)
RETURNS TABLE (store_id uuid, status text, n bigint) LANGUAGE sql STABLE AS $$
    SELECT p.store_id, p.status, count(*) FROM products p WHERE p_store IS NULL OR p.store_id = p_store GROUP BY p.store_id, p.status
$$;
-- +goose StatementEnd

INSERT INTO product_status_counts SELECT * FROM recount_product_statuses(NULL);

-- Statement triggers with transition tables: an import of 40 000 products
-- adds to each count once, not 40 000 times. An update touches the counts
-- only for the rows whose status or store changed, so an ordinary product
-- edit takes no lock on them.
-- +goose StatementBegin
CREATE FUNCTION count_product_statuses() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO product_status_counts AS c (store_id, status, n)
        SELECT r.store_id, r.status, count(*) FROM new_rows r GROUP BY r.store_id, r.status ORDER BY 1, 2
        ON CONFLICT (store_id, status) DO UPDATE SET n = c.n + excluded.n;
    ELSIF TG_OP = 'DELETE' THEN
        UPDATE product_status_counts c SET n = c.n - d.n
        FROM (SELECT r.store_id, r.status, count(*) AS n FROM old_rows r GROUP BY r.store_id, r.status) d
        WHERE c.store_id = d.store_id AND c.status = d.status;
    ELSE
        INSERT INTO product_status_counts AS c (store_id, status, n)
        SELECT d.store_id, d.status, sum(d.n) FROM (
                SELECT n.store_id, n.status, 1 AS n FROM old_rows o JOIN new_rows n ON n.id = o.id
                WHERE o.status IS DISTINCT FROM n.status OR o.store_id IS DISTINCT FROM n.store_id
                UNION ALL
                SELECT o.store_id, o.status, -1 FROM old_rows o JOIN new_rows n ON n.id = o.id
                WHERE o.status IS DISTINCT FROM n.status OR o.store_id IS DISTINCT FROM n.store_id) d
            GROUP BY d.store_id, d.status ORDER BY 1, 2
        ON CONFLICT (store_id, status) DO UPDATE SET n = c.n + excluded.n;
    END IF;
    RETURN NULL;
END
$$;
-- +goose StatementEnd

CREATE TRIGGER products_count_statuses_insert AFTER INSERT ON products REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION count_product_statuses();
CREATE TRIGGER products_count_statuses_update AFTER UPDATE ON products REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION count_product_statuses();
CREATE TRIGGER products_count_statuses_delete AFTER DELETE ON products REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION count_product_statuses();

-- +goose Down
DROP TRIGGER products_count_statuses_delete ON products;
DROP TRIGGER products_count_statuses_update ON products;
DROP TRIGGER products_count_statuses_insert ON products;
DROP FUNCTION count_product_statuses();
DROP FUNCTION recount_product_statuses(uuid);
DROP TABLE product_status_counts;
