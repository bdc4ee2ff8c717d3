-- +goose Up
-- Shipping zones and rates (decisions §15).
CREATE TABLE shipping_zones (
    id         uuid PRIMARY KEY,
    store_id   uuid NOT NULL REFERENCES stores (id) ON DELETE CASCADE,
    name       text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE (store_id, id)
);

-- One row per country, region or city a zone covers, by its normalised
-- key; the unique key is what keeps an address in one zone.
CREATE TABLE shipping_zone_areas (
    store_id   uuid NOT NULL,
    zone_id    uuid NOT NULL,
    position   integer NOT NULL,
    country    text NOT NULL,
    region     text,
    city       text,
    region_key text NOT NULL DEFAULT '',
    city_key   text NOT NULL DEFAULT '',
    FOREIGN KEY (store_id, zone_id) REFERENCES shipping_zones (store_id, id) ON DELETE CASCADE,
    UNIQUE (store_id, country, region_key, city_key)
);
CREATE INDEX shipping_zone_areas_zone_idx ON shipping_zone_areas (store_id, zone_id, position);

CREATE TABLE shipping_rates (
    id                  uuid PRIMARY KEY,
    store_id            uuid NOT NULL,
    zone_id             uuid NOT NULL,
    name                text NOT NULL,
    price               bigint NOT NULL CHECK (price >= 0),
    weight_bands        jsonb NOT NULL DEFAULT '[]',
    additional_per_kg   bigint,
    free_above_subtotal bigint,
    cod_available       boolean NOT NULL DEFAULT true,
    cod_fee             bigint NOT NULL DEFAULT 0 CHECK (cod_fee >= 0),
    delivery_days_min   integer,
    delivery_days_max   integer,
    position            integer NOT NULL DEFAULT 0,
    created_at          timestamptz NOT NULL DEFAULT now(),
    updated_at          timestamptz NOT NULL DEFAULT now(),
    FOREIGN KEY (store_id, zone_id) REFERENCES shipping_zones (store_id, id) ON DELETE CASCADE
);
CREATE INDEX shipping_rates_zone_idx ON shipping_rates (store_id, zone_id, position);

-- Weight for rate bands: a variant's (migration 0024), else its product's, else 0.
ALTER TABLE products ADD COLUMN weight_grams integer CHECK (weight_grams BETWEEN 0 AND 1000000);

-- +goose Down
ALTER TABLE products DROP COLUMN weight_grams;
DROP TABLE shipping_rates;
DROP TABLE shipping_zone_areas;
DROP TABLE shipping_zones;
