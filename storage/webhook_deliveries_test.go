package storage_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/merchantsvc/svc/internal/testenv"
	"github.com/merchantsvc/svc/storage"
)

// subscribe gives the store a product.created subscription, then creates
// products in the same transaction (each writes its event to the outbox).
func subscribe(t *testing.T, cs cartStore, products int) storage.Subscription {
	t.Helper()
	sub := storage.Subscription{StoreID: cs.storeID, URL: "https://hooks.example.com/in", Events: []string{"product.created"},
		IsActive: true, Secret: "svc_whsec_test"}
	require.NoError(t, cs.db.InTx(context.Background(), func(tx *storage.Tx) error {
		if err := tx.CreateSubscription(context.Background(), &sub); err != nil {
			return err
		}
		for i := range products {
			p := storage.Product{StoreID: cs.storeID, Name: fmt.Sprintf("Lamp %d", i), Description: "A brass lamp for the desk",
				Price: 1000, Status: "active"}
			if err := tx.CreateProduct(context.Background(), &p); err != nil {
				return err
			}
		}
		return nil
	}))
	return sub
}

// claimDeliveries claims the outbox as the dispatcher does and reads the
// one batch's deliveries: one per product created after the subscription,
// and the store's own first product's.
func claimDeliveries(t *testing.T, db *storage.DB, atLeast int) []storage.DeliveryTarget {
	t.Helper()
	batches, _, err := db.DispatchOutbox(context.Background(), 100)
	require.NoError(t, err)
	require.Len(t, batches, 1)
	targets, err := db.FindBatchTargets(context.Background(), batches[0].ID)
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(targets), atLeast)
	return targets
}

// deliveriesAndAttempts counts the store's webhook deliveries and attempts.
func deliveriesAndAttempts(t *testing.T, cs cartStore) [2]int {
	t.Helper()
	var n [2]int
	require.NoError(t, testenv.SQL(t, cs.db).QueryRow(context.Background(), `SELECT
			(SELECT count(*) FROM webhook_deliveries WHERE store_id = $1),
			(SELECT count(*) FROM webhook_attempts WHERE store_id = $1)`, cs.storeID).Scan(&n[0], &n[1]))
	return n
}

// firstAttemptsSucceeded is a 200 answer to each target's first attempt.
func firstAttemptsSucceeded(targets []storage.DeliveryTarget, at time.Time) []storage.AttemptRecord {
	code := 200
	records := make([]storage.AttemptRecord, 0, len(targets))
	for _, target := range targets {
		records = append(records, storage.AttemptRecord{StoreID: target.StoreID, SubscriptionID: target.SubscriptionID,
			Status: storage.DeliverySucceeded, Attempt: storage.Attempt{DeliveryID: target.ID, Attempt: 1, Status: storage.DeliverySucceeded,
				ResponseCode: &code, ResponseBody: "ok", Duration: 12 * time.Millisecond, AttemptedAt: at}})
	}
	return records
}

// A batch's first attempts are logged from their deliveries' rows: an
// attempt for a delivery that is gone is not written. Deleting a
// subscription takes its deliveries, and they their attempts, through
// statement triggers (migrations 0044 and 0045: neither table keeps a
// foreign key), and no delivery is written for a subscription that is gone.
func TestRecordAttemptsLogsOnlyWhatTheyUpdate(t *testing.T) {
	cs := newCartStore(t, 60)
	db, conn := cs.db, testenv.SQL(t, cs.db)
	ctx := context.Background()
	sub := subscribe(t, cs, 2)
	targets := claimDeliveries(t, db, 2)

	at := time.Date(2026, 11, 1, 12, 0, 1, 0, time.UTC)
	gone := storage.DeliveryTarget{Delivery: storage.Delivery{ID: uuid.New(), StoreID: cs.storeID, SubscriptionID: sub.ID}}
	require.NoError(t, db.RecordAttempts(ctx, firstAttemptsSucceeded(append(targets, gone), at)))

	var attempts, succeeded int
	require.NoError(t, conn.QueryRow(ctx, `SELECT
			(SELECT count(*) FROM webhook_attempts WHERE store_id = $1),
			(SELECT count(*) FROM webhook_deliveries WHERE store_id = $1 AND status = 'succeeded' AND attempts = 1
				AND last_response_code = 200 AND completed_at = $2)`, cs.storeID, at).Scan(&attempts, &succeeded))
	require.Equal(t, len(targets), attempts, "one attempt per delivery, none for the one that does not exist")
	require.Equal(t, len(targets), succeeded)
	var subscription uuid.UUID
	var duration int
	require.NoError(t, conn.QueryRow(ctx, `SELECT subscription_id, duration_ms FROM webhook_attempts WHERE delivery_id = $1`,
		targets[0].ID).Scan(&subscription, &duration))
	require.Equal(t, sub.ID, subscription, "the attempt names its delivery's subscription")
	require.Equal(t, 12, duration)

	var ping storage.Delivery
	require.NoError(t, db.InTx(ctx, func(tx *storage.Tx) error {
		var err error
		ping, err = tx.CreatePingDelivery(ctx, cs.storeID, sub.ID)
		return err
	}))
	require.Equal(t, sub.ID, ping.SubscriptionID)

	require.NoError(t, db.InTx(ctx, func(tx *storage.Tx) error { return tx.DeleteSubscription(ctx, cs.storeID, sub.ID) }))
	left := deliveriesAndAttempts(t, cs)
	require.Zero(t, left[0], "the deliveries, the ping's too, went with their subscription")
	require.Zero(t, left[1], "the attempts went with their deliveries")

	// A delivery for a subscription that is gone is not written.
	err := db.InTx(ctx, func(tx *storage.Tx) error {
		_, err := tx.CreatePingDelivery(ctx, cs.storeID, sub.ID)
		return err
	})
	require.ErrorIs(t, err, storage.ErrNotFound)
}

