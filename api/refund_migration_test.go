package api_test

import (
	"context"
	"database/sql"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/merchantsvc/svc/internal/testenv"
	"github.com/merchantsvc/svc/migrations"
)

// Migration 0028: a refund stored `completed` becomes `succeeded` (decisions
// §13); pending and failed ones stay, and `completed` is refused from then on.
func TestRefundMigrationFromTheOldWay(t *testing.T) {
	ctx := context.Background()
	db, err := sql.Open("pgx", testenv.DatabaseURL(t, false))
	require.NoError(t, err)
	defer db.Close()
	require.NoError(t, migrations.UpTo(ctx, db, 27))
	exec := func(query string, args ...any) {
		t.Helper()
		_, err := db.ExecContext(ctx, query, args...)
		require.NoError(t, err)
	}
	const store, order = "00000000-0000-0000-0000-0000000000b2", "00000000-0000-0000-0000-0000000001b2"
	exec(`INSERT INTO users (id, email, password_hash, name, locale, created_at, updated_at)
		VALUES ('00000000-0000-0000-0000-0000000000a2', 'refunds@example.com', 'x', 'Old', 'ar', now(), now())`)
	exec(`INSERT INTO stores (id, owner_user_id, name, subdomain, currency, default_language, lifecycle_state, created_at, updated_at)
		VALUES ($1, '00000000-0000-0000-0000-0000000000a2', 'Old', 'old-refunds', 'EGP', 'ar', 'trial', now(), now())`, store)
	exec(`INSERT INTO orders (id, store_id, order_number, status, payment_method, currency, customer, shipping_address, subtotal, total, collectible_total)
		VALUES ($1, $2, 'ORD-1001', 'DELIVERED', 'bank_transfer', 'EGP', '{}', '{}', 5000, 5000, 5000)`, order, store)
	exec(`INSERT INTO order_refunds (id, store_id, order_id, amount, status) VALUES
		('00000000-0000-0000-0000-0000000002b1', $1, $2, 100, 'completed'),
		('00000000-0000-0000-0000-0000000002b2', $1, $2, 200, 'pending'),
		('00000000-0000-0000-0000-0000000002b3', $1, $2, 300, 'failed')`, store, order)
	require.NoError(t, migrations.Up(ctx, db))

	statuses := map[int]string{}
	rows, err := db.QueryContext(ctx, `SELECT amount, status FROM order_refunds WHERE order_id = $1`, order)
	require.NoError(t, err)
	defer rows.Close()
	for rows.Next() {
		var (
			amount int
			status string
		)
		require.NoError(t, rows.Scan(&amount, &status))
		statuses[amount] = status
	}
	require.Equal(t, map[int]string{100: "succeeded", 200: "pending", 300: "failed"}, statuses)
	_, err = db.ExecContext(ctx, `INSERT INTO order_refunds (id, store_id, order_id, amount, status)
		VALUES ('00000000-0000-0000-0000-0000000002b4', $1, $2, 400, 'completed')`, store, order)
	require.Error(t, err, "completed is no longer a refund status")
}
