package main

import (
	"context"
	"encoding/pem"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/merchantsvc/svc/internal/mailsink"
	"github.com/merchantsvc/svc/internal/testenv"
	"github.com/merchantsvc/svc/storage"
	"github.com/merchantsvc/svc/workflows"
)

// killableWorkerEnv marks the copy of this test binary that runs `svc
// worker` from its environment until it is killed.
const killableWorkerEnv = "SVC_TEST_KILLABLE_WORKER"

// TestKillableWorkerProcess is not a test: it is the worker process that
// TestWorkerKilledMidDeliveryLosesNothing starts and kills.
func TestKillableWorkerProcess(t *testing.T) {
	if os.Getenv(killableWorkerEnv) == "" {
		t.Skip("runs only as the child of TestWorkerKilledMidDeliveryLosesNothing")
	}
	cfg, err := loadConfig()
	require.NoError(t, err)
	_ = run(context.Background(), cfg, []string{"worker"}, os.Stdout, os.Stderr) // until SIGKILL
}

// A worker process killed (SIGKILL, no drain) while a batch of first
// attempts is on the wire: some receivers had answered, the rest were still
// waiting, and nothing was recorded. Another worker takes the batch over once
// its heartbeat is missed, sends again under the same delivery ids, and every
// delivery ends succeeded with one recorded first attempt.
func TestWorkerKilledMidDeliveryLosesNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("waits out a heartbeat timeout")
	}
	ctx := context.Background()
	dbURL := testenv.DatabaseURL(t, true)
	db, err := storage.Open(ctx, dbURL)
	require.NoError(t, err)
	t.Cleanup(db.Close)
	sqlPool, err := pgxpool.New(ctx, dbURL)
	require.NoError(t, err)
	t.Cleanup(sqlPool.Close)
	_, store, variantID := seedStoreWithStock(t, db, "worker-kill")

	const orders, answeredBeforeKill = 40, 10
	var (
		mu       sync.Mutex
		answered = map[string]int{} // delivery id → 2xx answers given
		requests int
		holding  = true // until the kill, answer only the first few
		held     = make(chan struct{}, orders)
		released = make(chan struct{}) // closed at the kill: the held answers go nowhere
	)
	receiver := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get("X-SVC-Delivery")
		mu.Lock()
		requests++
		hold := holding && requests > answeredBeforeKill
		if !hold {
			answered[id]++
		}
		mu.Unlock()
		if hold {
			held <- struct{}{}
			select { // the sender dies with the connection open
			case <-r.Context().Done():
			case <-released:
			}
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(receiver.Close)
	caFile := filepath.Join(t.TempDir(), "receiver-ca.pem")
	require.NoError(t, os.WriteFile(caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: receiver.Certificate().Raw}), 0o600))
	_, err = sqlPool.Exec(ctx, `INSERT INTO webhook_subscriptions (id, store_id, url, events, secret, created_at, updated_at)
		VALUES (gen_random_uuid(), $1, $2, '{order.created}', 'svc_whsec_kill', now(), now())`, store.ID, receiver.URL+"/hooks")
	require.NoError(t, err)
	address := []byte(`{"name": "Mona", "phone": "+201001234567", "line1": "1 St", "city": "Cairo", "country": "EG"}`)
	for range orders {
		require.NoError(t, db.InTx(ctx, func(tx *storage.Tx) error {
			_, err := tx.CreateOrder(ctx, storage.NewOrder{StoreID: store.ID, ShippingAddress: address, PaymentMethod: "cod",
				Customer: &storage.OrderCustomer{Name: "Mona", Phone: ptr("+201001234567")},
				Lines:    []storage.NewOrderLine{{VariantID: variantID, Quantity: 1}}})
			return err
		}))
	}
	sink, err := mailsink.Start("")
	require.NoError(t, err)
	t.Cleanup(func() { _ = sink.Stop() })

	temporalAddr, namespace := testenv.TemporalAddress(t)
	endpoint, accessKey, secretKey := testenv.S3(t)
	queue := testenv.TaskQueue(t)
	child := exec.Command(os.Args[0], "-test.run=^TestKillableWorkerProcess$")
	child.Env = append(os.Environ(), killableWorkerEnv+"=1",
		"SVC_DATABASE_URL="+dbURL, "SVC_TEMPORAL_ADDRESS="+temporalAddr, "SVC_TEMPORAL_NAMESPACE="+namespace,
		"SVC_TASK_QUEUE="+queue, "SVC_S3_ENDPOINT="+endpoint, "SVC_S3_ACCESS_KEY="+accessKey, "SVC_S3_SECRET_KEY="+secretKey,
		"SVC_S3_BUCKET=svc-test", "SVC_SMTP_ADDR="+sink.Addr, "SVC_SMTP_NO_TLS=true", "SVC_METRICS_ADDR=127.0.0.1:0",
		"SVC_WEBHOOK_ALLOW_PRIVATE=true", "SVC_WEBHOOK_CA_FILE="+caFile, "SVC_WEBHOOK_RETRY_SCHEDULE=1s,2s", "SVC_LOG_LEVEL=error")
	require.NoError(t, child.Start())
	t.Cleanup(func() { _ = child.Process.Kill(); _ = child.Wait() })

	select {
	case <-held:
	case <-time.After(60 * time.Second):
		t.Fatal("the batch never reached the receiver")
	}
	require.NoError(t, child.Process.Kill())
	_ = child.Wait()
	killed := time.Now()
	close(released)
	mu.Lock()
	holding = false
	mu.Unlock()
	var recorded int
	require.NoError(t, sqlPool.QueryRow(ctx, `SELECT count(*) FROM webhook_attempts WHERE store_id = $1`, store.ID).Scan(&recorded))
	require.Zero(t, recorded, "the killed worker recorded nothing: the batch was on the wire")

	cfg := Config{TaskQueue: queue, WebhookAllowPrivate: true, WebhookCAFile: caFile, WebhookRetrySchedule: durationList{time.Second, 2 * time.Second},
		SMTPAddr: sink.Addr, SMTPFrom: "orders@example.com", SMTPNoTLS: true}
	wctx, stop := context.WithCancel(ctx)
	wait, err := startWorker(wctx, cfg, deps{db: db, temporal: testenv.Temporal(t), log: slog.New(slog.DiscardHandler)}, slog.New(slog.DiscardHandler), nil)
	require.NoError(t, err)
	t.Cleanup(func() { stop(); wait() })

	var succeeded, firstAttempts, stuck int
	require.Eventually(t, func() bool {
		require.NoError(t, sqlPool.QueryRow(ctx, `SELECT count(*) FILTER (WHERE status = 'succeeded'),
				count(*) FILTER (WHERE status IN ('pending', 'retrying'))
			FROM webhook_deliveries WHERE store_id = $1`, store.ID).Scan(&succeeded, &stuck))
		return succeeded == orders
	}, workflows.DispatchHeartbeat+40*time.Second, 100*time.Millisecond, "every delivery succeeds after the kill")
	t.Logf("all %d delivered %s after the kill", orders, time.Since(killed).Round(time.Second))
	require.Zero(t, stuck)
	require.NoError(t, sqlPool.QueryRow(ctx, `SELECT count(*) FROM webhook_attempts WHERE store_id = $1 AND attempt = 1`, store.ID).Scan(&firstAttempts))
	require.Equal(t, orders, firstAttempts, "one recorded first attempt per delivery")
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, answered, orders, "every delivery id answered, none new: a resend reuses its id")
	twice := 0
	for id, n := range answered {
		require.LessOrEqual(t, n, 2, "delivery %s: sent by the killed worker and by the one that took over, no more", id)
		twice += n - 1
	}
	// Requests the killed worker had already written reach the receiver
	// after it died; they and the ones answered before the kill are sent again.
	t.Logf("%d deliveries answered twice (at least once, same id); %d requests in all", twice, requests)
	require.GreaterOrEqual(t, twice, answeredBeforeKill)
}
