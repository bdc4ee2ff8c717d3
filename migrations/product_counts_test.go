package migrations_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/merchantsvc/svc/migrations"
)

// Migration 0071 counts each store's products by status from the rows
// already there, and its triggers keep the counts through every insert
// (one by one and in bulk), status change, move and delete: they always
// equal a recount, so the list totals read from them are exact.
func TestProductStatusCountsMatchARecount(t *testing.T) {
	ctx, db := context.Background(), databaseAt(t, 70)
	const (
		store = "00000000-0000-0000-0000-0000000071b1"
		other = "00000000-0000-0000-0000-0000000071b2"
	)
	exec := func(query string, args ...any) {
		t.Helper()
		_, err := db.ExecContext(ctx, query, args...)
		require.NoError(t, err, query)
	}
	exec(`INSERT INTO users (id, email, password_hash, name, locale, created_at, updated_at)
		VALUES ('00000000-0000-0000-0000-0000000071a1', 'catalog@example.com', 'x', 'Catalog', 'ar', now(), now())`)
	exec(`INSERT INTO stores (id, owner_user_id, name, subdomain, currency, default_language, lifecycle_state, created_at, updated_at)
		VALUES ($1, '00000000-0000-0000-0000-0000000071a1', 'One', 'catalog-one', 'EGP', 'ar', 'trial', now(), now()),
		       ($2, '00000000-0000-0000-0000-0000000071a1', 'Two', 'catalog-two', 'EGP', 'ar', 'trial', now(), now())`, store, other)
	products := func(n int, status string) {
		exec(`INSERT INTO products (id, store_id, name, price, status, created_at, updated_at)
			SELECT gen_random_uuid(), CASE WHEN i % 3 = 0 THEN $2::uuid ELSE $1::uuid END, 'Product ' || i, 1000, $4, now(), now()
			FROM generate_series(1, $3) AS i`, store, other, n, status)
	}
	products(30, "active")
	products(6, "draft")
	drift := func() int {
		t.Helper()
		var d int
		require.NoError(t, db.QueryRowContext(ctx, `SELECT count(*) FROM (
				(SELECT * FROM product_status_counts WHERE n <> 0 EXCEPT SELECT * FROM recount_product_statuses(NULL))
				UNION ALL
				(SELECT * FROM recount_product_statuses(NULL) EXCEPT SELECT * FROM product_status_counts)) d`).Scan(&d))
		return d
	}
	count := func(storeID, status string) int {
		t.Helper()
		var n int
		require.NoError(t, db.QueryRowContext(ctx, `SELECT COALESCE(sum(n), 0) FROM product_status_counts WHERE store_id = $1 AND status = $2`,
			storeID, status).Scan(&n))
		return n
	}
	require.NoError(t, migrations.UpTo(ctx, db, 71))
	require.Equal(t, 20, count(store, "active"), "the backfill")
	require.Equal(t, 4, count(store, "draft"))
	require.Equal(t, 10, count(other, "active"))
	require.Zero(t, drift())

	for _, c := range []struct{ name, sql string }{
		{"a bulk insert", `INSERT INTO products (id, store_id, name, price, status, created_at, updated_at)
			SELECT gen_random_uuid(), $1, 'Imported ' || i, 1000, CASE WHEN i % 4 = 0 THEN 'draft' ELSE 'active' END, now(), now()
			FROM generate_series(1, 400) AS i`},
		{"one insert", `INSERT INTO products (id, store_id, name, price, status) VALUES (gen_random_uuid(), $1, 'One', 1000, 'active')`},
		{"drafts published", `UPDATE products SET status = 'active' WHERE store_id = $1 AND status = 'draft' AND name LIKE 'Imported 1%'`},
		{"an edit that keeps the status", `UPDATE products SET price = price + 1 WHERE store_id = $1`},
		{"archived", `UPDATE products SET status = 'archived' WHERE store_id = $1 AND name LIKE 'Imported 2%'`},
		{"deleted", `DELETE FROM products WHERE store_id = $1 AND name LIKE 'Imported 3%'`},
		{"moved to the other store", `UPDATE products SET store_id = '` + other + `' WHERE store_id = $1 AND name = 'One'`},
	} {
		exec(c.sql, store)
		require.Zero(t, drift(), c.name)
	}
	var recounted int
	require.NoError(t, db.QueryRowContext(ctx, `SELECT count(*) FROM products WHERE store_id = $1 AND status = 'active'`, store).Scan(&recounted))
	require.Equal(t, recounted, count(store, "active"))
}
