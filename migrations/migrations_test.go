package migrations_test

import (
	"context"
	"database/sql"
	"testing"

	_ "github.com/jackc/pgx/v5/stdlib"
	"github.com/stretchr/testify/require"

	"github.com/merchantsvc/svc/internal/testenv"
	"github.com/merchantsvc/svc/migrations"
)

// Migrations apply to an empty database, and applying them again changes nothing.
func TestUpFromEmpty(t *testing.T) {
	ctx := context.Background()
	db, err := sql.Open("pgx", testenv.DatabaseURL(t, false))
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })

	require.NoError(t, migrations.Up(ctx, db))
	version, err := migrations.Version(ctx, db)
	require.NoError(t, err)
	require.GreaterOrEqual(t, version, int64(1))

	var tables int
	require.NoError(t, db.QueryRowContext(ctx, `SELECT count(*) FROM information_schema.tables
		WHERE table_schema = 'public' AND table_name IN ('users', 'stores', 'api_tokens', 'products', 'variants', 'outbox', 'idempotency_keys')`).Scan(&tables))
	require.Equal(t, 7, tables)

	require.NoError(t, migrations.Up(ctx, db))
	again, err := migrations.Version(ctx, db)
	require.NoError(t, err)
	require.Equal(t, version, again)
}
