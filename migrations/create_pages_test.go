package migrations_test

import (
	"context"
	"database/sql"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/merchantsvc/svc/migrations"
)

// Migration 0056 makes the page and blog handles store_content held (the
// ones theme pickers named) draft pages and blogs with empty bodies, titled
// in the store's language, and leaves the menus where they were; 0059 then
// makes the menus rows of their own table.
func TestCreatePagesMigrationFromTheOldWay(t *testing.T) {
	ctx, db := context.Background(), databaseAt(t, 55)
	exec := func(query string, args ...any) {
		t.Helper()
		_, err := db.ExecContext(ctx, query, args...)
		require.NoError(t, err, query)
	}
	exec(`INSERT INTO users (id, email, password_hash, name, locale, created_at, updated_at)
		VALUES ('00000000-0000-0000-0000-0000000056a1', 'pages@example.com', 'x', 'Pages', 'ar', now(), now())`)
	exec(`INSERT INTO stores (id, owner_user_id, name, subdomain, currency, default_language, lifecycle_state, created_at, updated_at)
		VALUES ('00000000-0000-0000-0000-0000000056b1', '00000000-0000-0000-0000-0000000056a1', 'AR', 'old-pages-ar', 'EGP', 'ar', 'trial', now(), now()),
		       ('00000000-0000-0000-0000-0000000056b2', '00000000-0000-0000-0000-0000000056a1', 'EN', 'old-pages-en', 'EGP', 'en', 'trial', now(), now())`)
	exec(`INSERT INTO store_content (store_id, kind, handle, title) VALUES
		('00000000-0000-0000-0000-0000000056b1', 'page', 'about', 'من نحن'),
		('00000000-0000-0000-0000-0000000056b1', 'blog', 'news', 'الأخبار'),
		('00000000-0000-0000-0000-0000000056b1', 'menu', 'main-menu', 'Main menu'),
		('00000000-0000-0000-0000-0000000056b2', 'page', 'about', 'About us')`)

	require.NoError(t, migrations.UpTo(ctx, db, 59))

	type page struct {
		store, handle    string
		titleAr, titleEn sql.NullString
		bodyAr, bodyEn   string
		template         string
		published        sql.NullTime
	}
	rows, err := db.QueryContext(ctx, `SELECT store_id, handle, title_ar, title_en, body_ar, body_en, template, published_at FROM pages ORDER BY store_id`)
	require.NoError(t, err)
	var pages []page
	for rows.Next() {
		var p page
		require.NoError(t, rows.Scan(&p.store, &p.handle, &p.titleAr, &p.titleEn, &p.bodyAr, &p.bodyEn, &p.template, &p.published))
		pages = append(pages, p)
	}
	require.NoError(t, rows.Err())
	require.Equal(t, []page{
		{store: "00000000-0000-0000-0000-0000000056b1", handle: "about", titleAr: sql.NullString{String: "من نحن", Valid: true}, template: "page"},
		{store: "00000000-0000-0000-0000-0000000056b2", handle: "about", titleEn: sql.NullString{String: "About us", Valid: true}, template: "page"},
	}, pages, "drafts (no published_at) with empty bodies, titled in the store's language")

	var blog string
	require.NoError(t, db.QueryRowContext(ctx, `SELECT handle || ' ' || title_ar FROM blogs WHERE title_en IS NULL`).Scan(&blog))
	require.Equal(t, "news الأخبار", blog)
	var left []string
	rows, err = db.QueryContext(ctx, `SELECT kind || ':' || handle FROM store_content ORDER BY 1`)
	require.NoError(t, err)
	for rows.Next() {
		var k string
		require.NoError(t, rows.Scan(&k))
		left = append(left, k)
	}
	require.Empty(t, left, "pages and blogs left store_content in 0056, menus in 0059")
	// 0059: the seeded menu is an empty menu of the menus table, and the
	// store has both built-in menus.
	var menus []string
	rows, err = db.QueryContext(ctx, `SELECT handle || ' ' || (title->>'ar') || ' ' || jsonb_array_length(items) FROM menus
		WHERE store_id = '00000000-0000-0000-0000-0000000056b1' ORDER BY handle`)
	require.NoError(t, err)
	for rows.Next() {
		var m string
		require.NoError(t, rows.Scan(&m))
		menus = append(menus, m)
	}
	require.Equal(t, []string{"footer التذييل 0", "main-menu القائمة الرئيسية 0"}, menus)

	// 0062: store_content, emptied, goes; the content stays.
	require.NoError(t, migrations.Up(ctx, db))
	var table sql.NullString
	require.NoError(t, db.QueryRowContext(ctx, `SELECT to_regclass('store_content')::text`).Scan(&table))
	require.False(t, table.Valid, "store_content is dropped")
	var count int
	require.NoError(t, db.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM pages) + (SELECT count(*) FROM blogs) + (SELECT count(*) FROM menus)`).Scan(&count))
	require.Equal(t, 2+1+2*2, count, "two pages, a blog, two menus in each store")
}
