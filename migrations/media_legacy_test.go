package migrations_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/merchantsvc/svc/internal/testenv"
	"github.com/merchantsvc/svc/migrations"
	"github.com/merchantsvc/svc/storage"
)

// Migration 0058: image_picker values from before the media library (https
// URLs, store paths) in drafts, published documents and snapshots keep
// validating; a new URL does not. Custom roles that held themes:write gain
// media:write; others are unchanged.
func TestMediaMigrationKeepsOldImagePickersValid(t *testing.T) {
	ctx := context.Background()
	url := testenv.DatabaseURL(t, false)
	db, err := sql.Open("pgx", url)
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	require.NoError(t, migrations.UpTo(ctx, db, 57))

	const (
		store  = "00000000-0000-0000-0000-0000000058b1"
		user   = "00000000-0000-0000-0000-0000000058a1"
		editor = "00000000-0000-0000-0000-0000000058c1"
		clerk  = "00000000-0000-0000-0000-0000000058c2"
	)
	draft := `{"settings": {"favicon": "https://cdn.example.com/fav.png"}, "templates": {"index": {"order": ["show"], "sections": {
	  "show": {"type": "slideshow", "block_order": ["s1"], "blocks": {"s1": {"type": "slide", "settings": {"image": "/media/old/slide/large.webp"}}}}}}}}`
	published := `{"settings": {"favicon": "https://cdn.example.com/published.png"}}`
	snapshot := `{"templates": {"index": {"order": ["film"], "sections": {"film": {"type": "video", "settings": {"cover": "https://cdn.example.com/cover.jpg"}}}}}}`
	for _, q := range []struct {
		sql  string
		args []any
	}{
		{`INSERT INTO users (id, email, password_hash, name, locale, created_at, updated_at) VALUES ($1, 'media58@example.com', 'x', 'M', 'ar', now(), now())`, []any{user}},
		{`INSERT INTO stores (id, owner_user_id, name, subdomain, currency, default_language, lifecycle_state, created_at, updated_at)
			VALUES ($1, $2, 'Media', 'old-media', 'EGP', 'ar', 'trial', now(), now())`, []any{store, user}},
		{`INSERT INTO theme_customizations (store_id, draft, draft_etag, published, saved_at) VALUES ($1, $2, '"x"', $3, now())`, []any{store, draft, published}},
		{`INSERT INTO theme_versions (id, store_id, name, document, source, created_at) VALUES ($1, $2, 'old', $3, 'publish', now())`,
			[]any{"00000000-0000-0000-0000-0000000058d1", store, snapshot}},
		{`INSERT INTO roles (id, store_id, name, scopes, created_at, updated_at) VALUES
			($1, $3, 'Designer', '{themes:write,catalog:read}', now(), now()), ($2, $3, 'Clerk', '{catalog:write}', now(), now())`,
			[]any{editor, clerk, store}},
	} {
		_, err := db.ExecContext(ctx, q.sql, q.args...)
		require.NoError(t, err, q.sql)
	}
	require.NoError(t, migrations.Up(ctx, db))

	sdb, err := storage.Open(ctx, url)
	require.NoError(t, err)
	t.Cleanup(sdb.Close)
	storeID := uuid.MustParse(store)
	for _, doc := range []string{draft, published, snapshot} {
		require.NoError(t, sdb.ValidateThemeDocument(ctx, storeID, json.RawMessage(doc)), doc)
	}
	err = sdb.ValidateThemeDocument(ctx, storeID, json.RawMessage(`{"settings": {"favicon": "https://cdn.example.com/new.png"}}`))
	var invalid *storage.ThemeValidationError
	require.True(t, errors.As(err, &invalid), "a new URL is refused: %v", err)
	require.Equal(t, "/settings/favicon", invalid.Errors[0].Pointer)
	require.Equal(t, "not_found", invalid.Errors[0].Code)

	scopes := func(id string) []string {
		var out []string
		rows, err := db.QueryContext(ctx, `SELECT unnest(scopes) FROM roles WHERE id = $1 ORDER BY 1`, id)
		require.NoError(t, err)
		defer rows.Close()
		for rows.Next() {
			var s string
			require.NoError(t, rows.Scan(&s))
			out = append(out, s)
		}
		return out
	}
	require.Equal(t, []string{"catalog:read", "media:write", "themes:write"}, scopes(editor))
	require.Equal(t, []string{"catalog:write"}, scopes(clerk))
}
