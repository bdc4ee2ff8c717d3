package devenv

import (
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
)

// A cluster's URLs go through its Unix socket when the socket's path fits
// in a socket address, else through loopback TCP; WithDatabase keeps the
// way and changes only the database.
func TestPostgresURLsTakeTheSocketWhenItFits(t *testing.T) {
	long := "/tmp/" + strings.Repeat("d", 100)
	cases := []struct {
		name, socketDir, wantHost string
	}{
		{"short socket path", "/tmp/svc-test-1/postgres/run", "/tmp/svc-test-1/postgres/run"},
		{"socket path too long for an address", long, "127.0.0.1"},
		{"no socket directory", "", "127.0.0.1"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			pg := &Postgres{Port: 54321, SocketDir: c.socketDir}
			cfg, err := pgx.ParseConfig(pg.DatabaseURL("shop"))
			require.NoError(t, err)
			require.Equal(t, c.wantHost, cfg.Host)
			require.EqualValues(t, 54321, cfg.Port)
			require.Equal(t, "shop", cfg.Database)
			require.Equal(t, "svc", cfg.User)

			other, err := WithDatabase(pg.DatabaseURL("shop"), "t_42")
			require.NoError(t, err)
			cfg, err = pgx.ParseConfig(other)
			require.NoError(t, err)
			require.Equal(t, c.wantHost, cfg.Host)
			require.EqualValues(t, 54321, cfg.Port)
			require.Equal(t, "t_42", cfg.Database)
		})
	}
}
