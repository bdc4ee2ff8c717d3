-- +goose Up
-- Work whose workflow start may be lost (Temporal unreachable, a crash
-- between commit and start) records when its workflow was started; the
-- dispatcher starts what stays unstarted (README "When a dependency fails").
ALTER TABLE product_images ADD COLUMN workflow_started_at timestamptz;
UPDATE product_images SET workflow_started_at = created_at WHERE status <> 'processing';
CREATE INDEX product_images_unstarted_idx ON product_images (created_at) WHERE workflow_started_at IS NULL;

ALTER TABLE product_imports ADD COLUMN workflow_started_at timestamptz;
UPDATE product_imports SET workflow_started_at = created_at WHERE status <> 'running';
CREATE INDEX product_imports_unstarted_idx ON product_imports (created_at) WHERE workflow_started_at IS NULL;

-- A requeued delivery (redeliver, recover) awaits the start of the ladder
-- that begins at attempt ladder_from.
ALTER TABLE webhook_deliveries ADD COLUMN ladder_from int, ADD COLUMN requeued_at timestamptz;
CREATE INDEX webhook_deliveries_ladder_idx ON webhook_deliveries (requeued_at) WHERE ladder_from IS NOT NULL;

-- +goose Down
DROP INDEX webhook_deliveries_ladder_idx;
ALTER TABLE webhook_deliveries DROP COLUMN ladder_from, DROP COLUMN requeued_at;
DROP INDEX product_imports_unstarted_idx;
ALTER TABLE product_imports DROP COLUMN workflow_started_at;
DROP INDEX product_images_unstarted_idx;
ALTER TABLE product_images DROP COLUMN workflow_started_at;
