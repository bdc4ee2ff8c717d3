package storage_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/merchantsvc/svc/internal/testenv"
	"github.com/merchantsvc/svc/storage"
)

// roundTrips counts the round trips a database's connections make: each
// statement sent on its own (BEGIN and COMMIT included) and each batch.
type roundTrips struct{ n atomic.Int64 }

func (r *roundTrips) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	r.n.Add(1)
	return ctx
}
func (r *roundTrips) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}
func (r *roundTrips) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	r.n.Add(1)
	return ctx
}
func (r *roundTrips) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {}
func (r *roundTrips) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData)     {}

// Placing an order holds its variants' and levels' locks, and the store's
// order counter, from the read of its variants to the commit: every order
// for those variants, and every order of the store, waits that long. The
// whole transaction, a new inline customer included, is six round trips
// (it was fifteen): BEGIN; the store with the customer's locks and
// lookups; the customer; the variants, their levels and the number;
// everything the order writes with its COD risk read; COMMIT. A draft's is
// the same, with nothing locked.
func TestPlacingAnOrderTakesSixRoundTrips(t *testing.T) {
	counter := &roundTrips{}
	db, err := storage.OpenTraced(context.Background(), testenv.DatabaseURL(t, true), counter)
	require.NoError(t, err)
	t.Cleanup(db.Close)
	cs := newCartStoreOn(t, db, 60)
	ctx := context.Background()
	address := []byte(`{"name":"Mona","phone":"+201001234567","line1":"12 Tahrir St","city":"Cairo","country":"EG"}`)
	for _, draft := range []bool{false, true} {
		counter.n.Store(0)
		var order storage.Order
		require.NoError(t, db.InTx(ctx, func(tx *storage.Tx) error {
			var err error
			order, err = tx.CreateOrder(ctx, storage.NewOrder{StoreID: cs.storeID, PaymentMethod: "cod", ShippingAddress: address, Draft: draft,
				Customer: &storage.OrderCustomer{Name: "Mona", Phone: ptr("+2010012345" + map[bool]string{false: "67", true: "68"}[draft]),
					Email: ptr(map[bool]string{false: "mona", true: "mona.draft"}[draft] + "@example.com")},
				Lines: []storage.NewOrderLine{{VariantID: cs.variant, Quantity: 2}}})
			return err
		}))
		require.Equal(t, int64(6), counter.n.Load(), "round trips of an order (draft %v)", draft)
		require.NotEmpty(t, order.OrderNumber)
	}
}
