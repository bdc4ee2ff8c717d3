-- +goose Up
-- The W3C traceparent of the request that placed an order, so the
-- order-placed workflow the dispatcher starts after commit continues that
-- request's trace (empty when tracing is off).
ALTER TABLE orders ADD COLUMN trace_parent text;

-- +goose Down
ALTER TABLE orders DROP COLUMN trace_parent;
