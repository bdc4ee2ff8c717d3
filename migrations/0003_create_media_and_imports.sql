-- +goose Up
-- Source of truth for a product's images and their objects; products.images
-- is the wire copy, updated in the same transaction.
CREATE TABLE product_images (
    id            uuid PRIMARY KEY,
    store_id      uuid NOT NULL,
    product_id    uuid NOT NULL,
    status        text NOT NULL CHECK (status IN ('processing', 'ready', 'failed')),
    original_key  text NOT NULL,
    content_type  text NOT NULL,
    width         int,
    height        int,
    position      int NOT NULL,
    error         text,
    created_at    timestamptz NOT NULL DEFAULT now(),
    updated_at    timestamptz NOT NULL DEFAULT now(),
    FOREIGN KEY (store_id, product_id) REFERENCES products (store_id, id) ON DELETE CASCADE
);
CREATE INDEX product_images_product_idx ON product_images (store_id, product_id, position);

CREATE TABLE product_imports (
    id             uuid PRIMARY KEY,
    store_id       uuid NOT NULL REFERENCES stores (id) ON DELETE CASCADE,
    status         text NOT NULL CHECK (status IN ('running', 'succeeded', 'failed')),
    dry_run        boolean NOT NULL,
    object_key     text NOT NULL,
    total_rows     int NOT NULL DEFAULT 0,
    processed_rows int NOT NULL DEFAULT 0,
    created        int NOT NULL DEFAULT 0,
    updated        int NOT NULL DEFAULT 0,
    unchanged      int NOT NULL DEFAULT 0,
    failed         int NOT NULL DEFAULT 0,
    errors         jsonb NOT NULL DEFAULT '[]',
    error          text,
    created_at     timestamptz NOT NULL DEFAULT now(),
    finished_at    timestamptz
);
CREATE INDEX product_imports_store_idx ON product_imports (store_id, created_at DESC);

-- +goose Down
DROP TABLE product_imports;
DROP TABLE product_images;
