-- +goose Up
-- Variants carry their shipping weight in grams (decisions §11's CSV and
-- §15's weight bands); null means "not given" (0 when weighing a cart).
ALTER TABLE variants ADD COLUMN weight_grams int CHECK (weight_grams BETWEEN 0 AND 1000000);

-- +goose Down
ALTER TABLE variants DROP COLUMN weight_grams;
