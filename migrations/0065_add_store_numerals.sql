-- +goose Up
-- The digits a store shows its Arabic-reading buyers (decisions §23):
-- latn (1,234.50, the default) or arab (١٬٢٣٤٫٥٠). English text always
-- shows Latin digits.
ALTER TABLE stores ADD COLUMN numerals text NOT NULL DEFAULT 'latn' CHECK (numerals IN ('latn', 'arab'));

-- +goose Down
ALTER TABLE stores DROP COLUMN numerals;
