-- +goose Up

-- Navigation menus (decisions §22): the item tree is one document, replaced
-- whole by a write; revision is its ETag. menu_item_targets lists the items
-- that name a resource, so a delete of that resource finds them by index.
CREATE TABLE menus (
    id         uuid PRIMARY KEY,
    store_id   uuid NOT NULL REFERENCES stores (id) ON DELETE CASCADE,
    handle     text NOT NULL,
    title      jsonb NOT NULL,
    items      jsonb NOT NULL DEFAULT '[]',
    revision   bigint NOT NULL DEFAULT 1,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE (store_id, handle),
    UNIQUE (store_id, id)
);

CREATE TABLE menu_item_targets (
    store_id    uuid NOT NULL,
    menu_id     uuid NOT NULL,
    item_id     uuid NOT NULL,
    kind        text NOT NULL,
    resource_id uuid NOT NULL,
    PRIMARY KEY (store_id, menu_id, item_id),
    FOREIGN KEY (store_id, menu_id) REFERENCES menus (store_id, id) ON DELETE CASCADE
);
CREATE INDEX menu_item_targets_resource_idx ON menu_item_targets (store_id, kind, resource_id);

-- The seeded menus (store_content, kind menu) become empty menus, and every
-- store has the two built-in ones the default theme names.
INSERT INTO menus (id, store_id, handle, title, created_at, updated_at)
SELECT gen_random_uuid(), store_id, handle,
       CASE handle WHEN 'main-menu' THEN '{"ar": "القائمة الرئيسية", "en": "Main menu"}'::jsonb
                   WHEN 'footer' THEN '{"ar": "التذييل", "en": "Footer"}'::jsonb
                   ELSE jsonb_build_object('en', title) END,
       created_at, created_at
FROM store_content WHERE kind = 'menu';
INSERT INTO menus (id, store_id, handle, title)
SELECT gen_random_uuid(), s.id, m.handle, m.title
FROM stores s CROSS JOIN (VALUES ('main-menu', '{"ar": "القائمة الرئيسية", "en": "Main menu"}'::jsonb),
                                 ('footer', '{"ar": "التذييل", "en": "Footer"}'::jsonb)) AS m (handle, title)
ON CONFLICT (store_id, handle) DO NOTHING;
DELETE FROM store_content WHERE kind = 'menu';

-- URL redirects (decisions §22): from_key is the path as it matches (lower
-- case), to is stored collapsed (never the from of another redirect).
CREATE TABLE redirects (
    id         uuid PRIMARY KEY,
    store_id   uuid NOT NULL REFERENCES stores (id) ON DELETE CASCADE,
    from_path  text NOT NULL,
    from_key   text NOT NULL,
    target     text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE (store_id, from_key)
);
CREATE INDEX redirects_target_idx ON redirects (store_id, lower(target));
CREATE INDEX redirects_list_idx ON redirects (store_id, created_at DESC, id DESC);

-- +goose Down
INSERT INTO store_content (store_id, kind, handle, title, created_at)
SELECT store_id, 'menu', handle, COALESCE(title->>'en', title->>'ar'), created_at FROM menus
ON CONFLICT DO NOTHING;
DROP TABLE redirects;
DROP TABLE menu_item_targets;
DROP TABLE menus;
