-- +goose Up
-- Deliveries and their attempts are kept 30 days (docs/decisions.md,
-- "Webhook delivery retention"); the hourly purge finds the old ones by
-- their time. Deliveries are written in the order of their events, so a
-- block-range index serves that read at almost no cost to the fan-out's
-- inserts, and it changes no column an update touches (HOT updates stay).
CREATE INDEX webhook_deliveries_created_brin ON webhook_deliveries USING brin (created_at);

-- +goose Down
DROP INDEX webhook_deliveries_created_brin;
