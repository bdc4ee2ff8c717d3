-- +goose Up
-- Collections (decisions §21): merchandising sets for the storefront and the
-- theme's collection pickers, manual or smart, each with a handle unique in
-- its store.
--
-- A smart collection keeps two sets of rules: rules, what the merchant last
-- wrote (what reads show), and applied_rules, what its stored membership
-- answers to. Product writes evaluate applied_rules in their own
-- transaction; a rule change bumps rules_version, and the
-- collection-rebuild:<id> workflow (started once rules_version passes
-- rebuild_started) swaps the membership and applied_rules at once, so reads
-- show the old set until then (docs/decisions.md, "Collections").
CREATE TABLE collections (
    id              uuid PRIMARY KEY,
    store_id        uuid NOT NULL REFERENCES stores (id) ON DELETE CASCADE,
    handle          text NOT NULL,
    title           jsonb NOT NULL,
    description     jsonb NOT NULL DEFAULT '{}',
    image_id        uuid,
    kind            text NOT NULL CHECK (kind IN ('manual', 'smart')),
    rules           jsonb,
    applied_rules   jsonb,
    rules_version   int NOT NULL DEFAULT 0,
    rebuild_started int NOT NULL DEFAULT 0,
    applied_version int NOT NULL DEFAULT 0,
    sort            text NOT NULL CHECK (sort IN ('manual', 'best_selling', 'price_asc', 'price_desc', 'newest', 'title')),
    published       boolean NOT NULL DEFAULT true,
    seo             jsonb NOT NULL DEFAULT '{}',
    created_at      timestamptz NOT NULL DEFAULT now(),
    updated_at      timestamptz NOT NULL DEFAULT now(),
    UNIQUE (store_id, id),
    UNIQUE (store_id, handle),
    CHECK ((kind = 'smart') = (rules IS NOT NULL AND applied_rules IS NOT NULL))
);
CREATE INDEX collections_store_created_idx ON collections (store_id, created_at, id);
CREATE INDEX collections_smart_idx ON collections (store_id) WHERE kind = 'smart';
CREATE INDEX collections_rebuild_due_idx ON collections (created_at) WHERE rules_version > rebuild_started;

-- Membership, for both kinds: position is the manual order (new members
-- go last). No foreign key to products: its check would take a key-share
-- lock on the product row, which a rebuild holding the store's membership
-- lock would wait for while the product's writer waits for the membership
-- lock (a deadlock). DeleteProduct removes a product's rows itself, under
-- that lock.
CREATE TABLE collection_products (
    store_id      uuid NOT NULL,
    collection_id uuid NOT NULL,
    product_id    uuid NOT NULL,
    position      bigint NOT NULL,
    added_at      timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (collection_id, product_id),
    FOREIGN KEY (store_id, collection_id) REFERENCES collections (store_id, id) ON DELETE CASCADE
);
CREATE INDEX collection_products_order_idx ON collection_products (collection_id, position, product_id);
CREATE INDEX collection_products_product_idx ON collection_products (store_id, product_id);

-- Every category becomes a smart collection {category equals <id>} with the
-- category's id, and a handle derived from its name as storage/handle's
-- FromTitle derives one (NFKC, tatweel and tashkeel dropped, Arabic-Indic and
-- Persian digits to ASCII, lower case, every other character a '-'); a
-- name two categories share gets -2, -3 … after the first. The title is the
-- name in the store's language.
WITH derived AS (
    SELECT c.id, c.store_id, c.name, c.position, c.created_at, s.default_language,
        left(trim(BOTH '-' FROM regexp_replace(lower(translate(
            regexp_replace(normalize(c.name, NFKC), '[\u0640\u064B-\u065F\u0670]', '', 'g'),
            '٠١٢٣٤٥٦٧٨٩۰۱۲۳۴۵۶۷۸۹', '01234567890123456789')),
            '[^[:alpha:]0-9_]+', '-', 'g')), 110) AS base
    FROM categories c JOIN stores s ON s.id = c.store_id
), ranked AS (
    SELECT d.*, CASE WHEN trim(BOTH '-' FROM d.base) = '' THEN 'collection' ELSE trim(BOTH '-' FROM d.base) END AS stem,
        row_number() OVER (PARTITION BY d.store_id, CASE WHEN trim(BOTH '-' FROM d.base) = '' THEN 'collection' ELSE trim(BOTH '-' FROM d.base) END
                           ORDER BY d.position, d.created_at, d.id) AS n
    FROM derived d
), rules AS (
    SELECT r.*, jsonb_build_object('match', 'all', 'conditions',
        jsonb_build_array(jsonb_build_object('field', 'category', 'relation', 'equals', 'value', r.id::text))) AS rule
    FROM ranked r
)
INSERT INTO collections (id, store_id, handle, title, kind, rules, applied_rules, sort, published, created_at, updated_at)
SELECT id, store_id, CASE WHEN n = 1 THEN stem ELSE stem || '-' || n END, jsonb_build_object(default_language, name),
    'smart', rule, rule, 'best_selling', true, created_at, now()
FROM rules;

-- Their members: the products of the category and of its descendants.
WITH RECURSIVE tree (store_id, root, id) AS (
    SELECT store_id, id, id FROM categories
    UNION
    SELECT c.store_id, t.root, c.id FROM categories c JOIN tree t ON c.store_id = t.store_id AND c.parent_id = t.id
)
INSERT INTO collection_products (store_id, collection_id, product_id, position, added_at)
SELECT t.store_id, t.root, p.id, row_number() OVER (PARTITION BY t.root ORDER BY p.created_at, p.id), now()
FROM tree t JOIN products p ON p.store_id = t.store_id AND p.category_id = t.id;

-- +goose Down
DROP TABLE collection_products;
DROP TABLE collections;
