-- +goose Up
-- An app's manifest subscription carries only the events its granted
-- scopes can read (orders for order.*, catalog for product.*). Existing
-- subscriptions are cut down to that; one left with none is switched off.
UPDATE webhook_subscriptions s
SET events = ARRAY(
        SELECT e FROM unnest(s.events) AS e
        WHERE (e LIKE 'order.%' AND i.scopes && ARRAY['orders:read', 'orders:write'])
           OR (e LIKE 'product.%' AND i.scopes && ARRAY['catalog:read', 'catalog:write'])),
    updated_at = now()
FROM app_installations i
WHERE s.app_id IS NOT NULL AND i.app_id = s.app_id AND i.store_id = s.store_id;

UPDATE webhook_subscriptions
SET is_active = false, disabled_at = now(), disabled_reason = 'no granted scope reads its events'
WHERE app_id IS NOT NULL AND cardinality(events) = 0 AND is_active;

-- +goose Down
-- The events cut away are not restored: they were never the app's to receive.
SELECT 1;
