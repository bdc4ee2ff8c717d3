package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/merchantsvc/svc/api"
	"github.com/merchantsvc/svc/internal/testenv"
	"github.com/merchantsvc/svc/storage"
)

// A restart in the middle of a load of order creates: the drain lets every
// request in flight finish, the only failures are refused connections while
// no server listens, and every created order has its order.created event.
func TestRestartUnderLoadLosesNothing(t *testing.T) {
	db := testenv.DB(t)
	ctx := context.Background()
	user := storage.User{Email: "restart@example.com", PasswordHash: "x", Name: "R"}
	store := storage.Store{Name: "Restart", Subdomain: "restart", Currency: "EGP", DefaultLanguage: "ar"}
	secret := "svc_pat_restart0000000000000000000000000000000000"
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
		if err := tx.CreateVariant(ctx, &v, true); err != nil {
			return err
		}
		variantID = v.ID
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
	require.NoError(t, db.Pool.QueryRow(ctx, `SELECT count(*) FROM orders WHERE store_id = $1`, store.ID).Scan(&orders))
	require.NoError(t, db.Pool.QueryRow(ctx, `SELECT count(*) FROM outbox WHERE store_id = $1 AND event = 'order.created'`, store.ID).Scan(&events))
	require.Equal(t, len(created), orders, "every answered 201 is an order, and no order went unanswered")
	require.Equal(t, orders, events, "every order has its order.created event")
	t.Logf("%d orders, %d refused connections during the restart", orders, refused.Load())
}
