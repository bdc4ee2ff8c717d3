package migrations_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/merchantsvc/svc/migrations"
)

// Migration 0061 gives every product a handle made from its name as
// storage/handle's FromTitle makes one: Arabic kept, tatweel and tashkeel
// dropped, Arabic-Indic digits read; -2 on a name the store's products share
// (in creation order); a piece of the id where a numbered handle meets a
// name that reads the same; "product" when nothing of the name is usable;
// and each store numbers its own.
func TestProductHandlesMigration(t *testing.T) {
	ctx, db := context.Background(), databaseAt(t, 59)
	const (
		store, other = "00000000-0000-0000-0000-0000000061a1", "00000000-0000-0000-0000-0000000061a2"
		tee1, tee2   = "00000000-0000-0000-0000-0000000061d1", "00000000-0000-0000-0000-0000000061d2"
		tee3         = "00000000-0000-0000-0000-0000000061d3"
		abaya, blank = "00000000-0000-0000-0000-0000000061d4", "00000000-0000-0000-0000-0000000061d5"
		theirs       = "00000000-0000-0000-0000-0000000061d6"
	)
	exec := func(query string, args ...any) {
		t.Helper()
		_, err := db.ExecContext(ctx, query, args...)
		require.NoError(t, err, query)
	}
	exec(`INSERT INTO users (id, email, password_hash, name, locale) VALUES ('00000000-0000-0000-0000-0000000061b1', 'handles@example.com', 'x', 'H', 'ar')`)
	exec(`INSERT INTO stores (id, owner_user_id, name, subdomain, currency, default_language) VALUES
		($1, '00000000-0000-0000-0000-0000000061b1', 'Handles', 'old-handles', 'EGP', 'ar'),
		($2, '00000000-0000-0000-0000-0000000061b1', 'Other', 'old-handles-2', 'EGP', 'ar')`, store, other)
	exec(`INSERT INTO products (id, store_id, name, price, created_at) VALUES
		($2, $1, 'Tee', 100, '2026-01-01'), ($3, $1, '  tee ', 100, '2026-01-02'), ($4, $1, 'Tee 2', 100, '2026-01-03'),
		($5, $1, 'عَبـاية ٢٠٢٦', 100, '2026-01-04'), ($6, $1, '!!!', 100, '2026-01-05'), ($8, $7, 'Tee', 100, '2026-01-06')`,
		store, tee1, tee2, tee3, abaya, blank, other, theirs)
	require.NoError(t, migrations.Up(ctx, db))

	handles := map[string]string{}
	rows, err := db.QueryContext(ctx, `SELECT id, handle FROM products WHERE store_id IN ($1, $2)`, store, other)
	require.NoError(t, err)
	for rows.Next() {
		var id, h string
		require.NoError(t, rows.Scan(&id, &h))
		handles[id] = h
	}
	require.NoError(t, rows.Err())
	require.Equal(t, map[string]string{tee1: "tee", tee2: "tee-2", tee3: "tee-2-000061d3", abaya: "عباية-2026", blank: "product", theirs: "tee"}, handles)

	// The column is required and unique per store from now on.
	_, err = db.ExecContext(ctx, `UPDATE products SET handle = 'tee' WHERE id = $1`, tee2)
	require.Error(t, err, "unique per store")
	_, err = db.ExecContext(ctx, `INSERT INTO products (id, store_id, name, price) VALUES ('00000000-0000-0000-0000-0000000061d9', $1, 'Raw', 1)`, store)
	require.NoError(t, err, "a row written by hand gets a handle")
}
