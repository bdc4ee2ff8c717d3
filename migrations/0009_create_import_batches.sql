-- +goose Up
-- One row per applied batch of an import, written in the batch's own
-- transaction: batches may then be applied concurrently, and a resumed
-- import skips exactly the batches already applied.
CREATE TABLE product_import_batches (
    import_id uuid NOT NULL REFERENCES product_imports (id) ON DELETE CASCADE,
    start_row int NOT NULL,
    PRIMARY KEY (import_id, start_row)
);

-- Batch boundaries must not move between attempts: the first attempt
-- records its batch size and every retry uses it.
ALTER TABLE product_imports ADD COLUMN batch_size int NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE product_imports DROP COLUMN batch_size;
DROP TABLE product_import_batches;
