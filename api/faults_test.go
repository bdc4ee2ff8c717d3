package api_test

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	_ "github.com/jackc/pgx/v5/stdlib" // database/sql driver for the migrations
	"github.com/stretchr/testify/require"

	"github.com/merchantsvc/svc/api"
	"github.com/merchantsvc/svc/internal/devenv"
	"github.com/merchantsvc/svc/internal/testenv"
	"github.com/merchantsvc/svc/internal/webhook"
	"github.com/merchantsvc/svc/migrations"
	"github.com/merchantsvc/svc/storage"
	"github.com/merchantsvc/svc/storage/blob"
	"github.com/merchantsvc/svc/workflows"
)

// privateStack is a Postgres cluster, a Temporal server and a MinIO server
// of one test's own, each of which the test may stop and start again on the
// same port and data.
type privateStack struct {
	t        *testing.T
	dir      string
	pg       *devenv.Postgres
	pgPort   int
	temporal *devenv.Temporal
	tempPort int
	minio    *devenv.MinIO
	s3Port   int
}

func startPrivateStack(t *testing.T) *privateStack {
	t.Helper()
	dir, err := os.MkdirTemp("", "svc-faults-")
	require.NoError(t, err)
	require.NoError(t, os.Chmod(dir, 0o755)) // the postgres user reaches its cluster inside
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	ports, err := devenv.FreePorts(3)
	require.NoError(t, err)
	s := &privateStack{t: t, dir: dir, pgPort: ports[0], tempPort: ports[1], s3Port: ports[2]}
	t.Cleanup(func() {
		if s.minio != nil {
			_ = s.minio.Stop()
		}
		if s.temporal != nil {
			_ = s.temporal.Stop()
		}
		if s.pg != nil {
			_ = s.pg.Stop()
		}
	})
	s.firstStart(&s.pgPort, s.tryPostgres)
	s.firstStart(&s.tempPort, s.tryTemporal)
	s.firstStart(&s.s3Port, s.tryMinIO)
	return s
}

// firstStart starts a part on a new port when its first port was taken
// between FreePorts and the bind (other test binaries start servers too).
// Restarts keep the port: they must come back where the clients look.
func (s *privateStack) firstStart(port *int, try func() error) {
	s.t.Helper()
	for attempt := 1; ; attempt++ {
		err := try()
		if err == nil {
			return
		}
		require.Less(s.t, attempt, 3, "start on port %d: %v", *port, err)
		ports, perr := devenv.FreePorts(1)
		require.NoError(s.t, perr)
		*port = ports[0]
	}
}

func (s *privateStack) tryPostgres() error {
	pg, err := devenv.StartPostgres(context.Background(), devenv.PostgresOptions{Dir: filepath.Join(s.dir, "pg"), Port: s.pgPort, Throwaway: true})
	s.pg = pg
	return err
}

func (s *privateStack) tryTemporal() error {
	tmp, err := devenv.StartTemporal(context.Background(), devenv.TemporalOptions{DBFile: filepath.Join(s.dir, "temporal.db"), Port: s.tempPort,
		SearchAttributes: workflows.SearchAttributeTypes})
	s.temporal = tmp
	return err
}

func (s *privateStack) startPostgres() { require.NoError(s.t, s.tryPostgres()) }
func (s *privateStack) startTemporal() { require.NoError(s.t, s.tryTemporal()) }
func (s *privateStack) startMinIO()    { require.NoError(s.t, s.tryMinIO()) }

func (s *privateStack) tryMinIO() error {
	bin := os.Getenv("SVC_MINIO_BIN") // make exports it
	if bin == "" {
		found, _ := filepath.Glob("../.bin/minio-*/minio")
		require.NotEmpty(s.t, found, "no MinIO binary: run `make minio`")
		bin = found[0]
	}
	m, err := devenv.StartMinIO(context.Background(), devenv.MinIOOptions{Bin: bin, Dir: filepath.Join(s.dir, "minio"),
		Port: s.s3Port, AccessKey: "faults", SecretKey: "faults-secret"})
	s.minio = m
	return err
}

