package storage

import (
	"context"
	"errors"
	"fmt"
	"time"

	sq "github.com/Masterminds/squirrel"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Sentinel errors the API maps to statuses in one place.
var (
	ErrNotFound     = errors.New("not found")
	ErrConflict     = errors.New("conflict")
	ErrDuplicateSKU = errors.New("duplicate sku")
	ErrInvalid      = errors.New("invalid")
	ErrVariantInUse = errors.New("variant in use")
)

// InvalidError names the field a domain rule refused.
type InvalidError struct {
	Field   string
	Code    string
	Message string
}

func (e *InvalidError) Error() string { return fmt.Sprintf("%s: %s", e.Field, e.Message) }

// Is lets errors.Is(err, ErrInvalid) match every InvalidError.
func (e *InvalidError) Is(target error) bool { return target == ErrInvalid }

// ConflictError names what already exists.
type ConflictError struct {
	Field   string
	Message string
}

func (e *ConflictError) Error() string { return e.Field + ": " + e.Message }

// Is lets errors.Is(err, ErrConflict) match every ConflictError.
func (e *ConflictError) Is(target error) bool { return target == ErrConflict }

var psql = sq.StatementBuilder.PlaceholderFormat(sq.Dollar)

// querier is what both a pool and a transaction can do.
type querier interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
	SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults
}

type reader struct {
	q querier
	// filesBase is the API's base URL, under which the store's media are
	// served (/files/…): a content body's img may name one by its absolute
	// URL there as well as by its path. Empty accepts paths only.
	filesBase string
}

// DB is the service's handle on Postgres.
type DB struct {
	reader
	pool *pgxpool.Pool
	now  func() time.Time
	// rules keeps the stores' compiled smart-collection rules (smartRuleCache).
	rules *smartRuleCache
	// sealer seals the codes of the gift cards a paid order issues (§19)
	// inside the payment's transaction; nil until UseSealer.
	sealer *Sealer
	// menus keeps the storefront's decoded menu items by revision.
	menus *menuItemsCache
}

// UseSealer gives the database's transactions the secrets sealer that
// issuing a sold gift card needs (its code is kept as a digest and sealed);
// without one, an order holding gift card products cannot become paid
// (ErrNoSecretsKey).
func (db *DB) UseSealer(s *Sealer) { db.sealer = s }

// Tx is one transaction; a request's writes go through it (the package doc
// says which writes own their transaction on DB instead).
type Tx struct {
	reader
	tx    pgx.Tx
	now   func() time.Time
	actor Actor // who the stock movements of catalog writes name; the system unless ActAs says
	// deferred, when set, holds back row writes nothing in the transaction reads (deferWrites).
	deferred *deferredWrites
	rules    *smartRuleCache
	sealer   *Sealer // the DB's (UseSealer)
}

// ServeFilesAt names the base URL the API serves media files under, so a
// content body's absolute media URL is recognised as the store's own.
func (tx *Tx) ServeFilesAt(baseURL string) { tx.filesBase = baseURL }

// ActAs names who the transaction's catalog stock writes (quantity fields,
// imports) are by, for the inventory ledger.
func (tx *Tx) ActAs(a Actor) { tx.actor = a }

// movementActor is the actor of the transaction's stock writes.
func (tx *Tx) movementActor() Actor {
	if tx.actor.Type == "" {
		return Actor{Type: "system"}
	}
	return tx.actor
}

// Open connects to Postgres and checks the connection.
func Open(ctx context.Context, url string) (*DB, error) { return OpenTraced(ctx, url, nil) }

// OpenTraced is Open with a query tracer (OpenTelemetry spans for SQL); a nil
// tracer traces nothing.
func OpenTraced(ctx context.Context, url string, tracer pgx.QueryTracer) (*DB, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("parse database url: %w", err)
	}
	cfg.ConnConfig.Tracer = tracer
	cfg.AfterConnect = func(_ context.Context, conn *pgx.Conn) error {
		encodeUUIDs(conn.TypeMap())
		return nil
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("connect database: %w", err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("ping database: %w", err)
	}
	return New(pool), nil
}

// New wraps an existing pool.
func New(pool *pgxpool.Pool) *DB {
	return &DB{reader: reader{q: pool}, pool: pool, now: Now, rules: newSmartRuleCache(), menus: newMenuItemsCache()}
}

// Close releases the pool.
func (db *DB) Close() { db.pool.Close() }

