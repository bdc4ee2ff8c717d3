package worker_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/merchantsvc/svc/activities"
	"github.com/merchantsvc/svc/internal/testenv"
	"github.com/merchantsvc/svc/storage"
	"github.com/merchantsvc/svc/worker"
	"github.com/merchantsvc/svc/workflows"
)

func TestMain(m *testing.M) {
	testenv.SearchAttributes = workflows.SearchAttributeTypes
	testenv.Main(m)
}

// startWorker runs a worker built by worker.New on a fresh task queue over a
// fresh database, stopped at cleanup.
func startWorker(t *testing.T) (*storage.DB, client.Client, string) {
	t.Helper()
	db, c, queue := testenv.DB(t), testenv.Temporal(t), testenv.TaskQueue(t)
	w := worker.New(c, queue, &activities.Activities{DB: db}, worker.Options{})
	require.NoError(t, w.Start())
	t.Cleanup(w.Stop)
	return db, c, queue
}

// The smoke workflow runs on the real in-process Temporal server through a
// worker built by worker.New and reaches the real database.
func TestPingWorkflowRunsOnWorker(t *testing.T) {
	_, c, queue := startWorker(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: workflows.PingWorkflowID(t.Name()), TaskQueue: queue},
		workflows.Ping, workflows.PingInput{From: "test"})
	require.NoError(t, err)
	var result workflows.PingResult
	require.NoError(t, run.Get(ctx, &result))
	require.Equal(t, "pong to test", result.Greeting)
	require.WithinDuration(t, time.Now(), result.DatabaseTime, time.Minute)
}

// Every worker creates the abandonment schedule at start; a second worker
// finds it there. Its action is the sweep workflow, every 60 s, never
// overlapping.
func TestAbandonmentScheduleIsCreatedOnce(t *testing.T) {
	c := testenv.Temporal(t)
	queue := testenv.TaskQueue(t)
	ctx := context.Background()
	require.NoError(t, worker.EnsureSchedules(ctx, c, queue))
	require.NoError(t, worker.EnsureSchedules(ctx, c, queue), "idempotent")
	desc, err := c.ScheduleClient().GetHandle(ctx, workflows.AbandonmentScheduleID).Describe(ctx)
	require.NoError(t, err)
	require.Len(t, desc.Schedule.Spec.Intervals, 1)
	require.Equal(t, time.Minute, desc.Schedule.Spec.Intervals[0].Every)
	action, ok := desc.Schedule.Action.(*client.ScheduleWorkflowAction)
	require.True(t, ok)
	require.Equal(t, "AbandonmentSweep", action.Workflow)
	require.Equal(t, enumspb.SCHEDULE_OVERLAP_POLICY_SKIP, desc.Schedule.Policy.Overlap)
}

// A schedule created before workflows carried search attributes gets its
// WorkKind and summary when a worker starts; its spec and action stay.
func TestOldSchedulesGetTheirSearchAttributes(t *testing.T) {
	c := testenv.Temporal(t)
	queue := testenv.TaskQueue(t)
	ctx := context.Background()
	_ = c.ScheduleClient().GetHandle(ctx, workflows.PurgeScheduleID).Delete(ctx)
	_, err := c.ScheduleClient().Create(ctx, client.ScheduleOptions{ID: workflows.PurgeScheduleID,
		Spec:   client.ScheduleSpec{Intervals: []client.ScheduleIntervalSpec{{Every: time.Hour}}},
		Action: &client.ScheduleWorkflowAction{ID: workflows.PurgeScheduleID, Workflow: workflows.PurgeExpired, TaskQueue: queue}})
	require.NoError(t, err)
	require.NoError(t, worker.EnsureSchedules(ctx, c, queue))
	desc, err := c.ScheduleClient().GetHandle(ctx, workflows.PurgeScheduleID).Describe(ctx)
	require.NoError(t, err)
	action := desc.Schedule.Action.(*client.ScheduleWorkflowAction)
	require.Equal(t, "PurgeExpired", action.Workflow)
	require.Contains(t, action.StaticSummary, "expired idempotency keys")
	kind, ok := action.TypedSearchAttributes.GetKeyword(workflows.WorkKindAttribute)
	require.True(t, ok)
	require.Equal(t, string(workflows.KindPurge), kind)
	require.Equal(t, time.Hour, desc.Schedule.Spec.Intervals[0].Every)
	require.NoError(t, worker.EnsureSchedules(ctx, c, queue), "a labelled schedule is left alone")
}