// restart stops one part, runs during while it is down, keeps it down for
// a moment more and starts it again.
func (s *privateStack) restart(part string, down time.Duration, during func()) {
	switch part {
	case "postgres":
		require.NoError(s.t, s.pg.Stop())
	case "temporal":
		require.NoError(s.t, s.temporal.Stop())
	case "minio":
		require.NoError(s.t, s.minio.Stop())
	}
	var wg sync.WaitGroup
	if during != nil {
		wg.Go(during)
	}
	time.Sleep(down)
	switch part {
	case "postgres":
		s.startPostgres()
	case "temporal":
		s.startTemporal()
	case "minio":
		s.startMinIO()
	}
	wg.Wait()
}

// faultCounts is what docs/reliability.md reports.
type faultCounts struct {
	sent, accepted, refused, retried int
}

// Orders are sent without pause while Postgres restarts, Temporal stops
// and starts, and MinIO stops and starts under image uploads; a client
// retries every 5xx or broken connection with the same Idempotency-Key,
// as a real one would. Afterwards every accepted order exists once, has
// its order.created delivered, and nothing is left stuck.
func TestFaultsLeaveNothingStuckOrDoubled(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a stack of its own")
	}
	started := time.Now()
	stack := startPrivateStack(t)
	t.Logf("stack up in %s", time.Since(started).Round(time.Second))
	ctx := context.Background()
	sqlDB, err := sql.Open("pgx", stack.pg.URL)
	require.NoError(t, err)
	require.NoError(t, migrations.Up(ctx, sqlDB))
	require.NoError(t, sqlDB.Close())
	db, err := storage.Open(ctx, stack.pg.URL)
	require.NoError(t, err)
	t.Cleanup(db.Close)
	raw, err := pgxpool.New(ctx, stack.pg.URL) // for the checks at the end
	require.NoError(t, err)
	t.Cleanup(raw.Close)
	temporal, err := stack.temporal.Client(ctx)
	require.NoError(t, err)
	t.Cleanup(temporal.Close)
	store, err := blob.Open(blob.Options{Endpoint: stack.minio.Endpoint, AccessKey: "faults", SecretKey: "faults-secret", Bucket: "faults"})
	require.NoError(t, err)
	require.NoError(t, store.EnsureBucket(ctx))

	rec := newReceiver(t, func(int) int { return http.StatusOK })
	h := newHarnessOver(t, api.Config{WebhookGuard: webhook.Guard{AllowPrivate: true}, WebhookRetrySchedule: []time.Duration{time.Second, 2 * time.Second, 5 * time.Second},
		TaskQueue: testenv.TaskQueue(t), ImageWait: 2 * time.Second, RateLimitPerMinute: 1_000_000}, db, temporal, store)
	httpClient, err := webhook.Guard{AllowPrivate: true}.NewClient(rec.caFile)
	require.NoError(t, err)
	h.lostStartAge = time.Second
	h.startWorker(httpClient)
	s := newShop(t, h, "faults", 100_000)
	sub := h.do(request{method: "POST", path: storePath(s.m.storeID, "/webhooks"), auth: bearer(s.token),
		body: map[string]any{"url": rec.url(), "events": []string{"order.created"}}})
	require.Equal(t, http.StatusCreated, sub.Status, string(sub.Raw))
	productID := h.createProduct(s.token, s.m.storeID, map[string]any{"name": "Lamp", "price": 100})["id"].(string)

	var (
		mu             sync.Mutex
		orders, images faultCounts
		stop           = make(chan struct{})
		done           sync.WaitGroup
	)
	// send retries one request until it gets an answer below 500.
	send := func(counts *faultCounts, try func() (int, error)) {
		mu.Lock()
		counts.sent++
		mu.Unlock()
		for {
			status, err := try()
			if err == nil && status < 500 {
				mu.Lock()
				if status < 300 {
					counts.accepted++
				} else {
					counts.refused++
				}
				mu.Unlock()
				return
			}
			mu.Lock()
			counts.retried++
			mu.Unlock()
			time.Sleep(200 * time.Millisecond)
		}
	}
	done.Go(func() {
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			body := orderBody(s.variantID, 1, "+2010055"+fmt.Sprintf("%05d", i))
			body["notes"] = fmt.Sprintf("fault-load-%d", i)
			key := fmt.Sprintf("order-%d", i)
			send(&orders, func() (int, error) {
				return rawPost(h.url+storePath(s.m.storeID, "/orders"), s.token, key, body)
			})
			time.Sleep(10 * time.Millisecond) // about a hundred orders a second
		}
	})
	uploadImage := func(i int) {
		key := fmt.Sprintf("image-%d", i)
		send(&images, func() (int, error) {
			return rawUpload(h.url+storePath(s.m.storeID, "/products/"+productID+"/images"), s.token, key, photo(t, "coffee.jpg"))
		})
	}

	time.Sleep(time.Second)
	stack.restart("postgres", time.Second, nil)
	time.Sleep(time.Second)
	stack.restart("temporal", 2*time.Second, nil)
	time.Sleep(time.Second)
	uploadImage(0)
	stack.restart("minio", 2*time.Second, func() { uploadImage(1) }) // 503 until MinIO is back, retried
	time.Sleep(time.Second)
	close(stop)
	done.Wait()

	loadEnded := time.Now()
	// Every accepted order exists once and its event reached the receiver.
	var placed, distinct int
	waitFor(t, "the orders to settle", func() bool {
		return raw.QueryRow(ctx, `SELECT count(*), count(DISTINCT notes) FROM orders WHERE store_id = $1 AND notes LIKE 'fault-load-%'`,
			s.m.storeID).Scan(&placed, &distinct) == nil && placed >= orders.accepted
	})
	require.Equal(t, orders.accepted, placed, "every accepted order exists")
	require.Equal(t, placed, distinct, "no order twice")
	t.Logf("orders counted %s after the load", time.Since(loadEnded).Round(time.Second))
	stuck := func() int {
		var n int
		require.NoError(t, raw.QueryRow(ctx, `SELECT
			(SELECT count(*) FROM outbox WHERE dispatched_at IS NULL) +
			(SELECT count(*) FROM orders WHERE placed_started_at IS NULL AND status <> 'DRAFT') +
			(SELECT count(*) FROM webhook_batches WHERE started_at IS NULL) +
			(SELECT count(*) FROM webhook_deliveries WHERE status IN ('pending', 'retrying')) +
			(SELECT count(*) FROM product_images WHERE status = 'processing') +
			(SELECT count(*) FROM order_side_effects WHERE status = 'failed')`).Scan(&n))
		return n
	}
	// Work in flight when Temporal or MinIO went down waits out its timeout
	// and retry backoff (about a minute here), then finishes.
	deadline := time.Now().Add(3 * time.Minute)
	for stuck() > 0 {
		require.True(t, time.Now().Before(deadline), "states left stuck: %d", stuck())
		time.Sleep(500 * time.Millisecond)
	}
	t.Logf("settled %s after the load", time.Since(loadEnded).Round(time.Second))
	var delivered, imagesReady int
	require.NoError(t, raw.QueryRow(ctx, `SELECT count(*) FROM webhook_deliveries WHERE status = 'succeeded' AND event = 'order.created'`).Scan(&delivered))
	require.Equal(t, orders.accepted, delivered, "one order.created delivery per order, delivered")
	require.NoError(t, raw.QueryRow(ctx, `SELECT count(*) FROM product_images WHERE status = 'ready'`).Scan(&imagesReady))
	require.Equal(t, images.accepted, imagesReady, "one image per accepted upload")
	t.Logf("orders: sent %d, accepted %d, refused %d, retries %d; effects verified %d, duplicates %d, stuck %d",
		orders.sent, orders.accepted, orders.refused, orders.retried, placed, placed-distinct, stuck())
	t.Logf("images: sent %d, accepted %d, retries %d; ready %d; deliveries succeeded %d, receiver requests %d",
		images.sent, images.accepted, images.retried, imagesReady, delivered, len(rec.requests()))
}

// rawPost sends a JSON write with an Idempotency-Key, as a client outside
// the test's checks would; it reports the status or the transport error.
func rawPost(url, token, key string, body any) (int, error) {
	raw, err := json.Marshal(body)
	if err != nil {
		return 0, err
	}
	return rawSend(url, token, key, "application/json", raw)
}

// rawUpload sends a file as multipart with an Idempotency-Key.
func rawUpload(url, token, key string, file []byte) (int, error) {
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	part, err := mw.CreateFormFile("file", "photo.jpg")
	if err != nil {
		return 0, err
	}
	_, _ = part.Write(file)
	if err := mw.Close(); err != nil {
		return 0, err
	}
	return rawSend(url, token, key, mw.FormDataContentType(), body.Bytes())
}

func rawSend(url, token, key, contentType string, body []byte) (int, error) {
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", contentType)
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Idempotency-Key", key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, nil
}