// Ping checks Postgres answers.
func (db *DB) Ping(ctx context.Context) error { return db.pool.Ping(ctx) }

// Listener receives a Postgres notification channel's signals on a
// connection of its own.
type Listener struct {
	conn *pgxpool.Conn
}

// Listen holds a connection that listens on channel until Close.
func (db *DB) Listen(ctx context.Context, channel string) (*Listener, error) {
	conn, err := db.pool.Acquire(ctx)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", channel, err)
	}
	if _, err := conn.Exec(ctx, `LISTEN `+pgx.Identifier{channel}.Sanitize()); err != nil {
		conn.Release()
		return nil, fmt.Errorf("listen on %s: %w", channel, err)
	}
	return &Listener{conn: conn}, nil
}

// Wait blocks until the next notification (or ctx ends).
func (l *Listener) Wait(ctx context.Context) error {
	_, err := l.conn.Conn().WaitForNotification(ctx)
	return err
}

// Close stops listening and returns the connection to the pool.
func (l *Listener) Close(ctx context.Context) {
	_, _ = l.conn.Exec(context.WithoutCancel(ctx), `UNLISTEN *`)
	l.conn.Release()
}

// SetClock replaces the clock, for tests of time rules.
func (db *DB) SetClock(now func() time.Time) { db.now = now }

// InTx runs fn in one transaction, committing when fn returns nil. The
// context's CommitHook, if any, writes last before the commit.
func (db *DB) InTx(ctx context.Context, fn func(tx *Tx) error) error {
	hook, _ := ctx.Value(commitHookKey{}).(CommitHook)
	err := pgx.BeginFunc(ctx, db.pool, func(ptx pgx.Tx) error {
		tx := &Tx{reader: reader{q: ptx}, tx: ptx, now: db.now, rules: db.rules, sealer: db.sealer}
		if err := fn(tx); err != nil {
			return err
		}
		if hook != nil {
			return hook.BeforeCommit(ctx, tx)
		}
		return nil
	})
	if err == nil && hook != nil {
		hook.Committed()
	}
	return err
}

// savepoint runs fn inside a savepoint of the transaction: fn's writes are
// kept when it returns nil and keep is true, and undone otherwise, leaving
// the transaction usable either way. fn's error is returned.
func (tx *Tx) savepoint(ctx context.Context, keep bool, fn func(sub *Tx) error) error {
	sp, err := tx.tx.Begin(ctx)
	if err != nil {
		return fmt.Errorf("savepoint: %w", err)
	}
	err = fn(&Tx{reader: reader{q: sp, filesBase: tx.filesBase}, tx: sp, now: tx.now, actor: tx.actor, rules: tx.rules, sealer: tx.sealer})
	if err != nil || !keep {
		if rbErr := sp.Rollback(ctx); rbErr != nil {
			return errors.Join(err, fmt.Errorf("roll back to savepoint: %w", rbErr))
		}
		return err
	}
	if err := sp.Commit(ctx); err != nil {
		return fmt.Errorf("release savepoint: %w", err)
	}
	return nil
}

// NewID returns a new time-ordered uuid (v7), so ids sort roughly by creation.
func NewID() uuid.UUID {
	return uuid.Must(uuid.NewV7())
}

// isUniqueViolation reports whether err is Postgres's unique_violation (23505),
// optionally on the named constraint.
func isUniqueViolation(err error, constraint string) bool {
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || pgErr.Code != "23505" {
		return false
	}
	return constraint == "" || pgErr.ConstraintName == constraint
}

// isForeignKeyViolation reports whether err is Postgres's foreign_key_violation (23503).
func isForeignKeyViolation(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == "23503"
}

func notFoundIfNoRows(err error, what string) error {
	if errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("%s: %w", what, ErrNotFound)
	}
	return fmt.Errorf("%s: %w", what, err)
}

// Page is a 1-based page request.

// Now is the service's clock: UTC, to the microsecond, which is what
// Postgres keeps; a time answered at creation is byte for byte the time a
// later read answers.
func Now() time.Time { return time.Now().UTC().Truncate(time.Microsecond) }

// Now asks Postgres for its clock: the cheapest proof the database answers.
func (db *DB) Now(ctx context.Context) (time.Time, error) {
	var now time.Time
	if err := db.pool.QueryRow(ctx, `SELECT now()`).Scan(&now); err != nil {
		return time.Time{}, fmt.Errorf("database clock: %w", err)
	}
	return now.UTC(), nil
}
