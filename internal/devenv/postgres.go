package devenv

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
)

// Postgres is a local cluster run from the machine's PostgreSQL binaries.
// It listens on loopback TCP and on a Unix socket; its URLs take the socket
// when its path fits (see DatabaseURL).
type Postgres struct {
	// URL reaches the `postgres` database as the superuser `svc`.
	URL  string
	Port int
	// SocketDir holds the cluster's Unix socket.
	SocketDir string
	proc      *child
}

// PostgresOptions says where the cluster lives and how it runs.
type PostgresOptions struct {
	Dir  string // data directory parent; the cluster is created on first use
	Port int
	// Throwaway turns off durability for speed (tests).
	Throwaway bool
	Log       io.Writer
}

// postgresBinDir finds the server binaries: Debian installs them outside PATH.
func postgresBinDir() (string, error) {
	matches, _ := filepath.Glob("/usr/lib/postgresql/*/bin/postgres")
	sort.Strings(matches)
	if len(matches) > 0 {
		return filepath.Dir(matches[len(matches)-1]), nil
	}
	if p, err := exec.LookPath("postgres"); err == nil {
		return filepath.Dir(p), nil
	}
	return "", errors.New("PostgreSQL server binaries not found: install the Debian package `postgresql` " +
		"(apt-get install postgresql), or set SVC_DATABASE_URL to an existing server")
}

// StartPostgres creates the cluster if needed and starts it on loopback.
func StartPostgres(ctx context.Context, opts PostgresOptions) (*Postgres, error) {
	bin, err := postgresBinDir()
	if err != nil {
		return nil, err
	}
	cred, err := unprivilegedUser()
	if err != nil {
		return nil, err
	}
	if opts.Log == nil {
		opts.Log = io.Discard
	}
	dataDir := filepath.Join(opts.Dir, "data")
	socketDir := filepath.Join(opts.Dir, "run")
	for _, d := range []string{opts.Dir, socketDir} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, fmt.Errorf("create %s: %w", d, err)
		}
		if cred != nil {
			if err := os.Chown(d, int(cred.Uid), int(cred.Gid)); err != nil {
				return nil, fmt.Errorf("chown %s: %w", d, err)
			}
		}
	}
	if _, err := os.Stat(filepath.Join(dataDir, "PG_VERSION")); errors.Is(err, os.ErrNotExist) {
		initdb := exec.CommandContext(ctx, filepath.Join(bin, "initdb"), "-D", dataDir, "-U", "svc",
			"--auth=trust", "--encoding=UTF8", "--locale=C.UTF-8", "--no-sync")
		initdb.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
		initdb.Stdout, initdb.Stderr = opts.Log, opts.Log
		if out, err := runCaptured(initdb); err != nil {
			return nil, fmt.Errorf("initdb: %w: %s", err, out)
		}
		// A throwaway cluster does not survive a crash, so it skips the
		// flushes. The settings go in the configuration file rather than
		// on the command line, which would outrank ALTER SYSTEM: the load
		// benchmark turns them back on for its production-like run.
		if opts.Throwaway {
			// pg_stat_statements is loaded but counts nothing until a
			// benchmark turns it on (it costs the statement-heavy webhook
			// fan-out about a tenth).
			if err := appendFile(filepath.Join(dataDir, "postgresql.conf"), "fsync = off\nsynchronous_commit = off\nfull_page_writes = off\npg_stat_statements.track = none\n"); err != nil {
				return nil, err
			}
		}
	}
	args := []string{"-D", dataDir, "-p", fmt.Sprint(opts.Port), "-k", socketDir,
		"-c", "listen_addresses=127.0.0.1", "-c", "max_connections=300",
		// pg_stat_statements counts each statement's time: make load reports
		// where Postgres's share of the mix goes, and in `make dev` it is
		// there to look at (CREATE EXTENSION pg_stat_statements). The
		// throwaway cluster keeps it off until asked (below).
		"-c", "shared_preload_libraries=pg_stat_statements"}
	cmd := exec.Command(filepath.Join(bin, "postgres"), args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	cmd.Stdout, cmd.Stderr = opts.Log, opts.Log
	// SIGINT is Postgres's fast shutdown.
	proc, err := startChild("postgres", cmd, syscall.SIGINT)
	if err != nil {
		return nil, err
	}
	pg := &Postgres{Port: opts.Port, SocketDir: socketDir, proc: proc}
	pg.URL = pg.DatabaseURL("postgres")
	err = waitFor(ctx, proc, 60*time.Second, func(ctx context.Context) error {
		conn, err := pgx.Connect(ctx, pg.URL)
		if err != nil {
			return err
		}
		return conn.Close(ctx)
	})
	if err != nil {
		_ = proc.Stop()
		return nil, err
	}
	return pg, nil
}

