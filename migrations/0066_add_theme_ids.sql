-- +goose Up
-- The theme library (decisions §23): which built-in theme the draft, the
-- published document and each snapshot are rendered with. Every store so
-- far has the default theme, Souq. Switching the draft's theme saves the
-- old draft as a version of its own source.
ALTER TABLE theme_customizations
    ADD COLUMN draft_theme_id text NOT NULL DEFAULT 'souq',
    ADD COLUMN published_theme_id text NOT NULL DEFAULT 'souq';
ALTER TABLE theme_versions ADD COLUMN theme_id text NOT NULL DEFAULT 'souq';
ALTER TABLE theme_versions DROP CONSTRAINT theme_versions_source_check;
ALTER TABLE theme_versions ADD CONSTRAINT theme_versions_source_check CHECK (source IN ('publish', 'restore', 'switch'));

-- +goose Down
DELETE FROM theme_versions WHERE source = 'switch';
ALTER TABLE theme_versions DROP CONSTRAINT theme_versions_source_check;
ALTER TABLE theme_versions ADD CONSTRAINT theme_versions_source_check CHECK (source IN ('publish', 'restore'));
ALTER TABLE theme_versions DROP COLUMN theme_id;
ALTER TABLE theme_customizations DROP COLUMN draft_theme_id, DROP COLUMN published_theme_id;