// The sweep workflow runs on a worker and marks carts through the real
// database.
func TestAbandonmentSweepWorkflow(t *testing.T) {
	db, c, queue := startWorker(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var storeID uuid.UUID
	require.NoError(t, db.InTx(ctx, func(tx *storage.Tx) error {
		user := storage.User{Email: "sweep@example.com", PasswordHash: "x", Name: "T"}
		store := storage.Store{Name: "Sweep", Subdomain: "sweep", Currency: "EGP", DefaultLanguage: "ar"}
		if err := tx.CreateUserAndStore(ctx, &user, &store); err != nil {
			return err
		}
		storeID = store.ID
		p := storage.Product{StoreID: store.ID, Name: "Abaya", Price: 45000, Status: "active"}
		if err := tx.CreateProduct(ctx, &p); err != nil {
			return err
		}
		v := storage.Variant{StoreID: store.ID, ProductID: p.ID, Price: 45000, Quantity: 5}
		if err := tx.CreateVariant(ctx, &v, true, true); err != nil {
			return err
		}
		cart, _, err := tx.CreateCart(ctx, store.ID)
		if err != nil {
			return err
		}
		_, err = tx.UpdateCart(ctx, store.ID, cart.ID, storage.CartUpdate{Lines: []storage.NewOrderLine{{VariantID: v.ID, Quantity: 1}}})
		return err
	}))
	_, err := testenv.SQL(t, db).Exec(ctx, `UPDATE carts SET last_activity_at = now() - interval '61 minutes' WHERE store_id = $1`, storeID)
	require.NoError(t, err)
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "sweep-" + queue, TaskQueue: queue}, workflows.AbandonmentSweep)
	require.NoError(t, err)
	var result workflows.AbandonmentSweepResult
	require.NoError(t, run.Get(ctx, &result))
	require.Equal(t, 1, result.Marked)
}

