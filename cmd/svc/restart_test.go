package main

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/pem"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/merchantsvc/svc/api"
	"github.com/merchantsvc/svc/internal/mailsink"
	"github.com/merchantsvc/svc/internal/testenv"
	"github.com/merchantsvc/svc/storage"
)

// A restart in the middle of a load of order creates: the drain lets every
// request in flight finish, the only failures are refused connections while
// no server listens, and every created order has its order.created event.
func TestRestartUnderLoadLosesNothing(t *testing.T) {
	db := testenv.DB(t)
	ctx := context.Background()
	user, store, variantID := seedStoreWithStock(t, db, "restart")
	secret := "svc_pat_restart0000000000000000000000000000000000"
	require.NoError(t, db.InTx(ctx, func(tx *storage.Tx) error {
		return tx.CreateToken(ctx, &storage.Token{Kind: "pat", StoreID: store.ID, UserID: &user.ID, Name: "load", Hint: "0000",
			Scopes: []string{"orders:write"}}, secret)
	}))

	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	start := func() (context.CancelFunc, chan error) {
		sctx, stop := context.WithCancel(ctx)
		done := make(chan error, 1)
		h := api.NewServer(api.Config{RateLimitPerMinute: 1_000_000}, db, testenv.Temporal(t), nil, slog.New(slog.DiscardHandler))
		go func() { done <- serveHTTP(sctx, addr, h, slog.New(slog.DiscardHandler), io.Discard) }()
		require.Eventually(t, func() bool {
			c, err := net.Dial("tcp", addr)
			if err == nil {
				c.Close()
			}
			return err == nil
		}, 5*time.Second, 5*time.Millisecond)
		return stop, done
	}

	body, _ := json.Marshal(map[string]any{
		"customer":         map[string]any{"name": "Mona", "phone": "+201001234567"},
		"lines":            []map[string]any{{"variant_id": variantID, "quantity": 1}},
		"shipping_address": map[string]any{"name": "Mona", "phone": "+201001234567", "line1": "1 St", "city": "Cairo", "country": "EG"},
		"payment_method":   "cod",
	})
	var (
		mu       sync.Mutex
		created  = map[string]bool{}
		refused  atomic.Int64
		serverEr atomic.Int64
		running  atomic.Bool
		wg       sync.WaitGroup
	)
	running.Store(true)
	stop, done := start()
	for range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
			for running.Load() {
				req, _ := http.NewRequest(http.MethodPost, "http://"+addr+"/api/v1/stores/"+store.ID.String()+"/orders", bytes.NewReader(body))
				req.Header.Set("Authorization", "Bearer "+secret)
				req.Header.Set("Content-Type", "application/json")
				resp, err := client.Do(req)
				if err != nil {
					refused.Add(1)
					time.Sleep(5 * time.Millisecond)
					continue
				}
				raw, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				var out struct {
					Data struct {
						ID string `json:"id"`
					} `json:"data"`
				}
				_ = json.Unmarshal(raw, &out)
				switch {
				case resp.StatusCode == http.StatusCreated:
					mu.Lock()
					created[out.Data.ID] = true
					mu.Unlock()
				default:
					serverEr.Add(1)
					t.Logf("answer %d: %s", resp.StatusCode, raw)
				}
			}
		}()
	}
	time.Sleep(700 * time.Millisecond)
	mu.Lock()
	before := len(created)
	mu.Unlock()
	stop() // SIGTERM
	require.NoError(t, <-done)
	stop, done = start()
	time.Sleep(700 * time.Millisecond)
	running.Store(false)
	wg.Wait()
	stop()
	require.NoError(t, <-done)

	require.Zero(t, serverEr.Load(), "no 5xx (or any other refusal) from the server")
	require.Positive(t, before)
	require.Greater(t, len(created), before, "orders were created after the restart too")
	var orders, events int
	require.NoError(t, testenv.SQL(t, db).QueryRow(ctx, `SELECT count(*) FROM orders WHERE store_id = $1`, store.ID).Scan(&orders))
	require.NoError(t, testenv.SQL(t, db).QueryRow(ctx, `SELECT count(*) FROM outbox WHERE store_id = $1 AND event = 'order.created'`, store.ID).Scan(&events))
	require.Equal(t, len(created), orders, "every answered 201 is an order, and no order went unanswered")
	require.Equal(t, orders, events, "every order has its order.created event")
	t.Logf("%d orders, %d refused connections during the restart", orders, refused.Load())
}

