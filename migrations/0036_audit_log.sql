-- +goose Up
-- The audit log (decisions §16): one entry per state-changing request under
-- /stores/{store_id} and per member sign-in, written in the change's own
-- transaction. Entries are immutable; the hourly purge deletes those older
-- than 365 days, which the trigger lets through with the store's own deletion
-- and nothing else.
CREATE TABLE audit_entries (
    id             uuid PRIMARY KEY,
    store_id       uuid NOT NULL REFERENCES stores (id) ON DELETE CASCADE,
    occurred_at    timestamptz NOT NULL,
    actor_type     text NOT NULL CHECK (actor_type IN ('user', 'token', 'app', 'system')),
    actor_id       uuid,
    actor_name     text NOT NULL DEFAULT '',
    actor_user_id  uuid,
    action         text NOT NULL,
    resource_type  text NOT NULL,
    resource_id    text NOT NULL DEFAULT '',
    resource_label text NOT NULL DEFAULT '',
    changes        jsonb,
    request_id     text NOT NULL DEFAULT '',
    ip             text NOT NULL DEFAULT '',
    user_agent     text NOT NULL DEFAULT ''
);
CREATE INDEX audit_entries_store_time_idx ON audit_entries (store_id, occurred_at DESC, id DESC);
CREATE INDEX audit_entries_store_resource_idx ON audit_entries (store_id, resource_type, resource_id);
CREATE INDEX audit_entries_store_request_idx ON audit_entries (store_id, request_id);
CREATE INDEX audit_entries_purge_idx ON audit_entries (occurred_at);

-- +goose StatementBegin
CREATE FUNCTION audit_entries_immutable() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    -- The purge of year-old entries, or the store itself going away.
    IF TG_OP = 'DELETE' AND (OLD.occurred_at < now() - interval '365 days'
            OR NOT EXISTS (SELECT 1 FROM stores WHERE id = OLD.store_id)) THEN
        RETURN OLD;
    END IF;
    RAISE EXCEPTION 'audit entries are immutable';
END;
$$;
-- +goose StatementEnd
CREATE TRIGGER audit_entries_immutable BEFORE UPDATE OR DELETE ON audit_entries
    FOR EACH ROW EXECUTE FUNCTION audit_entries_immutable();

-- +goose Down
DROP TABLE audit_entries;
DROP FUNCTION audit_entries_immutable();
