package storage_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/merchantsvc/svc/internal/testenv"
	"github.com/merchantsvc/svc/storage"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// clock is a settable time for the storage layer.
type clock struct{ now time.Time }

func (c *clock) Now() time.Time { return c.now }

// cartStore is a store with a product for sale and a few carts, all under
// an injected clock.
type cartStore struct {
	db      *storage.DB
	clock   *clock
	storeID uuid.UUID
	variant uuid.UUID
}

func newCartStore(t *testing.T, thresholdMinutes int) cartStore {
	return newCartStoreOn(t, testenv.DB(t), thresholdMinutes)
}

// newCartStoreOn is newCartStore on a database the test opened.
func newCartStoreOn(t *testing.T, db *storage.DB, thresholdMinutes int) cartStore {
	clk := &clock{now: time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)}
	db.SetClock(clk.Now)
	ctx := context.Background()
	var cs cartStore
	require.NoError(t, db.InTx(ctx, func(tx *storage.Tx) error {
		user := storage.User{Email: uuid.NewString() + "@example.com", PasswordHash: "x", Name: "T"}
		store := storage.Store{Name: "Carts", Subdomain: "carts-" + uuid.NewString()[:8], Currency: "EGP", DefaultLanguage: "ar"}
		if err := tx.CreateUserAndStore(ctx, &user, &store); err != nil {
			return err
		}
		p := storage.Product{StoreID: store.ID, Name: "Abaya", Price: 45000, Status: "active"}
		if err := tx.CreateProduct(ctx, &p); err != nil {
			return err
		}
		v := storage.Variant{StoreID: store.ID, ProductID: p.ID, Price: 45000, Quantity: 100}
		if err := tx.CreateVariant(ctx, &v, true, true); err != nil {
			return err
		}
		minutes := thresholdMinutes
		if _, err := tx.UpdateStoreSettings(ctx, store.ID, storage.StoreSettingsUpdate{AbandonmentMinutes: &minutes}); err != nil {
			return err
		}
		cs = cartStore{db: db, clock: clk, storeID: store.ID, variant: v.ID}
		return nil
	}))
	return cs
}

// cart opens a cart with one line at the clock's current time.
func (cs cartStore) cart(t *testing.T, withLines bool) uuid.UUID {
	ctx := context.Background()
	var id uuid.UUID
	require.NoError(t, cs.db.InTx(ctx, func(tx *storage.Tx) error {
		c, _, err := tx.CreateCart(ctx, cs.storeID)
		if err != nil {
			return err
		}
		id = c.ID
		if withLines {
			_, err = tx.UpdateCart(ctx, cs.storeID, c.ID, storage.CartUpdate{Lines: []storage.NewOrderLine{{VariantID: cs.variant, Quantity: 2}}})
		}
		return err
	}))
	return id
}

func (cs cartStore) status(t *testing.T, id uuid.UUID) storage.CartStatus {
	c, err := cs.db.FindCart(context.Background(), cs.storeID, id)
	require.NoError(t, err)
	return c.Status
}

func (cs cartStore) lazy(t *testing.T, threshold time.Duration) {
	require.NoError(t, cs.db.InTx(context.Background(), func(tx *storage.Tx) error {
		_, err := tx.MarkCartsAbandoned(context.Background(), cs.storeID, threshold)
		return err
	}))
}

func (cs cartStore) sweep(t *testing.T) int {
	n, err := cs.db.SweepAbandonedCarts(context.Background())
	require.NoError(t, err)
	return n
}

// Threshold boundaries, both ways of marking: inactive for exactly the
// threshold is abandoned, a second less is not.
func TestAbandonmentThresholdBoundaries(t *testing.T) {
	for _, tc := range []struct {
		name      string
		inactive  time.Duration
		abandoned bool
	}{
		{"just under", 60*time.Minute - time.Second, false},
		{"exactly the threshold", 60 * time.Minute, true},
		{"just over", 60*time.Minute + time.Second, true},
		{"long ago", 48 * time.Hour, true},
	} {
		for _, how := range []string{"lazy", "sweep"} {
			t.Run(tc.name+"/"+how, func(t *testing.T) {
				cs := newCartStore(t, 60)
				start := cs.clock.now
				withLines := cs.cart(t, true)
				empty := cs.cart(t, false)
				cs.clock.now = start.Add(tc.inactive)
				if how == "lazy" {
					cs.lazy(t, 60*time.Minute)
				} else {
					cs.sweep(t)
				}
				want := storage.CartActive
				if tc.abandoned {
					want = storage.CartAbandoned
				}
				require.Equal(t, want, cs.status(t, withLines))
				require.Equal(t, storage.CartActive, cs.status(t, empty), "an empty cart is never abandoned")
			})
		}
	}
}

// The lazy marking with the store's threshold and the sweep pick the same
// carts; the sweep is idempotent and never touches checked-out carts.
func TestLazyAndSweepAgree(t *testing.T) {
	ctx := context.Background()
	lazy, swept := newCartStore(t, 30), newCartStore(t, 30)
	ages := []time.Duration{5 * time.Minute, 29 * time.Minute, 30 * time.Minute, 45 * time.Minute, 3 * time.Hour}
	mk := func(cs cartStore) []uuid.UUID {
		start := cs.clock.now
		var ids []uuid.UUID
		for _, age := range ages {
			cs.clock.now = start.Add(-age)
			ids = append(ids, cs.cart(t, true))
		}
		cs.clock.now = start
		return ids
	}
	lazyIDs, sweptIDs := mk(lazy), mk(swept)
	// A checked-out cart, inactive for hours: never abandoned.
	swept.clock.now = swept.clock.now.Add(-5 * time.Hour)
	done := swept.cart(t, true)
	require.NoError(t, swept.db.InTx(ctx, func(tx *storage.Tx) error {
		phone := "+201001112223"
		_, _, _, err := tx.CheckoutCart(ctx, swept.storeID, done, storage.NewOrder{PaymentMethod: "cod", ShippingAddress: []byte(`{}`),
			Customer: &storage.OrderCustomer{Name: "Mona", Phone: &phone}})
		return err
	}))
	swept.clock.now = swept.clock.now.Add(5 * time.Hour)

	lazy.lazy(t, 30*time.Minute)
	require.Equal(t, 3, swept.sweep(t))
	require.Equal(t, 0, swept.sweep(t), "a second sweep changes nothing")
	for i := range ages {
		require.Equal(t, lazy.status(t, lazyIDs[i]), swept.status(t, sweptIDs[i]), "cart inactive %s", ages[i])
	}
	require.Equal(t, storage.CartAbandoned, swept.status(t, sweptIDs[2]))
	require.Equal(t, storage.CartActive, swept.status(t, sweptIDs[1]))
	require.Equal(t, storage.CartCheckedOut, swept.status(t, done))
}
