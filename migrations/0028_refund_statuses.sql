-- +goose Up
-- Refund statuses (decisions §13): a stored `completed` refund is
-- `succeeded` (§4's "completed refund").
ALTER TABLE order_refunds DROP CONSTRAINT order_refunds_status_check;
UPDATE order_refunds SET status = 'succeeded' WHERE status = 'completed';
ALTER TABLE order_refunds ADD CONSTRAINT order_refunds_status_check CHECK (status IN ('pending', 'succeeded', 'failed'));

-- +goose Down
ALTER TABLE order_refunds DROP CONSTRAINT order_refunds_status_check;
UPDATE order_refunds SET status = 'completed' WHERE status = 'succeeded';
ALTER TABLE order_refunds ADD CONSTRAINT order_refunds_status_check CHECK (status IN ('pending', 'completed', 'failed'));
