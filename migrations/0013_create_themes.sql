-- +goose Up
-- Theme customization v3 (decisions §9): one draft and one published
-- document per store, and up to 20 published snapshots.
CREATE TABLE theme_customizations (
    store_id     uuid PRIMARY KEY REFERENCES stores (id) ON DELETE CASCADE,
    draft        jsonb NOT NULL,
    draft_etag   text NOT NULL,
    published    jsonb,
    revision     bigint NOT NULL DEFAULT 1,
    saved_at     timestamptz NOT NULL,
    published_at timestamptz
);

CREATE TABLE theme_versions (
    id          uuid PRIMARY KEY,
    store_id    uuid NOT NULL REFERENCES stores (id) ON DELETE CASCADE,
    name        text NOT NULL,
    document    jsonb NOT NULL,
    source      text NOT NULL CHECK (source IN ('publish', 'restore')),
    restored_from uuid,
    created_at  timestamptz NOT NULL,
    UNIQUE (store_id, id)
);
CREATE INDEX theme_versions_store_idx ON theme_versions (store_id, created_at DESC, id DESC);

-- The store content theme pickers point at (pages, blogs, navigation
-- menus), by handle.
CREATE TABLE store_content (
    store_id   uuid NOT NULL REFERENCES stores (id) ON DELETE CASCADE,
    kind       text NOT NULL CHECK (kind IN ('page', 'blog', 'menu')),
    handle     text NOT NULL,
    title      text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (store_id, kind, handle)
);

-- +goose Down
DROP TABLE store_content;
DROP TABLE theme_versions;
DROP TABLE theme_customizations;
