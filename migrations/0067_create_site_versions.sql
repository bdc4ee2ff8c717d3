-- +goose Up
-- The storefront website's content version (decisions §23): every change
-- that shows on a store's pages moves its row, in the transaction of the
-- change, so the page cache (keyed by it) serves the change on the next
-- request. Deferred row triggers: the row is moved once per transaction
-- and store (a transaction-local setting remembers it), at commit, after
-- every other lock the transaction takes, so concurrent writers of one
-- store never wait on it in an order that could deadlock, and a bulk
-- write (an import, a collection rebuild) moves it once. No foreign key:
-- deleting a store deletes its rows under it, and those deletes must not
-- insert a row referring to the store going away; an orphan row is
-- harmless (it keys nothing).
CREATE TABLE site_versions (
    store_id uuid PRIMARY KEY,
    version  bigint NOT NULL DEFAULT 1
);

-- +goose StatementBegin
CREATE FUNCTION bump_site_version() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    store uuid;
    marker text;
BEGIN
    IF TG_TABLE_NAME = 'stores' THEN
        store := NEW.id;
        IF (OLD.name, OLD.default_language, OLD.currency, OLD.numerals, OLD.lifecycle_state)
            IS NOT DISTINCT FROM (NEW.name, NEW.default_language, NEW.currency, NEW.numerals, NEW.lifecycle_state) THEN
            RETURN NULL;
        END IF;
    ELSIF TG_OP = 'DELETE' THEN
        store := OLD.store_id;
    ELSE
        store := NEW.store_id;
    END IF;
    -- A variant's update shows only when its price, options, position or
    -- buyability (stock crossing zero) changes: an order that leaves it in
    -- stock moves nothing.
    -- (Nested: PL/pgSQL does not promise to stop at the first false AND,
    -- and another table's row has no such fields.)
    IF TG_TABLE_NAME = 'variants' AND TG_OP = 'UPDATE' THEN
        IF (OLD.quantity > 0) = (NEW.quantity > 0) AND OLD.price = NEW.price
            AND OLD.options IS NOT DISTINCT FROM NEW.options AND OLD.position = NEW.position THEN
            RETURN NULL;
        END IF;
    END IF;
    -- The theme shows through the published document (or, before the
    -- first publish, the default document of the draft's theme).
    IF TG_TABLE_NAME = 'theme_customizations' AND TG_OP <> 'UPDATE' THEN
        RETURN NULL; -- its first read creates the default row, which shows what was shown
    END IF;
    IF TG_TABLE_NAME = 'theme_customizations' AND TG_OP = 'UPDATE' THEN
        IF OLD.published IS NOT DISTINCT FROM NEW.published AND OLD.published_theme_id = NEW.published_theme_id
            AND NOT (NEW.published IS NULL AND OLD.draft_theme_id <> NEW.draft_theme_id) THEN
            RETURN NULL;
        END IF;
    END IF;
    marker := 'svc.site_' || replace(store::text, '-', '');
    IF current_setting(marker, true) = '1' THEN
        RETURN NULL;
    END IF;
    PERFORM set_config(marker, '1', true);
    INSERT INTO site_versions AS v (store_id, version) VALUES (store, 2)
    ON CONFLICT (store_id) DO UPDATE SET version = v.version + 1;
    RETURN NULL;
END $$;
-- +goose StatementEnd

-- +goose StatementBegin
DO $$
DECLARE t text;
BEGIN
    FOREACH t IN ARRAY ARRAY['products', 'variants', 'categories', 'collections', 'collection_products', 'pages', 'blogs', 'articles',
        'menus', 'redirects', 'media', 'theme_customizations'] LOOP
        EXECUTE format('CREATE CONSTRAINT TRIGGER %I AFTER INSERT OR UPDATE OR DELETE ON %I DEFERRABLE INITIALLY DEFERRED
            FOR EACH ROW EXECUTE FUNCTION bump_site_version()', t || '_site_version', t);
    END LOOP;
END $$;
-- +goose StatementEnd
CREATE CONSTRAINT TRIGGER stores_site_version AFTER UPDATE ON stores DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW EXECUTE FUNCTION bump_site_version();

-- +goose Down
-- +goose StatementBegin
DO $$
DECLARE t text;
BEGIN
    FOREACH t IN ARRAY ARRAY['products', 'variants', 'categories', 'collections', 'collection_products', 'pages', 'blogs', 'articles',
        'menus', 'redirects', 'media', 'theme_customizations', 'stores'] LOOP
        EXECUTE format('DROP TRIGGER IF EXISTS %I ON %I', t || '_site_version', t);
    END LOOP;
END $$;
-- +goose StatementEnd
DROP FUNCTION bump_site_version();
DROP TABLE site_versions;
