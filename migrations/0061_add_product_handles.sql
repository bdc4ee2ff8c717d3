-- +goose Up
-- Products gain a handle (decisions §23): their storefront address,
-- /products/{handle}, made from the name at creation as storage/handle's
-- FromTitle makes one (NFKC, tatweel and tashkeel dropped, Arabic-Indic and
-- Persian digits to ASCII, lower case, every other character a '-'; "product"
-- when nothing is left), -2, -3 … on a name the store's products share, in
-- the order they were created. The handle stays when the name changes.
ALTER TABLE products ADD COLUMN handle text;

WITH derived AS (
    SELECT p.id, p.store_id, p.created_at,
        trim(BOTH '-' FROM left(trim(BOTH '-' FROM regexp_replace(lower(translate(
            regexp_replace(normalize(p.name, NFKC), '[\u0640\u064B-\u065F\u0670]', '', 'g'),
            '٠١٢٣٤٥٦٧٨٩۰۱۲۳۴۵۶۷۸۹', '01234567890123456789')),
            '[^[:alpha:]0-9_]+', '-', 'g')), 110)) AS base
    FROM products p
), ranked AS (
    SELECT d.id, CASE WHEN d.base = '' THEN 'product' ELSE d.base END AS stem,
        row_number() OVER (PARTITION BY d.store_id, CASE WHEN d.base = '' THEN 'product' ELSE d.base END
                           ORDER BY d.created_at, d.id) AS n
    FROM derived d
)
UPDATE products p SET handle = CASE WHEN r.n = 1 THEN r.stem ELSE r.stem || '-' || r.n END
FROM ranked r WHERE p.id = r.id;

-- A numbered handle can meet a name that reads the same ("Tee" twice makes
-- tee-2, which a product named "Tee 2" also derives): the later one gets a
-- piece of its id instead.
WITH dup AS (
    SELECT id, row_number() OVER (PARTITION BY store_id, handle ORDER BY created_at, id) AS k FROM products
)
UPDATE products p SET handle = p.handle || '-' || right(replace(p.id::text, '-', ''), 8)
FROM dup WHERE dup.id = p.id AND dup.k > 1;

-- Rows written without one (only by hand: the service always sets it) get
-- an unguessable one rather than failing.
ALTER TABLE products ALTER COLUMN handle SET DEFAULT ('product-' || replace(gen_random_uuid()::text, '-', '')),
    ALTER COLUMN handle SET NOT NULL;
-- text_pattern_ops: the same uniqueness, and prefix searches (a free
-- "name-N") read the index.
CREATE UNIQUE INDEX products_store_handle_key ON products (store_id, handle text_pattern_ops);

-- +goose Down
DROP INDEX products_store_handle_key;
ALTER TABLE products DROP COLUMN handle;
