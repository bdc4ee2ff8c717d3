-- +goose Up
-- Orders snapshot the rate they ship with (decisions §15); zone edits
-- never touch placed orders.
ALTER TABLE orders ADD COLUMN shipping_lines jsonb NOT NULL DEFAULT '[]';

-- +goose Down
ALTER TABLE orders DROP COLUMN shipping_lines;
