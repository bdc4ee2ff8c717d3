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

// A side effect's start reads, in one round trip, whether it was recorded
// (for its kind only), the order with its lines, and the store's settings;
// the settings-only start leaves the order out; an order of another store
// is not found.
func TestFindSideEffectStart(t *testing.T) {
	cs := newCartStore(t, 60)
	ctx := context.Background()
	order := cs.placeOrder(t, 2)

	start, err := cs.db.FindSideEffectStart(ctx, cs.storeID, order.ID, "email")
	require.NoError(t, err)
	require.False(t, start.Done)
	require.Equal(t, order.ID, start.Order.ID)
	require.Equal(t, order.OrderNumber, start.Order.OrderNumber)
	require.Len(t, start.Order.Lines, 1)
	require.Equal(t, 2, start.Order.Lines[0].Quantity)
	require.Equal(t, "Carts", start.Settings.Name)
	require.Equal(t, 60, start.Settings.AbandonmentMinutes)

	require.NoError(t, cs.db.RecordSideEffect(ctx, cs.storeID, order.ID, "email", "succeeded", map[string]string{"to": "x"}))
	start, err = cs.db.FindSideEffectStart(ctx, cs.storeID, order.ID, "email")
	require.NoError(t, err)
	require.True(t, start.Done, "recorded")
	start, err = cs.db.FindSideEffectStart(ctx, cs.storeID, order.ID, "chat")
	require.NoError(t, err)
	require.False(t, start.Done, "another kind is not")

	settingsOnly, err := cs.db.FindSideEffectSettings(ctx, cs.storeID, order.ID, "email")
	require.NoError(t, err)
	require.True(t, settingsOnly.Done)
	require.Equal(t, "Carts", settingsOnly.Settings.Name)
	require.Equal(t, uuid.Nil, settingsOnly.Order.ID, "the order is not read")

	_, err = cs.db.FindSideEffectStart(ctx, uuid.New(), order.ID, "email")
	require.ErrorIs(t, err, storage.ErrNotFound)
}

func ptr[T any](v T) *T { return &v }

// The side effects' shared start reads, in one round trip, the outcomes
// recorded so far by kind, the order with its lines, the settings and the
// customer's chat opt-out; an order of another store is not found.
func TestFindOrderSideEffectsStart(t *testing.T) {
	cs := newCartStore(t, 60)
	ctx := context.Background()
	order := cs.placeOrder(t, 2)

	start, err := cs.db.FindOrderSideEffectsStart(ctx, cs.storeID, order.ID)
	require.NoError(t, err)
	require.Empty(t, start.Recorded)
	require.Equal(t, order.OrderNumber, start.Order.OrderNumber)
	require.Len(t, start.Order.Lines, 1)
	require.Equal(t, "Carts", start.Settings.Name)
	require.False(t, start.ChatOptOut)

	require.NoError(t, cs.db.RecordSideEffect(ctx, cs.storeID, order.ID, "email", "succeeded", map[string]string{"to": "x"}))
	require.NoError(t, cs.db.RecordSideEffect(ctx, cs.storeID, order.ID, "shipment", "skipped", map[string]string{}))
	require.NoError(t, cs.db.InTx(ctx, func(tx *storage.Tx) error {
		_, err := tx.UpdateCustomer(ctx, cs.storeID, *order.CustomerID, storage.CustomerUpdate{ChatOptOut: ptr(true)})
		return err
	}))
	start, err = cs.db.FindOrderSideEffectsStart(ctx, cs.storeID, order.ID)
	require.NoError(t, err)
	require.Equal(t, map[string]string{"email": "succeeded", "shipment": "skipped"}, start.Recorded)
	require.True(t, start.ChatOptOut)

	_, err = cs.db.FindOrderSideEffectsStart(ctx, uuid.New(), order.ID)
	require.ErrorIs(t, err, storage.ErrNotFound)
}

// A side effect that kept failing stands as failed, once; one whose
// success was recorded first (by an attempt that then timed out) does not.
func TestRecordSideEffectFailure(t *testing.T) {
	cs := newCartStore(t, 60)
	ctx := context.Background()
	order := cs.placeOrder(t, 1)
	failed, err := cs.db.RecordSideEffectFailure(ctx, cs.storeID, order.ID, "chat", "provider down")
	require.NoError(t, err)
	require.True(t, failed)
	failed, err = cs.db.RecordSideEffectFailure(ctx, cs.storeID, order.ID, "chat", "provider down")
	require.NoError(t, err)
	require.True(t, failed, "a retried flag still stands as failed")

	require.NoError(t, cs.db.RecordSideEffect(ctx, cs.storeID, order.ID, "email", "succeeded", map[string]string{"to": "x"}))
	failed, err = cs.db.RecordSideEffectFailure(ctx, cs.storeID, order.ID, "email", "timed out")
	require.NoError(t, err)
	require.False(t, failed, "the recorded success stands")
	start, err := cs.db.FindOrderSideEffectsStart(ctx, cs.storeID, order.ID)
	require.NoError(t, err)
	require.Equal(t, map[string]string{"email": "succeeded", "chat": "failed"}, start.Recorded)
}

// A dispatcher round marks its started placements in one statement, and
// waits for no row: an order another transaction holds is left for the
// next round, so two dispatchers marking overlapping rounds in different
// orders cannot deadlock.
func TestMarkPlacementsStartedSkipsHeldOrders(t *testing.T) {
	cs := newCartStore(t, 60)
	ctx := context.Background()
	var refs []storage.OrderRef
	for range 3 {
		refs = append(refs, storage.OrderRef{StoreID: cs.storeID, OrderID: cs.placeOrder(t, 1).ID})
	}
	pool := testenv.SQL(t, cs.db)
	holder, err := pool.Begin(ctx)
	require.NoError(t, err)
	defer func() { _ = holder.Rollback(ctx) }()
	_, err = holder.Exec(ctx, `SELECT 1 FROM orders WHERE id = $1 FOR UPDATE`, refs[1].OrderID)
	require.NoError(t, err)

	quick, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	require.NoError(t, cs.db.MarkPlacementsStarted(quick, []storage.OrderRef{refs[2], refs[1], refs[0]}), "no wait for the held order")
	require.NoError(t, holder.Rollback(ctx))
	waiting, err := cs.db.FindOrdersAwaitingPlacement(ctx, 10)
	require.NoError(t, err)
	require.Len(t, waiting, 1)
	require.Equal(t, refs[1].OrderID, waiting[0].OrderID, "the held order waits for the next round")

	require.NoError(t, cs.db.MarkPlacementsStarted(ctx, refs))
	waiting, err = cs.db.FindOrdersAwaitingPlacement(ctx, 10)
	require.NoError(t, err)
	require.Empty(t, waiting)
}

// placeOrder places a cash-on-delivery order of quantity units for Mona.
func (cs cartStore) placeOrder(t *testing.T, quantity int) storage.Order {
	t.Helper()
	ctx := context.Background()
	address := []byte(`{"name":"Mona","phone":"+201001234567","line1":"12 Tahrir St","city":"Cairo","country":"EG"}`)
	var order storage.Order
	require.NoError(t, cs.db.InTx(ctx, func(tx *storage.Tx) error {
		var err error
		order, err = tx.CreateOrder(ctx, storage.NewOrder{StoreID: cs.storeID, PaymentMethod: "cod", ShippingAddress: address,
			Customer: &storage.OrderCustomer{Name: "Mona", Phone: ptr("+201001234567")},
			Lines:    []storage.NewOrderLine{{VariantID: cs.variant, Quantity: quantity}}})
		return err
	}))
	return order
}
