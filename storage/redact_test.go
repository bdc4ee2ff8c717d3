package storage

import (
	"errors"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/require"
)

func TestRedactedDropsPostgresRowData(t *testing.T) {
	pgErr := &pgconn.PgError{Severity: "ERROR", Code: "23514", Message: `invalid input syntax for type uuid: "salma@example.com"`,
		Detail: "Failing row contains (salma@example.com, +201005556667)", ConstraintName: "orders_total_check", TableName: "orders"}
	err := fmt.Errorf("create order: %w", pgErr)
	got := Redacted(err)
	require.Equal(t, "create order: postgres error SQLSTATE 23514 constraint orders_total_check table orders", got.Error())
	require.NotContains(t, fmt.Sprintf("%v %+v", got, got), "salma")
	var back *pgconn.PgError
	require.True(t, errors.As(got, &back), "still unwraps")
	plain := errors.New("dial tcp: refused")
	require.Equal(t, plain, Redacted(plain))
}