// DatabaseURL is the URL of another database in the cluster: through its
// Unix socket when the socket's path fits in one (a path is at most 107
// bytes), else through loopback TCP. On one machine the socket costs both
// sides less per round trip than TCP's loopback (about 70 against 110 µs
// of CPU for a one-row query on the 2-vCPU machine of docs/benchmarks.md),
// and the service makes several round trips a request.
func (p *Postgres) DatabaseURL(name string) string {
	socket := filepath.Join(p.SocketDir, fmt.Sprintf(".s.PGSQL.%d", p.Port))
	if p.SocketDir != "" && len(socket) < maxSocketPath {
		q := url.Values{"host": {p.SocketDir}, "port": {fmt.Sprint(p.Port)}, "sslmode": {"disable"}}
		return (&url.URL{Scheme: "postgres", User: url.User("svc"), Path: "/" + name, RawQuery: q.Encode()}).String()
	}
	return fmt.Sprintf("postgres://svc@127.0.0.1:%d/%s?sslmode=disable", p.Port, name)
}

// maxSocketPath is the room in a Unix socket address (sun_path, 108 bytes
// on Linux, with its terminating NUL).
const maxSocketPath = 108

// WithDatabase answers a Postgres URL that reaches database name on the
// same server, as the same user, by the same way (TCP or socket).
func WithDatabase(postgresURL, name string) (string, error) {
	u, err := url.Parse(postgresURL)
	if err != nil {
		return "", fmt.Errorf("postgres url: %w", err)
	}
	u.Path, u.RawPath = "/"+name, ""
	return u.String(), nil
}

// EnsureDatabase creates the database when missing.
func (p *Postgres) EnsureDatabase(ctx context.Context, name string) error {
	_, err := ensureDatabase(ctx, p.URL, name)
	return err
}

// ensureDatabase creates the database on the server adminURL reaches when
// it is missing, and says whether it did.
func ensureDatabase(ctx context.Context, adminURL, name string) (created bool, err error) {
	conn, err := pgx.Connect(ctx, adminURL)
	if err != nil {
		return false, fmt.Errorf("connect postgres: %w", err)
	}
	defer conn.Close(ctx)
	var exists bool
	if err := conn.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)`, name).Scan(&exists); err != nil {
		return false, fmt.Errorf("check database %s: %w", name, err)
	}
	if exists {
		return false, nil
	}
	if _, err := conn.Exec(ctx, `CREATE DATABASE `+pgx.Identifier{name}.Sanitize()); err != nil {
		return false, fmt.Errorf("create database %s: %w", name, err)
	}
	return true, nil
}

// Stop shuts the cluster down.
func (p *Postgres) Stop() error { return p.proc.Stop() }

func runCaptured(cmd *exec.Cmd) (string, error) {
	var buf limitedBuffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	err := cmd.Run()
	return buf.String(), err
}

// limitedBuffer keeps the last 8 KiB of a command's output for error messages.
type limitedBuffer struct{ b []byte }

func (l *limitedBuffer) Write(p []byte) (int, error) {
	l.b = append(l.b, p...)
	if len(l.b) > 8<<10 {
		l.b = l.b[len(l.b)-8<<10:]
	}
	return len(p), nil
}

func (l *limitedBuffer) String() string { return string(l.b) }

func appendFile(name, text string) error {
	f, err := os.OpenFile(name, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(text); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
