package migrations_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/merchantsvc/svc/migrations"
)

// Migration 0054 gives every category a smart collection {category equals
// <id>} with the category's id, a handle from its name (normalised as
// storage/handle derives one, -2 on a name two categories share) and the
// name as its title in the store's language; its members are the products
// of the category and of its descendants.
func TestCollectionsMigrationFromCategories(t *testing.T) {
	ctx, db := context.Background(), databaseAt(t, 51)
	const (
		store   = "00000000-0000-0000-0000-0000000054a1"
		summer  = "00000000-0000-0000-0000-0000000054c1"
		shirts  = "00000000-0000-0000-0000-0000000054c2"
		offers  = "00000000-0000-0000-0000-0000000054c3"
		summer2 = "00000000-0000-0000-0000-0000000054c4"
		blank   = "00000000-0000-0000-0000-0000000054c5"
		tee     = "00000000-0000-0000-0000-0000000054d1"
		hat     = "00000000-0000-0000-0000-0000000054d2"
		loose   = "00000000-0000-0000-0000-0000000054d3"
	)
	exec := func(query string, args ...any) {
		t.Helper()
		_, err := db.ExecContext(ctx, query, args...)
		require.NoError(t, err, query)
	}
	exec(`INSERT INTO users (id, email, password_hash, name, locale) VALUES ('00000000-0000-0000-0000-0000000054b1', 'cols@example.com', 'x', 'C', 'ar')`)
	exec(`INSERT INTO stores (id, owner_user_id, name, subdomain, currency, default_language)
		VALUES ($1, '00000000-0000-0000-0000-0000000054b1', 'Cols', 'old-cols', 'EGP', 'ar')`, store)
	exec(`INSERT INTO categories (id, store_id, name, parent_id, position) VALUES
		($2, $1, '  Summer  Sale ', NULL, 1), ($3, $1, 'Shirts', $2, 2), ($4, $1, 'عُـروض ٢٠٢٦', NULL, 3), ($5, $1, 'summer sale', NULL, 4),
		($6, $1, '!!!', NULL, 5)`, store, summer, shirts, offers, summer2, blank)
	exec(`INSERT INTO products (id, store_id, name, price, category_id) VALUES ($2, $1, 'Tee', 100, $3), ($4, $1, 'Hat', 200, $5), ($6, $1, 'Loose', 300, NULL)`,
		store, tee, shirts, hat, summer, loose)
	require.NoError(t, migrations.Up(ctx, db))

	handles := map[string]string{}
	rows, err := db.QueryContext(ctx, `SELECT id, handle, title->>'ar', kind, rules->'conditions'->0->>'value', published FROM collections WHERE store_id = $1`, store)
	require.NoError(t, err)
	for rows.Next() {
		var id, h, title, kind, value string
		var published bool
		require.NoError(t, rows.Scan(&id, &h, &title, &kind, &value, &published))
		require.Equal(t, "smart", kind)
		require.Equal(t, id, value, "the rule names the category itself")
		require.True(t, published)
		require.NotEmpty(t, title)
		handles[id] = h
	}
	require.NoError(t, rows.Err())
	require.Equal(t, map[string]string{summer: "summer-sale", shirts: "shirts", offers: "عروض-2026", summer2: "summer-sale-2", blank: "collection"}, handles)

	members := func(collection string) []string {
		rows, err := db.QueryContext(ctx, `SELECT product_id FROM collection_products WHERE collection_id = $1 ORDER BY position`, collection)
		require.NoError(t, err)
		var out []string
		for rows.Next() {
			var id string
			require.NoError(t, rows.Scan(&id))
			out = append(out, id)
		}
		return out
	}
	require.Equal(t, []string{tee, hat}, members(summer), "a category's collection holds its descendants' products")
	require.Equal(t, []string{tee}, members(shirts))
	require.Empty(t, members(offers))

}
