-- +goose Up
-- The storefront website's content version (decisions §23): every change
-- that shows on a store's pages moves its row, in the transaction of the
-- change, so the page cache (keyed by it) serves the change on the next
-- request. Statement-level triggers with transition tables: a bulk write
-- (an import, a collection rebuild) moves it once per statement. No
-- foreign key: deleting a store deletes its rows under it, and those
-- deletes must not insert a row referring to the store going away; an
-- orphan row is harmless (it keys nothing).
CREATE TABLE site_versions (
    store_id uuid PRIMARY KEY,
    version  bigint NOT NULL DEFAULT 1
);

-- +goose StatementBegin
CREATE FUNCTION bump_site_versions() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        INSERT INTO site_versions AS v (store_id, version)
        SELECT DISTINCT store_id, 2 FROM old_rows ORDER BY store_id
        ON CONFLICT (store_id) DO UPDATE SET version = v.version + 1;
    ELSE
        INSERT INTO site_versions AS v (store_id, version)
        SELECT DISTINCT store_id, 2 FROM new_rows ORDER BY store_id
        ON CONFLICT (store_id) DO UPDATE SET version = v.version + 1;
    END IF;
    RETURN NULL;
END $$;
-- +goose StatementEnd

-- +goose StatementBegin
-- A variant's update shows on a page only when its price, options or
-- buyability changes (stock crossing zero): an order's stock decrement
-- that leaves it in stock moves nothing.
CREATE FUNCTION bump_site_versions_for_variants() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO site_versions AS v (store_id, version)
    SELECT DISTINCT n.store_id, 2 FROM new_rows n JOIN old_rows o ON o.id = n.id
    WHERE (o.quantity > 0) <> (n.quantity > 0) OR o.price <> n.price OR o.options IS DISTINCT FROM n.options OR o.position <> n.position
    ORDER BY 1
    ON CONFLICT (store_id) DO UPDATE SET version = v.version + 1;
    RETURN NULL;
END $$;
-- +goose StatementEnd

-- +goose StatementBegin
-- The store's own row: its name, language, currency, numerals or state.
CREATE FUNCTION bump_site_versions_for_stores() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO site_versions AS v (store_id, version)
    SELECT DISTINCT n.id, 2 FROM new_rows n JOIN old_rows o ON o.id = n.id
    WHERE (o.name, o.default_language, o.currency, o.numerals, o.lifecycle_state)
        IS DISTINCT FROM (n.name, n.default_language, n.currency, n.numerals, n.lifecycle_state)
    ORDER BY 1
    ON CONFLICT (store_id) DO UPDATE SET version = v.version + 1;
    RETURN NULL;
END $$;
-- +goose StatementEnd

-- +goose StatementBegin
-- The theme: what the website renders is the published document (or,
-- before the first publish, the default document of the draft's theme).
CREATE FUNCTION bump_site_versions_for_themes() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO site_versions AS v (store_id, version)
    SELECT DISTINCT n.store_id, 2 FROM new_rows n JOIN old_rows o ON o.store_id = n.store_id
    WHERE o.published IS DISTINCT FROM n.published OR o.published_theme_id <> n.published_theme_id
        OR n.published IS NULL AND o.draft_theme_id <> n.draft_theme_id -- never published: the draft's theme's defaults show
    ORDER BY 1
    ON CONFLICT (store_id) DO UPDATE SET version = v.version + 1;
    RETURN NULL;
END $$;
-- +goose StatementEnd

-- +goose StatementBegin
DO $$
DECLARE t text;
BEGIN
    FOREACH t IN ARRAY ARRAY['products', 'variants', 'categories', 'collections', 'collection_products', 'pages', 'blogs', 'articles',
        'menus', 'redirects', 'media'] LOOP
        EXECUTE format('CREATE TRIGGER %I AFTER INSERT ON %I REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION bump_site_versions()',
            t || '_site_insert', t);
        EXECUTE format('CREATE TRIGGER %I AFTER DELETE ON %I REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION bump_site_versions()',
            t || '_site_delete', t);
        IF t <> 'variants' THEN
            EXECUTE format('CREATE TRIGGER %I AFTER UPDATE ON %I REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION bump_site_versions()',
                t || '_site_update', t);
        END IF;
    END LOOP;
END $$;
-- +goose StatementEnd
CREATE TRIGGER variants_site_update AFTER UPDATE ON variants REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION bump_site_versions_for_variants();
CREATE TRIGGER stores_site_update AFTER UPDATE ON stores REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION bump_site_versions_for_stores();
CREATE TRIGGER theme_customizations_site_update AFTER UPDATE ON theme_customizations REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION bump_site_versions_for_themes();

-- +goose Down
-- +goose StatementBegin
DO $$
DECLARE t text;
BEGIN
    FOREACH t IN ARRAY ARRAY['products', 'variants', 'categories', 'collections', 'collection_products', 'pages', 'blogs', 'articles',
        'menus', 'redirects', 'media'] LOOP
        EXECUTE format('DROP TRIGGER IF EXISTS %I ON %I', t || '_site_insert', t);
        EXECUTE format('DROP TRIGGER IF EXISTS %I ON %I', t || '_site_delete', t);
        EXECUTE format('DROP TRIGGER IF EXISTS %I ON %I', t || '_site_update', t);
    END LOOP;
END $$;
-- +goose StatementEnd
DROP TRIGGER stores_site_update ON stores;
DROP TRIGGER theme_customizations_site_update ON theme_customizations;
DROP FUNCTION bump_site_versions_for_themes();
DROP FUNCTION bump_site_versions_for_stores();
DROP FUNCTION bump_site_versions_for_variants();
DROP FUNCTION bump_site_versions();
DROP TABLE site_versions;