// The outbox's claim locks the subscriptions it writes deliveries for: a
// delete of one that is not committed yet holds the claim until it is, and
// the claim then writes nothing for it, where reading the subscription
// from its snapshot would have left deliveries no trigger takes
// (migration 0045).
func TestOutboxClaimWaitsOnASubscriptionBeingDeleted(t *testing.T) {
	cs := newCartStore(t, 60)
	db, conn := cs.db, testenv.SQL(t, cs.db)
	ctx := context.Background()
	sub := subscribe(t, cs, 1)

	deleting, err := conn.Begin(ctx)
	require.NoError(t, err)
	defer deleting.Rollback(ctx)
	_, err = deleting.Exec(ctx, `DELETE FROM webhook_subscriptions WHERE store_id = $1 AND id = $2`, cs.storeID, sub.ID)
	require.NoError(t, err)

	type claim struct {
		batches []storage.Batch
		err     error
	}
	claimed := make(chan claim, 1)
	go func() {
		batches, _, err := db.DispatchOutbox(ctx, 100)
		claimed <- claim{batches, err}
	}()
	select {
	case c := <-claimed:
		t.Fatalf("the claim did not wait on the delete: %d batches, %v", len(c.batches), c.err)
	case <-time.After(300 * time.Millisecond):
	}
	require.NoError(t, deleting.Commit(ctx))
	c := <-claimed
	require.NoError(t, c.err)
	require.Empty(t, c.batches)
	require.Zero(t, deliveriesAndAttempts(t, cs)[0])
}

// A chunk of first attempts updates every delivery of a page in one
// statement, and each delivery stays on its page (a HOT update, which writes
// no index again): the table keeps a bit more than half of each page free
// (migration 0046).
func TestFirstAttemptsUpdateDeliveriesInPlace(t *testing.T) {
	cs := newCartStore(t, 60)
	db, conn := cs.db, testenv.SQL(t, cs.db)
	ctx := context.Background()
	subscribe(t, cs, 60)
	targets := claimDeliveries(t, db, 60)

	pages := func() map[uuid.UUID]int {
		rows, err := conn.Query(ctx, `SELECT id, (ctid::text::point)[0]::int FROM webhook_deliveries WHERE store_id = $1`, cs.storeID)
		require.NoError(t, err)
		defer rows.Close()
		out := map[uuid.UUID]int{}
		for rows.Next() {
			var (
				id   uuid.UUID
				page int
			)
			require.NoError(t, rows.Scan(&id, &page))
			out[id] = page
		}
		require.NoError(t, rows.Err())
		return out
	}
	before := pages()
	require.NoError(t, db.RecordAttempts(ctx, firstAttemptsSucceeded(targets, time.Date(2026, 11, 1, 12, 0, 1, 0, time.UTC))))
	after := pages()
	require.Equal(t, len(before), len(after))
	firstPages := map[int]bool{}
	for id, page := range before {
		firstPages[page] = true
		require.Equal(t, page, after[id], "delivery %s moved off its page", id)
	}
	require.Greater(t, len(before)/len(firstPages), 4, "several deliveries a page, updated in the same statement")
}

// A purge deletes at most PurgeBatch deliveries past their retention (and
// as many outbox events), so months kept from before the retention are
// worked down over runs; their attempts go with them.
func TestPurgeWorksDownOldDeliveriesInBatches(t *testing.T) {
	cs := newCartStore(t, 60)
	db, conn := cs.db, testenv.SQL(t, cs.db)
	ctx := context.Background()
	subscribe(t, cs, 3)
	targets := claimDeliveries(t, db, 3)
	require.NoError(t, db.RecordAttempts(ctx, firstAttemptsSucceeded(targets, time.Date(2026, 11, 1, 12, 0, 1, 0, time.UTC))))
	_, err := conn.Exec(ctx, `UPDATE webhook_deliveries SET created_at = created_at - interval '31 days' WHERE store_id = $1`, cs.storeID)
	require.NoError(t, err)
	_, err = conn.Exec(ctx, `UPDATE outbox SET created_at = created_at - interval '31 days' WHERE store_id = $1`, cs.storeID)
	require.NoError(t, err)

	defer func(batch int) { storage.PurgeBatch = batch }(storage.PurgeBatch)
	storage.PurgeBatch = 2
	for left := len(targets); left > 0; left -= 2 {
		purged, err := db.PurgeExpired(ctx)
		require.NoError(t, err)
		require.Equal(t, min(2, left), purged.WebhookDeliveries)
		require.Equal(t, min(2, left), purged.OutboxEvents, "one event a delivery: one subscription")
		require.Equal(t, [2]int{left - min(2, left), left - min(2, left)}, deliveriesAndAttempts(t, cs))
	}
}
