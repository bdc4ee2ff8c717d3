-- +goose Up
-- store_content held the handles the theme's page, blog and menu pickers
-- named before content had tables: 0056 moved pages and blogs to theirs,
-- 0059 menus. Nothing reads or writes it since; it goes.
DROP TABLE store_content;

-- +goose Down
CREATE TABLE store_content (
    store_id   uuid NOT NULL REFERENCES stores (id) ON DELETE CASCADE,
    kind       text NOT NULL CHECK (kind IN ('page', 'blog', 'menu')),
    handle     text NOT NULL,
    title      text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (store_id, kind, handle)
);
