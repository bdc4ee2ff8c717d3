-- +goose Up
-- The media library (decisions §22): a store's images and files, uploaded
-- once and named by id from the theme (and, later, pages, articles and
-- collections). Images go through the product image pipeline into three
-- WebP sizes under stores/{store}/media/{id}/; a PDF is kept as uploaded.
CREATE TABLE media (
    id                  uuid PRIMARY KEY,
    store_id            uuid NOT NULL REFERENCES stores (id) ON DELETE CASCADE,
    kind                text NOT NULL CHECK (kind IN ('image', 'file')),
    filename            text NOT NULL,
    mime                text NOT NULL,
    size                bigint NOT NULL CHECK (size > 0),
    width               int,
    height              int,
    alt_ar              text,
    alt_en              text,
    status              text NOT NULL CHECK (status IN ('processing', 'ready', 'failed')),
    original_key        text NOT NULL,
    error               text,
    workflow_started_at timestamptz,
    created_at          timestamptz NOT NULL,
    updated_at          timestamptz NOT NULL,
    UNIQUE (store_id, id)
);
CREATE INDEX media_store_idx ON media (store_id, created_at DESC, id DESC);
CREATE INDEX media_unstarted_idx ON media (created_at) WHERE workflow_started_at IS NULL AND status = 'processing';

-- image_picker settings now name media ids. The https URLs and store paths
-- drafts, published documents and snapshots hold from before are kept as
-- they are and keep validating: each is recorded here for its store, and
-- the validator accepts a value recorded here as it accepts a media id.
-- The theme's only image_picker settings are the favicon, the video
-- section's cover and the slide block's image.
CREATE TABLE theme_legacy_images (
    store_id uuid NOT NULL REFERENCES stores (id) ON DELETE CASCADE,
    value    text NOT NULL,
    PRIMARY KEY (store_id, value)
);
INSERT INTO theme_legacy_images (store_id, value)
SELECT DISTINCT d.store_id, v #>> '{}'
FROM (SELECT store_id, draft AS doc FROM theme_customizations
      UNION ALL SELECT store_id, published FROM theme_customizations WHERE published IS NOT NULL
      UNION ALL SELECT store_id, document FROM theme_versions) d,
     jsonb_path_query(d.doc, 'lax $.settings.favicon') v
WHERE jsonb_typeof(v) = 'string'
UNION
SELECT DISTINCT d.store_id, v #>> '{}'
FROM (SELECT store_id, draft AS doc FROM theme_customizations
      UNION ALL SELECT store_id, published FROM theme_customizations WHERE published IS NOT NULL
      UNION ALL SELECT store_id, document FROM theme_versions) d,
     jsonb_path_query(d.doc, 'lax $.templates.*.sections.*.settings.cover') v
WHERE jsonb_typeof(v) = 'string'
UNION
SELECT DISTINCT d.store_id, v #>> '{}'
FROM (SELECT store_id, draft AS doc FROM theme_customizations
      UNION ALL SELECT store_id, published FROM theme_customizations WHERE published IS NOT NULL
      UNION ALL SELECT store_id, document FROM theme_versions) d,
     jsonb_path_query(d.doc, 'lax $.templates.*.sections.*.blocks.*.settings.image') v
WHERE jsonb_typeof(v) = 'string';

-- A custom role that could edit the theme could put images in it; it keeps
-- that power, which now goes through the media library. Owner and admin
-- hold every scope already; tokens and app grants keep exactly the scopes
-- they were given.
UPDATE roles SET scopes = array_append(scopes, 'media:write')
WHERE built_in IS NULL AND 'themes:write' = ANY (scopes) AND NOT 'media:write' = ANY (scopes);

-- +goose Down
DROP TABLE theme_legacy_images;
DROP TABLE media;
