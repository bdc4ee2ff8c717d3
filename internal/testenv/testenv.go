// Package testenv gives tests real parts: a database cloned from the migrated
// template (dropped at cleanup), a fresh MinIO bucket, and one in-process
// Temporal server per test binary. The Postgres cluster and MinIO come from
// `svc testenv` (make test), which sets the SVC_TEST_* variables.
package testenv

import (
	"context"
	"encoding/base64"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/server/temporaltest"

	"github.com/merchantsvc/svc/internal/devenv"
	"github.com/merchantsvc/svc/internal/temporalsetup"
	"github.com/merchantsvc/svc/storage"
	"github.com/merchantsvc/svc/storage/blob"
)

func env(t testing.TB, name string) string {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		t.Fatalf("%s is not set: run the tests with `make test` (it starts Postgres and MinIO for them)", name)
	}
	return v
}

// AdminURL is the throwaway cluster's maintenance database.
func AdminURL(t testing.TB) string { return env(t, "SVC_TEST_DATABASE_URL") }

// DatabaseURL creates an empty database (or a clone of the migrated template)
// and returns its URL; it is dropped when the test ends.
func DatabaseURL(t testing.TB, fromTemplate bool) string {
	t.Helper()
	ctx := context.Background()
	admin := AdminURL(t)
	name := fmt.Sprintf("t_%d", rand.Uint64())
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		t.Fatalf("connect test cluster: %v", err)
	}
	defer conn.Close(ctx)
	create := `CREATE DATABASE ` + name
	if fromTemplate {
		create += ` TEMPLATE ` + pgx.Identifier{env(t, "SVC_TEST_TEMPLATE_DATABASE")}.Sanitize()
	}
	if _, err := conn.Exec(ctx, create); err != nil {
		t.Fatalf("create test database: %v", err)
	}
	t.Cleanup(func() {
		conn, err := pgx.Connect(ctx, admin)
		if err != nil {
			t.Errorf("connect test cluster: %v", err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, `DROP DATABASE IF EXISTS `+name+` WITH (FORCE)`); err != nil {
			t.Errorf("drop test database: %v", err)
		}
	})
	url, err := devenv.WithDatabase(admin, name)
	if err != nil {
		t.Fatal(err)
	}
	return url
}

// DB opens a fresh migrated database for one test.
func DB(t testing.TB) *storage.DB {
	t.Helper()
	url := DatabaseURL(t, true)
	db, err := storage.Open(context.Background(), url)
	if err != nil {
		t.Fatalf("open test database: %v", err)
	}
	t.Cleanup(db.Close)
	databaseURLs.Store(db, url)
	t.Cleanup(func() {
		databaseURLs.Delete(db)
		if pool, ok := sqlPools.LoadAndDelete(db); ok {
			pool.(*pgxpool.Pool).Close()
		}
	})
	return db
}

// databaseURLs maps each *storage.DB that DB opened to its database's URL;
// sqlPools to the plain pool SQL opened on it.
var databaseURLs, sqlPools sync.Map

// OpenedHere reports whether DB opened db, so SQL can reach it.
func OpenedHere(db *storage.DB) bool {
	_, ok := databaseURLs.Load(db)
	return ok
}

// SQL is a plain pool on the database of db (opened by DB), for tests that
// seed rows or check them directly: storage keeps its own pool to itself.

func SQL(t testing.TB, db *storage.DB) *pgxpool.Pool {
	t.Helper()
	if pool, ok := sqlPools.Load(db); ok {
		return pool.(*pgxpool.Pool)
	}
	url, ok := databaseURLs.Load(db)
	if !ok {
		t.Fatalf("testenv.SQL: the database was not opened by testenv.DB")
	}
	pool, err := pgxpool.New(context.Background(), url.(string))
	if err != nil {
		t.Fatalf("open test pool: %v", err)
	}
	if existing, loaded := sqlPools.LoadOrStore(db, pool); loaded {
		pool.Close()
		return existing.(*pgxpool.Pool)
	}
	return pool
}

// Blob creates a fresh bucket for one test.
func Blob(t testing.TB) *blob.Store {
	t.Helper()
	store, err := blob.Open(blob.Options{
		Endpoint:  env(t, "SVC_TEST_S3_ENDPOINT"),
		AccessKey: env(t, "SVC_TEST_S3_ACCESS_KEY"),
		SecretKey: env(t, "SVC_TEST_S3_SECRET_KEY"),
		Bucket:    fmt.Sprintf("t-%d", rand.Uint64()),
	})
	if err != nil {
		t.Fatalf("open object store: %v", err)
	}
	if err := store.EnsureBucket(context.Background()); err != nil {
		t.Fatalf("create test bucket: %v", err)
	}
	return store
}