// The purge workflow deletes expired idempotency records, sessions and
// authorization codes, year-old audit entries, and webhook deliveries and
// dispatched outbox events past their 30 days, and nothing that is still
// live (issue 17, finding 5).
func TestPurgeExpiredWorkflow(t *testing.T) {
	db, c, queue := startWorker(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var user storage.User
	require.NoError(t, db.InTx(ctx, func(tx *storage.Tx) error {
		user = storage.User{Email: "purge@example.com", PasswordHash: "x", Name: "P"}
		store := storage.Store{Name: "Purge", Subdomain: "purge", Currency: "EGP", DefaultLanguage: "ar"}
		return tx.CreateUserAndStore(ctx, &user, &store)
	}))
	sql := testenv.SQL(t, db)
	for _, live := range []bool{true, false} {
		expires := time.Now().Add(-time.Hour)
		if live {
			expires = time.Now().Add(time.Hour)
		}
		_, err := db.CreateSession(ctx, storage.NewSecret(""), user.ID, time.Until(expires), storage.RequestSource{})
		require.NoError(t, err)
		_, err = sql.Exec(ctx, `INSERT INTO idempotency_keys (store_id, credential_id, method, route, key, fingerprint, state, expires_at)
			SELECT id, $1, 'POST', '/x', $2, '\x00', 'completed', $3 FROM stores WHERE owner_user_id = $1`,
			user.ID, fmt.Sprint(live), expires)
		require.NoError(t, err)
	}
	// The audit log keeps a year: the purge deletes the entry older than
	// that (the only delete its trigger allows), not the sign-ins above.
	_, err := sql.Exec(ctx, `INSERT INTO audit_entries (id, store_id, occurred_at, actor_type, action, resource_type)
		SELECT gen_random_uuid(), id, now() - interval '366 days', 'system', 'order.created', 'order' FROM stores WHERE owner_user_id = $1`, user.ID)
	require.NoError(t, err)
	_, err = sql.Exec(ctx, `DELETE FROM audit_entries WHERE occurred_at > now() - interval '1 day'`)
	require.ErrorContains(t, err, "immutable", "a recent entry cannot be deleted")
	_, err = sql.Exec(ctx, `UPDATE audit_entries SET action = 'x'`)
	require.ErrorContains(t, err, "immutable")
	// Webhook deliveries are kept 30 days once over: the old succeeded one
	// goes with its attempt; a recent one and an old one still retrying stay.
	for _, d := range []struct {
		status string
		age    string
	}{{"succeeded", "31 days"}, {"succeeded", "29 days"}, {"retrying", "31 days"}} {
		_, err := sql.Exec(ctx, `WITH d AS (
				INSERT INTO webhook_deliveries (id, store_id, subscription_id, event, body, status, attempts, created_at)
				SELECT gen_random_uuid(), id, gen_random_uuid(), 'order.created', '{}', $2, 1, now() - $3::interval
				FROM stores WHERE owner_user_id = $1 RETURNING id, store_id, subscription_id, created_at)
			INSERT INTO webhook_attempts (id, store_id, subscription_id, delivery_id, attempt, status, attempted_at)
			SELECT gen_random_uuid(), store_id, subscription_id, id, 1, 'failed', created_at FROM d`, user.ID, d.status, d.age)
		require.NoError(t, err)
	}
	// Dispatched outbox events are kept as long; one not dispatched yet stays.
	for _, e := range []struct {
		age        string
		dispatched bool
	}{{"31 days", true}, {"29 days", true}, {"31 days", false}} {
		_, err := sql.Exec(ctx, `INSERT INTO outbox (id, store_id, event, body, created_at, dispatched_at)
			SELECT gen_random_uuid(), id, 'order.created', '{}', now() - $2::interval, CASE WHEN $3 THEN now() - $2::interval END
			FROM stores WHERE owner_user_id = $1`, user.ID, e.age, e.dispatched)
		require.NoError(t, err)
	}
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: workflows.PurgeScheduleID + "-" + queue, TaskQueue: queue}, workflows.PurgeExpired)
	require.NoError(t, err)
	var result workflows.PurgeExpiredResult
	require.NoError(t, run.Get(ctx, &result))
	require.Equal(t, 1, result.IdempotencyKeys)
	require.Equal(t, 1, result.Sessions)
	require.Equal(t, 1, result.AuditEntries)
	require.Equal(t, 1, result.WebhookDeliveries)
	var deliveries, attempts int
	require.NoError(t, sql.QueryRow(ctx, `SELECT (SELECT count(*) FROM webhook_deliveries), (SELECT count(*) FROM webhook_attempts)`).
		Scan(&deliveries, &attempts))
	require.Equal(t, [2]int{2, 2}, [2]int{deliveries, attempts}, "the recent and the unfinished deliveries stay, with their attempts")
	require.Equal(t, 1, result.OutboxEvents)
	var recent, undispatched int
	require.NoError(t, sql.QueryRow(ctx, `SELECT count(*) FILTER (WHERE created_at > now() - interval '30 days'),
		count(*) FILTER (WHERE dispatched_at IS NULL) FROM outbox`).Scan(&recent, &undispatched))
	require.Equal(t, [2]int{1, 1}, [2]int{recent, undispatched}, "the recent event and the one not dispatched yet stay")
	var entries int
	require.NoError(t, sql.QueryRow(ctx, `SELECT count(*) FROM audit_entries WHERE action = 'staff.signed_in'`).Scan(&entries))
	require.Equal(t, 2, entries, "the sign-ins stay")
	var keys, sessions int
	require.NoError(t, sql.QueryRow(ctx, `SELECT count(*) FROM idempotency_keys WHERE expires_at > now()`).Scan(&keys))
	require.NoError(t, sql.QueryRow(ctx, `SELECT count(*) FROM sessions`).Scan(&sessions))
	require.Equal(t, [2]int{1, 1}, [2]int{keys, sessions}, "the live ones stay")
}