// A worker restart in the middle of a stream of orders: the stopping worker
// lets its running activities finish and the next one picks up the rest, so
// every order.created reaches the subscriber and every order's order-placed
// workflow runs its side effects exactly once.
func TestWorkerRestartUnderLoadLosesNothing(t *testing.T) {
	db := testenv.DB(t)
	ctx := context.Background()
	_, store, variantID := seedStoreWithStock(t, db, "worker-restart")

	// The subscriber counts each delivery id and each order it hears of.
	var (
		mu         sync.Mutex
		deliveries = map[string]int{}
		heard      = map[string]bool{}
	)
	receiver := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			Data struct {
				OrderID string `json:"order_id"`
			} `json:"data"`
		}
		_ = json.NewDecoder(r.Body).Decode(&body)
		mu.Lock()
		deliveries[r.Header.Get("X-SVC-Delivery")]++
		heard[body.Data.OrderID] = true
		mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(receiver.Close)
	caFile := filepath.Join(t.TempDir(), "receiver-ca.pem")
	require.NoError(t, os.WriteFile(caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: receiver.Certificate().Raw}), 0o600))
	_, err := testenv.SQL(t, db).Exec(ctx, `INSERT INTO webhook_subscriptions (id, store_id, url, events, secret, created_at, updated_at)
		VALUES (gen_random_uuid(), $1, $2, '{order.created}', 'svc_whsec_restart', now(), now())`, store.ID, receiver.URL+"/hooks")
	require.NoError(t, err)
	sink, err := mailsink.Start("")
	require.NoError(t, err)
	t.Cleanup(func() { _ = sink.Stop() })

	cfg := Config{TaskQueue: testenv.TaskQueue(t), WebhookAllowPrivate: true, WebhookCAFile: caFile, WebhookRetrySchedule: durationList{time.Second, 2 * time.Second},
		SMTPAddr: sink.Addr, SMTPFrom: "orders@example.com", SMTPNoTLS: true}
	d := deps{db: db, temporal: testenv.Temporal(t), log: slog.New(slog.DiscardHandler)}
	startOne := func() (context.CancelFunc, func()) {
		wctx, stop := context.WithCancel(ctx)
		wait, err := startWorker(wctx, cfg, d, d.log, nil)
		require.NoError(t, err)
		return stop, wait
	}

	var (
		placed  atomic.Int64
		running atomic.Bool
		wg      sync.WaitGroup
	)
	running.Store(true)
	address, _ := json.Marshal(map[string]any{"name": "Mona", "phone": "+201001234567", "line1": "1 St", "city": "Cairo", "country": "EG"})
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for running.Load() {
				err := db.InTx(ctx, func(tx *storage.Tx) error {
					_, err := tx.CreateOrder(ctx, storage.NewOrder{StoreID: store.ID, ShippingAddress: address, PaymentMethod: "cod",
						Customer: &storage.OrderCustomer{Name: "Mona", Phone: ptr("+201001234567")},
						Lines:    []storage.NewOrderLine{{VariantID: variantID, Quantity: 1}}})
					return err
				})
				if err != nil {
					t.Errorf("create order: %v", err)
					return
				}
				placed.Add(1)
				time.Sleep(10 * time.Millisecond)
			}
		}()
	}
	stop, wait := startOne()
	time.Sleep(time.Second)
	stop() // SIGTERM: the dispatcher ends, the worker stops polling and lets running activities finish
	stopping := time.Now()
	wait()
	t.Logf("worker stopped in %s", time.Since(stopping))
	beforeRestart := placed.Load()
	stop, wait = startOne()
	t.Cleanup(func() { stop(); wait() })
	time.Sleep(time.Second)
	running.Store(false)
	wg.Wait()
	orders := int(placed.Load())
	require.Greater(t, orders, int(beforeRestart), "orders were placed after the restart too")
	loadStopped := time.Now()

	require.Eventually(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(heard) == orders
	}, 60*time.Second, 50*time.Millisecond, "every order.created reaches the subscriber")
	t.Logf("delivered %s after the load", time.Since(loadStopped))
	var rollups, sideEffects, flagged int
	require.NoError(t, testenv.SQL(t, db).QueryRow(ctx, `SELECT COALESCE(sum(orders), 0) FROM order_rollups WHERE store_id = $1`, store.ID).Scan(&rollups))
	require.Equal(t, orders, rollups, "each order's transaction counted it in analytics")
	// The three side effects run side by side, each recorded once.
	countSideEffects := func() int {
		require.NoError(t, testenv.SQL(t, db).QueryRow(ctx, `SELECT count(*) FROM order_side_effects WHERE store_id = $1`, store.ID).Scan(&sideEffects))
		return sideEffects
	}
	require.Eventually(t, func() bool { return countSideEffects() >= 3*orders }, 75*time.Second, 100*time.Millisecond,
		"every order-placed workflow finished (a task the stopped worker dropped runs after its 30 s timeout)")
	t.Logf("placed %s after the load", time.Since(loadStopped))
	time.Sleep(500 * time.Millisecond) // and none more arrive
	countSideEffects()
	require.NoError(t, testenv.SQL(t, db).QueryRow(ctx, `SELECT count(*) FROM autopilot_exceptions WHERE store_id = $1 AND reason LIKE $2`,
		store.ID, storage.ReasonSideEffectFailed+":%").Scan(&flagged))
	require.Equal(t, 3*orders, sideEffects, "email, chat and shipment recorded once per order")
	require.Zero(t, flagged, "no side effect failed")
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, deliveries, orders, "one delivery per order (a retry would reuse its id)")
	t.Logf("%d orders (%d before the restart), %d webhook requests", orders, beforeRestart, len(deliveries))
}

func ptr[T any](v T) *T { return &v }

// seedStoreWithStock makes a merchant, a store named by subdomain and one
// variant with stock for a million orders.
func seedStoreWithStock(t *testing.T, db *storage.DB, subdomain string) (storage.User, storage.Store, uuid.UUID) {
	t.Helper()
	ctx := context.Background()
	user := storage.User{Email: subdomain + "@example.com", PasswordHash: "x", Name: "R"}
	store := storage.Store{Name: subdomain, Subdomain: subdomain, Currency: "EGP", DefaultLanguage: "ar"}
	var variantID uuid.UUID
	require.NoError(t, db.InTx(ctx, func(tx *storage.Tx) error {
		if err := tx.CreateUserAndStore(ctx, &user, &store); err != nil {
			return err
		}
		p := storage.Product{StoreID: store.ID, Name: "Abaya", Price: 45000}
		if err := tx.CreateProduct(ctx, &p); err != nil {
			return err
		}
		v := storage.Variant{StoreID: store.ID, ProductID: p.ID, Price: 45000, Quantity: 1_000_000}
		if err := tx.CreateVariant(ctx, &v, true, true); err != nil {
			return err
		}
		variantID = v.ID
		return nil
	}))
	return user, store, variantID
}
