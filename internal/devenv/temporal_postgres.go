package devenv

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"go.temporal.io/server/common/config"
	"go.temporal.io/server/common/log"
	"go.temporal.io/server/common/persistence/sql/sqlplugin/postgresql"
	"go.temporal.io/server/tools/common/schema"
	toolsql "go.temporal.io/server/tools/sql"
)

// TemporalPostgres keeps a development Temporal server's state on a
// Postgres server instead of SQLite: its history in Database, its
// visibility (what the UI lists and searches) in Database_visibility. Both
// are created and brought to the server's schema version on start.
type TemporalPostgres struct {
	// AdminURL reaches the server as a user who may create databases.
	AdminURL string
	Database string
}

// PostgresHistoryShards is fixed when the cluster's databases are first
// created; a server started with another count refuses them.
const PostgresHistoryShards = 4

// temporalSchemas are the server's embedded schema directories, by the
// database they go into.
var temporalSchemas = []struct{ suffix, name string }{
	{"", "postgresql/v12/temporal"},
	{"_visibility", "postgresql/v12/visibility"},
}

// prepare creates both databases when missing, applies the schema updates
// they lack, and answers their persistence configs.
func (p TemporalPostgres) prepare(ctx context.Context) (store, visibility *config.SQL, err error) {
	admin, err := pgx.ParseConfig(p.AdminURL)
	if err != nil {
		return nil, nil, fmt.Errorf("temporal postgres url: %w", err)
	}
	var cfgs []*config.SQL
	for _, s := range temporalSchemas {
		name := p.Database + s.suffix
		if _, err := ensureDatabase(ctx, p.AdminURL, name); err != nil {
			return nil, nil, err
		}
		cfg := &config.SQL{
			PluginName:      postgresql.PluginNamePGX,
			DatabaseName:    name,
			ConnectAddr:     net.JoinHostPort(admin.Host, strconv.Itoa(int(admin.Port))),
			ConnectProtocol: "tcp",
			User:            admin.User,
			Password:        admin.Password,
			MaxConns:        20,
			MaxIdleConns:    20,
		}
		// A socket directory for a host: Temporal's plugin writes the
		// address as a URL's host, and pgx takes the socket from a host
		// parameter, which outranks it.
		if strings.HasPrefix(admin.Host, "/") {
			cfg.ConnectAddr = net.JoinHostPort("localhost", strconv.Itoa(int(admin.Port)))
			cfg.ConnectAttributes = map[string]string{"host": admin.Host}
		}
		if err := applyTemporalSchema(cfg, s.name); err != nil {
			return nil, nil, fmt.Errorf("temporal schema %s: %w", name, err)
		}
		cfgs = append(cfgs, cfg)
	}
	return cfgs[0], cfgs[1], nil
}

// applyTemporalSchema runs what temporal-sql-tool's setup-schema -v 0.0
// and update-schema do: the version tables, then every versioned change
// past the database's version, from the server module's embedded files.
func applyTemporalSchema(cfg *config.SQL, schemaName string) error {
	conn, err := toolsql.NewConnection(cfg, log.NewNoopLogger())
	if err != nil {
		return err
	}
	defer conn.Close()
	if err := schema.NewSetupSchemaTask(conn, &schema.SetupConfig{InitialVersion: "0.0"}, log.NewNoopLogger()).Run(); err != nil {
		return err
	}
	return schema.NewUpdateSchemaTask(conn, &schema.UpdateConfig{DBName: cfg.DatabaseName, SchemaName: schemaName}, log.NewNoopLogger()).Run()
}

// forgetMembers clears the membership ring a previous run left (see the
// SQLite forgetMembers).
func (p TemporalPostgres) forgetMembers(ctx context.Context) error {
	cfg, err := pgx.ParseConfig(p.AdminURL)
	if err != nil {
		return err
	}
	cfg.Database = p.Database
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return fmt.Errorf("connect temporal database: %w", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `DELETE FROM cluster_membership`); err != nil {
		return fmt.Errorf("forget the previous run's members: %w", err)
	}
	return nil
}
