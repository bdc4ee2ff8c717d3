package migrations_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/merchantsvc/svc/migrations"
	"github.com/merchantsvc/svc/storage"
)

// Migration 0070 counts every phone's COD outcomes per store from the
// orders already there, and its trigger keeps the counts through every
// change of an order's outcome: they always equal a recount. The trust
// check reads them in a few buffers however long the phone's history.
func TestCODOutcomeCountsMatchARecount(t *testing.T) {
	ctx, db := context.Background(), databaseAt(t, 69)
	const (
		store = "00000000-0000-0000-0000-0000000070b1"
		other = "00000000-0000-0000-0000-0000000070b2"
		mona  = "+201001234567"
		omar  = "+201009876543"
	)
	exec := func(query string, args ...any) {
		t.Helper()
		_, err := db.ExecContext(ctx, query, args...)
		require.NoError(t, err, query)
	}
	exec(`INSERT INTO users (id, email, password_hash, name, locale, created_at, updated_at)
		VALUES ('00000000-0000-0000-0000-0000000070a1', 'cod@example.com', 'x', 'COD', 'ar', now(), now())`)
	exec(`INSERT INTO stores (id, owner_user_id, name, subdomain, currency, default_language, lifecycle_state, created_at, updated_at)
		VALUES ($1, '00000000-0000-0000-0000-0000000070a1', 'One', 'cod-one', 'EGP', 'ar', 'trial', now(), now()),
		       ($2, '00000000-0000-0000-0000-0000000070a1', 'Two', 'cod-two', 'EGP', 'ar', 'trial', now(), now())`, store, other)
	n := 0
	order := func(storeID, status, method string, phone any, confirmed bool) string {
		n++
		id := uuid.NewString()
		exec(`INSERT INTO orders (id, store_id, order_number, status, payment_method, currency, customer, shipping_address, subtotal, total,
				collectible_total, customer_phone, carrier_confirmed_at)
			VALUES ($1, $2, 'ORD-' || $3::int, $4, $5, 'EGP', '{}', '{}', 45000, 45000, 45000, $6, CASE WHEN $7 THEN now() END)`,
			id, storeID, 1000+n, status, method, phone, confirmed)
		return id
	}
	// The history before the migration: every kind of row, counted or not.
	order(store, "DELIVERED", "cod", mona, false)
	order(store, "RETURNED", "cod", mona, true)
	order(store, "DELIVERED", "bank_transfer", mona, false)
	order(store, "SHIPPED", "cod", mona, false)
	order(store, "RETURNED", "cod", nil, false)
	order(other, "RETURNED", "cod", mona, true)
	order(other, "RETURNED", "cod", mona, false)
	order(other, "DELIVERED", "cod", omar, true)

	drift := func() int {
		t.Helper()
		var d int
		require.NoError(t, db.QueryRowContext(ctx, `SELECT count(*) FROM (
				(SELECT * FROM cod_phone_outcomes WHERE completed > 0 EXCEPT SELECT * FROM recount_cod_phone_outcomes(NULL))
				UNION ALL
				(SELECT * FROM recount_cod_phone_outcomes(NULL) EXCEPT SELECT * FROM cod_phone_outcomes)) d`).Scan(&d))
		return d
	}
	counts := func(phone, storeID string) [4]int {
		t.Helper()
		var c [4]int
		err := db.QueryRowContext(ctx, `SELECT returned, completed, confirmed_returned, confirmed_completed FROM cod_phone_outcomes
			WHERE customer_phone = $1 AND store_id = $2`, phone, storeID).Scan(&c[0], &c[1], &c[2], &c[3])
		if err == sql.ErrNoRows {
			return c
		}
		require.NoError(t, err)
		return c
	}
	require.NoError(t, migrations.UpTo(ctx, db, 70))
	require.Equal(t, [4]int{1, 2, 1, 1}, counts(mona, store), "the backfill: own outcomes, and the confirmed ones")
	require.Equal(t, [4]int{2, 2, 1, 1}, counts(mona, other))
	require.Equal(t, [4]int{0, 1, 0, 1}, counts(omar, other))
	require.Zero(t, drift())

	// Every way an order's outcome changes after it.
	pending := order(store, "PENDING", "cod", mona, false)
	changes := []struct {
		name, sql string
	}{
		{"delivered", `UPDATE orders SET status = 'DELIVERED' WHERE id = $1`},
		{"carrier-confirmed", `UPDATE orders SET carrier_confirmed_at = now() WHERE id = $1`},
		{"returned after delivery", `UPDATE orders SET status = 'RETURNED' WHERE id = $1`},
		{"phone corrected", `UPDATE orders SET customer_phone = '` + omar + `' WHERE id = $1`},
		{"phone redacted", `UPDATE orders SET customer_phone = NULL WHERE id = $1`},
		{"phone back", `UPDATE orders SET customer_phone = '` + mona + `' WHERE id = $1`},
		{"paid another way", `UPDATE orders SET payment_method = 'bank_transfer' WHERE id = $1`},
		{"COD again", `UPDATE orders SET payment_method = 'cod' WHERE id = $1`},
		{"an unrelated update", `UPDATE orders SET notes = 'ring twice' WHERE id = $1`},
		{"deleted", `DELETE FROM orders WHERE id = $1`},
	}
	for _, c := range changes {
		exec(c.sql, pending)
		require.Zero(t, drift(), c.name)
	}
	require.Equal(t, [4]int{1, 2, 1, 1}, counts(mona, store), "back where the backfill left it")
	order(store, "RETURNED", "cod", mona, true) // written as an outcome at once (an import)
	require.Equal(t, [4]int{2, 3, 2, 2}, counts(mona, store))
	require.Zero(t, drift())

	// A phone with 3 000 outcomes in the store: the trust check's read
	// touches as many buffers as one with three (counting the orders read
	// about a hundred and fifty).
	exec(`INSERT INTO orders (id, store_id, order_number, status, payment_method, currency, customer, shipping_address, subtotal, total,
			collectible_total, customer_phone)
		SELECT gen_random_uuid(), $1, 'ORD-' || (100000 + k), CASE WHEN k % 10 = 0 THEN 'RETURNED' ELSE 'DELIVERED' END, 'cod', 'EGP', '{}', '{}',
			45000, 45000, 45000, $2
		FROM generate_series(1, 3000) AS k`, store, mona)
	// The 3 000 outcomes came in one statement, so the phone's row has
	// 3 000 versions until a vacuum (outcomes one by one, as carriers
	// report them, leave one: each update prunes the last).
	exec(`VACUUM ANALYZE orders, cod_phone_outcomes`)
	require.Zero(t, drift())
	for _, st := range storage.OrderHistoryStatements(uuid.MustParse(store), uuid.Nil, mona) {
		var plan string
		require.NoError(t, db.QueryRowContext(ctx, "EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) "+st.SQL, st.Args...).Scan(&plan))
		var parsed []struct {
			Plan struct {
				Hit  int `json:"Shared Hit Blocks"`
				Read int `json:"Shared Read Blocks"`
			} `json:"Plan"`
		}
		require.NoError(t, json.Unmarshal([]byte(plan), &parsed))
		require.LessOrEqual(t, parsed[0].Plan.Hit+parsed[0].Plan.Read, 8, "%s: %s", st.Name, plan)
	}
}