var (
	temporalOnce   sync.Once
	temporalServer *temporaltest.TestServer
)

// SearchAttributes are the custom search attributes the in-process Temporal
// server's namespace gets when it starts. A test binary whose workflows carry
// them sets them in TestMain, before any test runs:
// testenv.SearchAttributes = workflows.SearchAttributeTypes (testenv does
// not import the workflows it serves).
var SearchAttributes map[string]enumspb.IndexedValueType

// Temporal returns a client of the binary's in-process Temporal server,
// starting it on first use. Use a fresh task queue per test (TaskQueue).
func Temporal(t testing.TB) client.Client {
	t.Helper()
	temporalOnce.Do(func() {
		temporalServer = temporaltest.NewServer()
		c := temporalServer.GetDefaultClient()
		if err := temporalsetup.RegisterSearchAttributes(context.Background(), c, temporalServer.GetDefaultNamespace(), SearchAttributes); err != nil {
			panic("register search attributes: " + err.Error())
		}
	})
	return temporalServer.GetDefaultClient()
}

// TemporalWith returns a new client of the in-process server with opts (for
// example interceptors), closed with the server.
func TemporalWith(t testing.TB, opts client.Options) client.Client {
	t.Helper()
	Temporal(t)
	return temporalServer.NewClientWithOptions(opts)
}

// TemporalAddress is the in-process server's frontend host:port and the
// namespace its default client uses, for code that dials by itself.
func TemporalAddress(t testing.TB) (hostPort, namespace string) {
	t.Helper()
	Temporal(t)
	return temporalServer.GetFrontendHostPort(), temporalServer.GetDefaultNamespace()
}

// S3 is the test object store's endpoint and credentials.
func S3(t testing.TB) (endpoint, accessKey, secretKey string) {
	return env(t, "SVC_TEST_S3_ENDPOINT"), env(t, "SVC_TEST_S3_ACCESS_KEY"), env(t, "SVC_TEST_S3_SECRET_KEY")
}

// TaskQueue names a task queue no other test uses.
func TaskQueue(t testing.TB) string {
	return fmt.Sprintf("test-%s-%d", t.Name(), rand.Uint32())
}

// Main runs the tests of a package, then its cleanups, and stops the
// Temporal server afterwards.
// Call it from TestMain.
func Main(m *testing.M, cleanups ...func()) { MainChecked(m, nil, cleanups...) }

// MainChecked is Main with a check of the whole run: after every test of
// the package ran (no -run filter) and passed, check's error fails it.
func MainChecked(m *testing.M, check func() error, cleanups ...func()) {
	code := m.Run()
	if run := flag.Lookup("test.run"); code == 0 && check != nil && run != nil && run.Value.String() == "" && !testing.Short() {
		if err := check(); err != nil {
			fmt.Fprintln(os.Stderr, "FAIL:", err)
			code = 1
		}
	}
	for _, cleanup := range cleanups {
		cleanup()
	}
	if temporalServer != nil {
		func() {
			// Stop logs through a *testing.T it does not have here; a failed
			// shutdown after the tests ran must not fail them.
			defer func() { _ = recover() }()
			temporalServer.Stop()
		}()
	}
	os.Exit(code)
}

// StripeAPIBase is the stripe-mock `svc testenv` runs for the test binary.
func StripeAPIBase(t testing.TB) string { return env(t, "SVC_TEST_STRIPE_API_BASE") }

// WhatsAppAPIBase is the WhatsApp Cloud API double `svc testenv` runs for
// the test binary (internal/whatsappcloud), and WhatsAppDir where it
// writes each message it accepts.
func WhatsAppAPIBase(t testing.TB) string { return env(t, "SVC_TEST_WHATSAPP_API_BASE") }

// WhatsAppDir is where the double writes each accepted message.
func WhatsAppDir(t testing.TB) string { return env(t, "SVC_TEST_WHATSAPP_DIR") }

// ZATCAAPIBase is the ZATCA double `svc testenv` runs for the test binary
// (decisions §27).
func ZATCAAPIBase(t testing.TB) string { return env(t, "SVC_TEST_ZATCA_API_BASE") }

// Sealer is a secrets sealer under a fresh random key.
func Sealer(t testing.TB) *storage.Sealer {
	t.Helper()
	key := make([]byte, 32)
	for i := range key {
		key[i] = byte(rand.Uint32())
	}
	sealer, err := storage.NewSealer(base64.StdEncoding.EncodeToString(key))
	if err != nil {
		t.Fatalf("secrets sealer: %v", err)
	}
	return sealer
}
