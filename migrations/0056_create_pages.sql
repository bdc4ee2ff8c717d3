-- +goose Up
-- Pages, blogs and articles (decisions §22). store_content held the page
-- and blog handles theme pickers named; they become draft pages and blogs
-- with empty bodies, titled in the store's language. Menus stay in
-- store_content until they get their own table.
CREATE TABLE pages (
    id              uuid PRIMARY KEY,
    store_id        uuid NOT NULL REFERENCES stores (id) ON DELETE CASCADE,
    handle          text NOT NULL,
    title_ar        text,
    title_en        text,
    body_ar         text NOT NULL DEFAULT '',
    body_en         text NOT NULL DEFAULT '',
    template        text NOT NULL DEFAULT 'page',
    published_at    timestamptz,
    seo_title       text NOT NULL DEFAULT '',
    seo_description text NOT NULL DEFAULT '',
    created_at      timestamptz NOT NULL,
    updated_at      timestamptz NOT NULL,
    CONSTRAINT pages_handle_key UNIQUE (store_id, handle),
    CHECK (title_ar IS NOT NULL OR title_en IS NOT NULL),
    CHECK (octet_length(body_ar) <= 262144 AND octet_length(body_en) <= 262144)
);
CREATE INDEX pages_store_idx ON pages (store_id, created_at DESC, id DESC);

CREATE TABLE blogs (
    id         uuid PRIMARY KEY,
    store_id   uuid NOT NULL REFERENCES stores (id) ON DELETE CASCADE,
    handle     text NOT NULL,
    title_ar   text,
    title_en   text,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL,
    CONSTRAINT blogs_handle_key UNIQUE (store_id, handle),
    UNIQUE (store_id, id),
    CHECK (title_ar IS NOT NULL OR title_en IS NOT NULL)
);
CREATE INDEX blogs_store_idx ON blogs (store_id, created_at DESC, id DESC);

CREATE TABLE articles (
    id              uuid PRIMARY KEY,
    store_id        uuid NOT NULL,
    blog_id         uuid NOT NULL,
    handle          text NOT NULL,
    title_ar        text,
    title_en        text,
    body_ar         text NOT NULL DEFAULT '',
    body_en         text NOT NULL DEFAULT '',
    excerpt_ar      text,
    excerpt_en      text,
    image_id        uuid,
    author          text NOT NULL DEFAULT '',
    tags            text[] NOT NULL DEFAULT '{}',
    published_at    timestamptz,
    seo_title       text NOT NULL DEFAULT '',
    seo_description text NOT NULL DEFAULT '',
    created_at      timestamptz NOT NULL,
    updated_at      timestamptz NOT NULL,
    FOREIGN KEY (store_id, blog_id) REFERENCES blogs (store_id, id) ON DELETE CASCADE,
    CONSTRAINT articles_handle_key UNIQUE (blog_id, handle),
    CHECK (title_ar IS NOT NULL OR title_en IS NOT NULL),
    CHECK (cardinality(tags) <= 20),
    CHECK (octet_length(body_ar) <= 262144 AND octet_length(body_en) <= 262144)
);
CREATE INDEX articles_blog_idx ON articles (store_id, blog_id, published_at DESC NULLS LAST, id DESC);

INSERT INTO pages (id, store_id, handle, title_ar, title_en, created_at, updated_at)
SELECT gen_random_uuid(), c.store_id, c.handle,
       CASE WHEN s.default_language = 'ar' THEN c.title END,
       CASE WHEN s.default_language = 'ar' THEN NULL ELSE c.title END,
       c.created_at, c.created_at
FROM store_content c JOIN stores s ON s.id = c.store_id
WHERE c.kind = 'page';

INSERT INTO blogs (id, store_id, handle, title_ar, title_en, created_at, updated_at)
SELECT gen_random_uuid(), c.store_id, c.handle,
       CASE WHEN s.default_language = 'ar' THEN c.title END,
       CASE WHEN s.default_language = 'ar' THEN NULL ELSE c.title END,
       c.created_at, c.created_at
FROM store_content c JOIN stores s ON s.id = c.store_id
WHERE c.kind = 'blog';

DELETE FROM store_content WHERE kind IN ('page', 'blog');

-- +goose Down
INSERT INTO store_content (store_id, kind, handle, title, created_at)
SELECT store_id, 'page', handle, COALESCE(title_en, title_ar), created_at FROM pages;
INSERT INTO store_content (store_id, kind, handle, title, created_at)
SELECT store_id, 'blog', handle, COALESCE(title_en, title_ar), created_at FROM blogs;
DROP TABLE articles;
DROP TABLE blogs;
DROP TABLE pages;
