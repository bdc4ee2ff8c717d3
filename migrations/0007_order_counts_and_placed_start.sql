-- +goose Up
-- Per-store order counts by status, kept in the transaction of every status
-- change, so the unfiltered counts and list totals of a store with a million
-- orders are a lookup rather than a scan.
CREATE TABLE order_status_counts (
    store_id uuid NOT NULL REFERENCES stores (id) ON DELETE CASCADE,
    status   text NOT NULL,
    n        bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (store_id, status)
);
INSERT INTO order_status_counts (store_id, status, n)
    SELECT store_id, status, count(*) FROM orders WHERE status <> 'DRAFT' GROUP BY store_id, status;

-- The order-placed workflow is started by the worker's dispatcher after
-- commit (not inside the request); NULL marks orders still waiting.
ALTER TABLE orders ADD COLUMN placed_started_at timestamptz;
UPDATE orders SET placed_started_at = created_at WHERE status <> 'DRAFT';
CREATE INDEX orders_placed_pending_idx ON orders (created_at) WHERE placed_started_at IS NULL AND status <> 'DRAFT';

-- +goose Down
DROP INDEX orders_placed_pending_idx;
ALTER TABLE orders DROP COLUMN placed_started_at;
DROP TABLE order_status_counts;
