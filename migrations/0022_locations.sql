-- +goose Up
-- Inventory locations (decisions §11): every store has one default location,
-- "المستودع الرئيسي" (or "Main warehouse" for English stores), created at
-- signup and here for the stores that exist. Stock levels per location come
-- with the inventory ledger; until then a location holds no stock.
CREATE TABLE locations (
    id          uuid PRIMARY KEY,
    store_id    uuid NOT NULL REFERENCES stores (id) ON DELETE CASCADE,
    name        text NOT NULL,
    address     jsonb,            -- null only for a default location nobody has described yet
    phone       text,
    priority    int NOT NULL DEFAULT 100 CHECK (priority >= 0),
    is_default  boolean NOT NULL DEFAULT false,
    is_active   boolean NOT NULL DEFAULT true,
    created_at  timestamptz NOT NULL,
    updated_at  timestamptz NOT NULL,
    UNIQUE (store_id, id),
    CHECK (NOT is_default OR is_active)
);
CREATE UNIQUE INDEX locations_store_name_idx ON locations (store_id, lower(name));
CREATE UNIQUE INDEX locations_one_default_idx ON locations (store_id) WHERE is_default;

INSERT INTO locations (id, store_id, name, is_default, created_at, updated_at)
SELECT gen_random_uuid(), s.id, CASE WHEN s.default_language = 'en' THEN 'Main warehouse' ELSE 'المستودع الرئيسي' END, true, now(), now()
FROM stores s;

-- +goose Down
DROP TABLE locations;
