-- +goose Up
-- skus and outbox rows are written in bulk on the CSV import path (three
-- rows per product). Each foreign key to stores costs a per-row trigger; with
-- them the import reached only ~20% of COPY's rate (docs/benchmarks.md).
-- Neither check protects anything: every skus row and every outbox row is
-- written in the same transaction as a product or variant row of the same
-- store, and that row's own foreign key already proves the store exists.
-- Stores are never hard-deleted (they close through lifecycle_state); a
-- future hard delete must remove these rows itself.
ALTER TABLE skus DROP CONSTRAINT skus_store_id_fkey;
ALTER TABLE outbox DROP CONSTRAINT outbox_store_id_fkey;

-- +goose Down
ALTER TABLE skus ADD CONSTRAINT skus_store_id_fkey FOREIGN KEY (store_id) REFERENCES stores (id) ON DELETE CASCADE;
ALTER TABLE outbox ADD CONSTRAINT outbox_store_id_fkey FOREIGN KEY (store_id) REFERENCES stores (id) ON DELETE CASCADE;
