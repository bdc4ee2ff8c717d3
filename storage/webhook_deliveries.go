package storage

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// DeliveryStatus is where a webhook delivery is.
type DeliveryStatus string

// Delivery statuses.
const (
	DeliveryPending   DeliveryStatus = "pending"
	DeliveryRetrying  DeliveryStatus = "retrying"
	DeliverySucceeded DeliveryStatus = "succeeded"
	DeliveryExhausted DeliveryStatus = "exhausted"
	DeliveryGone      DeliveryStatus = "gone"
	DeliverySkipped   DeliveryStatus = "skipped"
	// DeliveryFailed ends a test ping that did not get a 2xx; pings never switch a subscription off.
	DeliveryFailed DeliveryStatus = "failed"
)

// Delivery is one event for one subscription; X-SVC-Delivery is its id.
type Delivery struct {
	ID             uuid.UUID
	StoreID        uuid.UUID
	SubscriptionID uuid.UUID
	Event          string
	Body           []byte
	Status         DeliveryStatus
	Attempts       int
	CreatedAt      time.Time
}

// Batch is one store's first attempts dispatched together; one workflow
// each. A batch never mixes stores, so one store's slow receivers never hold
// up another's deliveries and an operator finds the batch by its store.
type Batch struct {
	ID      uuid.UUID
	StoreID uuid.UUID // nil for batches written before batches had a store
	// StoreSubdomain names the store in the workflow's summary.
	StoreSubdomain string
	// Deliveries counts the pending deliveries in it.
	Deliveries int
	// TraceParents are the traces that wrote its events (up to
	// maxBatchLinks), for the dispatch's span links.
	TraceParents []string
}

// maxBatchLinks bounds the traces a batch's dispatch links to.
const maxBatchLinks = 32

// DispatchOutbox turns up to limit undispatched outbox rows into deliveries,
// one per matching subscription: pending for active ones (grouped into a new
// batch per store), skipped for switched-off ones. It returns the batches
// with pending deliveries and how many events it took. SKIP LOCKED lets
// several dispatchers run without taking the same rows; the unique (outbox,
// subscription) pair means a row can never yield two deliveries.
func (db *DB) DispatchOutbox(ctx context.Context, limit int) ([]Batch, int, error) {
	var (
		batches []Batch
		events  int
	)
	err := db.InTx(ctx, func(tx *Tx) error {
		batches = batches[:0]
		rows, err := tx.tx.Query(ctx, `SELECT o.id, o.store_id, COALESCE(s.subdomain, ''), COALESCE(o.trace_parent, '')
			FROM outbox o LEFT JOIN stores s ON s.id = o.store_id
			WHERE o.dispatched_at IS NULL ORDER BY o.created_at LIMIT $1 FOR UPDATE OF o SKIP LOCKED`, limit)
		if err != nil {
			return fmt.Errorf("claim outbox: %w", err)
		}
		type storeEvents struct {
			batch Batch
			ids   []uuid.UUID
			seen  map[string]bool
		}
		var (
			all              []uuid.UUID
			byStore          = map[uuid.UUID]*storeEvents{}
			order            []uuid.UUID
			id, storeID      uuid.UUID
			subdomain, trace string
		)
		_, err = pgx.ForEachRow(rows, []any{&id, &storeID, &subdomain, &trace}, func() error {
			all = append(all, id)
			se := byStore[storeID]
			if se == nil {
				se = &storeEvents{batch: Batch{ID: NewID(), StoreID: storeID, StoreSubdomain: subdomain}, seen: map[string]bool{}}
				byStore[storeID] = se
				order = append(order, storeID)
			}
			se.ids = append(se.ids, id)
			if trace != "" && !se.seen[trace] && len(se.batch.TraceParents) < maxBatchLinks {
				se.seen[trace] = true
				se.batch.TraceParents = append(se.batch.TraceParents, trace)
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("claim outbox: %w", err)
		}
		events = len(all)
		if events == 0 {
			return nil
		}
		now := tx.now()
		for _, storeID := range order {
			se := byStore[storeID]
			b := se.batch
			if _, err := tx.tx.Exec(ctx, `INSERT INTO webhook_batches (id, created_at, store_id) VALUES ($1, $2, $3)`, b.ID, now, storeID); err != nil {
				return fmt.Errorf("create batch: %w", err)
			}
			err = tx.tx.QueryRow(ctx, `WITH inserted AS (
					INSERT INTO webhook_deliveries (id, store_id, subscription_id, outbox_id, batch_id, event, body, status, created_at)
					SELECT gen_random_uuid(), o.store_id, s.id, o.id,
					       CASE WHEN s.is_active THEN $2::uuid END, o.event, o.body,
					       CASE WHEN s.is_active THEN 'pending' ELSE 'skipped' END, o.created_at
					FROM outbox o JOIN (SELECT * FROM webhook_subscriptions WHERE store_id = $3 FOR KEY SHARE) s
						ON s.store_id = o.store_id AND o.event = ANY (s.events)
					WHERE o.store_id = $3 AND o.id = ANY ($1)
					ON CONFLICT (outbox_id, subscription_id) DO NOTHING
					RETURNING status)
				SELECT count(*) FILTER (WHERE status = 'pending') FROM inserted`, uuidBytes(se.ids), b.ID, storeID).Scan(&b.Deliveries)
			if err != nil {
				return fmt.Errorf("create deliveries: %w", err)
			}
			if b.Deliveries == 0 {
				if _, err := tx.tx.Exec(ctx, `DELETE FROM webhook_batches WHERE id = $1`, b.ID); err != nil {
					return fmt.Errorf("drop empty batch: %w", err)
				}
				continue
			}
			batches = append(batches, b)
		}
		if _, err := tx.tx.Exec(ctx, `UPDATE outbox SET dispatched_at = $2 WHERE id = ANY ($1)`, uuidBytes(all), now); err != nil {
			return fmt.Errorf("mark outbox dispatched: %w", err)
		}
		return nil
	})
	if err != nil {
		return nil, events, err
	}
	return batches, events, nil
}

// MarkBatchStarted records that the batch's workflow exists.
func (db *DB) MarkBatchStarted(ctx context.Context, batchID uuid.UUID) error {
	if _, err := db.pool.Exec(ctx, `UPDATE webhook_batches SET started_at = $2 WHERE id = $1 AND started_at IS NULL`, batchID, db.now()); err != nil {
		return fmt.Errorf("mark batch started: %w", err)
	}
	return nil
}

// FindUnstartedBatches lists batches whose workflow start has not been
// recorded for at least olderThan (the start failed or the process died).
func (db *DB) FindUnstartedBatches(ctx context.Context, olderThan time.Duration) ([]Batch, error) {
	rows, err := db.pool.Query(ctx, `SELECT b.id, COALESCE(b.store_id, '00000000-0000-0000-0000-000000000000'), COALESCE(s.subdomain, ''),
			(SELECT count(*) FROM webhook_deliveries d WHERE d.batch_id = b.id AND d.status = 'pending')
		FROM webhook_batches b LEFT JOIN stores s ON s.id = b.store_id
		WHERE b.started_at IS NULL AND b.created_at <= $1 ORDER BY b.created_at LIMIT 100`, db.now().Add(-olderThan))
	if err != nil {
		return nil, fmt.Errorf("find unstarted batches: %w", err)
	}
	batches, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (Batch, error) {
		var b Batch
		return b, row.Scan(&b.ID, &b.StoreID, &b.StoreSubdomain, &b.Deliveries)
	})
	if err != nil {
		return nil, fmt.Errorf("find unstarted batches: %w", err)
	}
	return batches, nil
}

// DeliveryRef names a delivery with its store.
type DeliveryRef struct {
	StoreID    uuid.UUID
	DeliveryID uuid.UUID
}

// DeliveryTarget is what one attempt needs: the delivery and its
// subscription's current URL, secret and state.
type DeliveryTarget struct {
	Delivery
	URL      string
	Secret   string
	IsActive bool
}

// FindDeliveryTarget reads a delivery with its subscription's current settings.
func (r reader) FindDeliveryTarget(ctx context.Context, storeID, deliveryID uuid.UUID) (DeliveryTarget, error) {
	var t DeliveryTarget
	err := r.q.QueryRow(ctx, `SELECT d.id, d.store_id, d.subscription_id, d.event, d.body, d.status, d.attempts, d.created_at,
			s.url, COALESCE(a.client_secret, s.secret), s.is_active
		FROM webhook_deliveries d JOIN webhook_subscriptions s ON s.store_id = d.store_id AND s.id = d.subscription_id
		LEFT JOIN apps a ON a.id = s.app_id
		WHERE d.store_id = $1 AND d.id = $2`, storeID, deliveryID).
		Scan(&t.ID, &t.StoreID, &t.SubscriptionID, &t.Event, &t.Body, &t.Status, &t.Attempts, &t.CreatedAt, &t.URL, &t.Secret, &t.IsActive)
	if err != nil {
		return DeliveryTarget{}, notFoundIfNoRows(err, "find delivery "+deliveryID.String())
	}
	return t, nil
}

// Attempt is one logged try of a delivery.
type Attempt struct {
	DeliveryID   uuid.UUID
	Event        string
	Attempt      int
	Status       DeliveryStatus // succeeded, failed, exhausted, gone, skipped
	ResponseCode *int
	ResponseBody string
	Error        string
	Duration     time.Duration
	AttemptedAt  time.Time
}

// RecordAttempt logs an attempt and moves the delivery to status. When the
// delivery is exhausted, the subscription is switched off and the merchant
// gets a dashboard notification, in the same transaction.
func (db *DB) RecordAttempt(ctx context.Context, storeID uuid.UUID, a Attempt, status DeliveryStatus) error {
	return db.InTx(ctx, func(tx *Tx) error {
		var subID uuid.UUID
		completed := status != DeliveryRetrying && status != DeliveryPending
		err := tx.tx.QueryRow(ctx, `UPDATE webhook_deliveries SET status = $3, attempts = GREATEST(attempts, $4),
				last_response_code = COALESCE($5, last_response_code),
				completed_at = CASE WHEN $6 THEN $7::timestamptz END
			WHERE store_id = $1 AND id = $2 RETURNING subscription_id`,
			storeID, a.DeliveryID, status, a.Attempt, a.ResponseCode, completed, a.AttemptedAt).Scan(&subID)
		if err != nil {
			return notFoundIfNoRows(err, "record attempt")
		}
		_, err = tx.tx.Exec(ctx, `INSERT INTO webhook_attempts (id, store_id, subscription_id, delivery_id, attempt, status,
				response_code, response_body, error, duration_ms, attempted_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
			NewID(), storeID, subID, a.DeliveryID, a.Attempt, a.Status, a.ResponseCode, a.ResponseBody, a.Error,
			a.Duration.Milliseconds(), a.AttemptedAt)
		if err != nil {
			return fmt.Errorf("log attempt: %w", err)
		}
		if status != DeliveryExhausted {
			return nil
		}
		return tx.switchOffSubscription(ctx, storeID, subID, a.DeliveryID)
	})
}

func (tx *Tx) switchOffSubscription(ctx context.Context, storeID, subID, deliveryID uuid.UUID) error {
	var url string
	err := tx.tx.QueryRow(ctx, `UPDATE webhook_subscriptions SET is_active = false, disabled_at = $3,
			disabled_reason = 'delivery exhausted', updated_at = $3
		WHERE store_id = $1 AND id = $2 AND is_active RETURNING url`, storeID, subID, tx.now()).Scan(&url)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil // already off: one notification is enough
	}
	if err != nil {
		return fmt.Errorf("switch off subscription: %w", err)
	}
	data, _ := json.Marshal(map[string]any{"subscription_id": subID, "delivery_id": deliveryID, "url": url})
	return tx.CreateNotification(ctx, Notification{StoreID: storeID, Kind: NotificationWebhookDisabled,
		Title:   "Webhook switched off",
		TitleAr: "تم إيقاف الويب هوك",
		Body:    fmt.Sprintf("Deliveries to %s failed after every retry. Fix the endpoint, then re-enable the subscription.", url),
		BodyAr:  fmt.Sprintf("فشل إرسال الأحداث إلى %s بعد كل المحاولات. أصلح نقطة الاستقبال ثم أعد تفعيل الاشتراك.", url),
		Data:    data})
}

// FindAttempts lists a subscription's attempts, newest first.
func (r reader) FindAttempts(ctx context.Context, storeID, subscriptionID uuid.UUID, page Page) ([]Attempt, int, error) {
	return findPage(ctx, r, "attempts", listQuery{
		columns: "a.delivery_id, d.event, a.attempt, a.status, a.response_code, a.response_body, a.error, a.duration_ms, a.attempted_at",
		from: `FROM webhook_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id
			WHERE a.store_id = $1 AND a.subscription_id = $2`, args: []any{storeID, subscriptionID},
		orderBy: "a.attempted_at DESC, a.attempt DESC, a.delivery_id",
	}, page.Limit, int(page.Offset()), func(row pgx.CollectableRow) (Attempt, error) {
		var (
			a  Attempt
			ms int64
		)
		err := row.Scan(&a.DeliveryID, &a.Event, &a.Attempt, &a.Status, &a.ResponseCode, &a.ResponseBody, &a.Error, &ms, &a.AttemptedAt)
		a.Duration = time.Duration(ms) * time.Millisecond
		return a, err
	})
}

// CreatePingDelivery records a webhook.ping delivery for the test operation.
func (tx *Tx) CreatePingDelivery(ctx context.Context, storeID, subscriptionID uuid.UUID) (Delivery, error) {
	now := tx.now()
	d := Delivery{ID: NewID(), StoreID: storeID, SubscriptionID: subscriptionID, Event: EventWebhookPing,
		Status: DeliveryPending, CreatedAt: now}
	body, err := json.Marshal(eventBody{Event: EventWebhookPing, Timestamp: now.Format(time.RFC3339),
		Data: map[string]any{"store_id": storeID, "subscription_id": subscriptionID}})
	if err != nil {
		return Delivery{}, err
	}
	d.Body = body
	// The subscription is locked as the deliveries' writers lock it
	// (migration 0045): a delete of it waits, then takes this delivery.
	tag, err := tx.tx.Exec(ctx, `INSERT INTO webhook_deliveries (id, store_id, subscription_id, event, body, status, created_at)
		SELECT $1, s.store_id, s.id, $4, $5, $6, $7
		FROM (SELECT store_id, id FROM webhook_subscriptions WHERE store_id = $2 AND id = $3 FOR KEY SHARE) s`,
		d.ID, storeID, subscriptionID, d.Event, d.Body, d.Status, now)
	if err != nil {
		return Delivery{}, fmt.Errorf("create ping delivery: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return Delivery{}, fmt.Errorf("create ping delivery: subscription %s: %w", subscriptionID, ErrNotFound)
	}
	return d, nil
}

// RequeueDeliveries marks a subscription's deliveries for another round of
// attempts: one delivery (redeliver) or every exhausted or skipped one since
// a time (recover). It returns them with their attempt counts so far.
func (tx *Tx) RequeueDeliveries(ctx context.Context, storeID, subscriptionID uuid.UUID, deliveryID *uuid.UUID, since time.Time) ([]Delivery, error) {
	// The ladder's start is recorded as awaited until MarkLadderStarted: a
	// start lost to a Temporal outage is made by the dispatcher.
	query := `UPDATE webhook_deliveries SET status = 'retrying', completed_at = NULL, ladder_from = attempts + 1, requeued_at = $4
		WHERE store_id = $1 AND subscription_id = $2 AND event <> 'webhook.ping' AND `
	args := []any{storeID, subscriptionID}
	if deliveryID != nil {
		query += `id = $3 AND status <> 'retrying'`
		args = append(args, *deliveryID)
	} else {
		query += `status IN ('exhausted', 'skipped') AND created_at >= $3`
		args = append(args, since)
	}
	args = append(args, tx.now())
	rows, err := tx.tx.Query(ctx, query+` RETURNING id, store_id, subscription_id, event, body, status, attempts, created_at`, args...)
	if err != nil {
		return nil, fmt.Errorf("requeue deliveries: %w", err)
	}
	deliveries, err := pgx.CollectRows(rows, pgx.RowToStructByPos[Delivery])
	if err != nil {
		return nil, fmt.Errorf("requeue deliveries: %w", err)
	}
	return deliveries, nil
}

// FindBatchTargets loads every delivery of a batch still awaiting its first
// attempt, with its subscription's current URL, secret and state, in one query.
func (db *DB) FindBatchTargets(ctx context.Context, batchID uuid.UUID) ([]DeliveryTarget, error) {
	rows, err := db.pool.Query(ctx, `SELECT d.id, d.store_id, d.subscription_id, d.event, d.body, d.status, d.attempts, d.created_at,
			s.url, COALESCE(a.client_secret, s.secret), s.is_active
		FROM webhook_deliveries d JOIN webhook_subscriptions s ON s.store_id = d.store_id AND s.id = d.subscription_id
		LEFT JOIN apps a ON a.id = s.app_id
		WHERE d.batch_id = $1 AND d.status = 'pending' AND d.attempts = 0
		ORDER BY d.created_at, d.id`, batchID)
	if err != nil {
		return nil, fmt.Errorf("find batch targets: %w", err)
	}
	defer rows.Close()
	var targets []DeliveryTarget
	for rows.Next() {
		var t DeliveryTarget
		if err := rows.Scan(&t.ID, &t.StoreID, &t.SubscriptionID, &t.Event, &t.Body, &t.Status, &t.Attempts, &t.CreatedAt,
			&t.URL, &t.Secret, &t.IsActive); err != nil {
			return nil, fmt.Errorf("find batch targets: %w", err)
		}
		targets = append(targets, t)
	}
	return targets, rows.Err()
}

// AttemptRecord is one attempt and the delivery status it leads to.
type AttemptRecord struct {
	StoreID        uuid.UUID
	SubscriptionID uuid.UUID
	Attempt        Attempt
	Status         DeliveryStatus
}

// RecordAttempts logs many attempts and moves their deliveries in one
// transaction (the first attempts of a batch). Exhausted deliveries switch
// their subscription off as RecordAttempt does.
func (db *DB) RecordAttempts(ctx context.Context, records []AttemptRecord) error {
	if len(records) == 0 {
		return nil
	}
	n := len(records)
	var (
		ids, stores, attemptIDs = make([]uuid.UUID, n), make([]uuid.UUID, n), make([]uuid.UUID, n)
		statuses, logStatuses   = make([]string, n), make([]string, n)
		attempts                = make([]int32, n)
		codes                   = make([]*int32, n)
		bodies, errs            = make([]string, n), make([]string, n)
		durations               = make([]int64, n)
		times                   = make([]time.Time, n)
		completed               = make([]bool, n)
	)
	for i, r := range records {
		ids[i], stores[i], attemptIDs[i] = r.Attempt.DeliveryID, r.StoreID, NewID()
		statuses[i], logStatuses[i] = string(r.Status), string(r.Attempt.Status)
		attempts[i] = int32(r.Attempt.Attempt)
		if r.Attempt.ResponseCode != nil {
			c := int32(*r.Attempt.ResponseCode)
			codes[i] = &c
		}
		bodies[i], errs[i] = r.Attempt.ResponseBody, r.Attempt.Error
		durations[i], times[i] = r.Attempt.Duration.Milliseconds(), r.Attempt.AttemptedAt
		completed[i] = r.Status != DeliveryRetrying && r.Status != DeliveryPending
	}
	return db.InTx(ctx, func(tx *Tx) error {
		// One statement: each attempt is logged from its delivery's updated
		// row, so none is written for a delivery that is gone, and the
		// update's row lock keeps the delivery until commit (migration
		// 0044). The ids go as [16]byte, which pgx sends in binary;
		// uuid.UUID would go through its text form, element by element.
		_, err := tx.tx.Exec(ctx, `WITH updated AS (
				UPDATE webhook_deliveries d SET status = u.status, attempts = GREATEST(d.attempts, u.attempt),
					last_response_code = COALESCE(u.code, d.last_response_code),
					completed_at = CASE WHEN u.completed THEN u.at END
				FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::int[], $5::int[], $6::bool[], $7::timestamptz[],
					$8::uuid[], $9::text[], $10::text[], $11::text[], $12::bigint[])
					AS u(id, store_id, status, attempt, code, completed, at, attempt_id, log_status, body, error, duration_ms)
				WHERE d.store_id = u.store_id AND d.id = u.id
				RETURNING u.attempt_id, d.store_id, d.subscription_id, d.id, u.attempt, u.log_status, u.code, u.body, u.error, u.duration_ms, u.at)
			INSERT INTO webhook_attempts (id, store_id, subscription_id, delivery_id, attempt, status,
				response_code, response_body, error, duration_ms, attempted_at)
			SELECT * FROM updated`,
			uuidBytes(ids), uuidBytes(stores), statuses, attempts, codes, completed, times,
			uuidBytes(attemptIDs), logStatuses, bodies, errs, durations)
		if err != nil {
			return fmt.Errorf("record attempts: %w", err)
		}
		for _, r := range records {
			if r.Status == DeliveryExhausted {
				if err := tx.switchOffSubscription(ctx, r.StoreID, r.SubscriptionID, r.Attempt.DeliveryID); err != nil {
					return err
				}
			}
		}
		return nil
	})
}

// uuidBytes is ids as pgx encodes uuid arrays in binary.
func uuidBytes(ids []uuid.UUID) [][16]byte {
	out := make([][16]byte, len(ids))
	for i, id := range ids {
		out[i] = id
	}
	return out
}

// RecentDelivery is a delivery as the deliveries page lists it.
type RecentDelivery struct {
	ID               uuid.UUID
	SubscriptionID   uuid.UUID
	Event            string
	Status           DeliveryStatus
	Attempts         int
	LastResponseCode *int
	CreatedAt        time.Time
	LastAttemptAt    *time.Time
}

// FindRecentDeliveries lists the newest deliveries of each of the store's
// own subscriptions (those FindSubscriptions lists; an app's are the app's),
// up to perSubscription each, with their last attempt's time.
func (r reader) FindRecentDeliveries(ctx context.Context, storeID uuid.UUID, perSubscription int) ([]RecentDelivery, error) {
	rows, err := r.q.Query(ctx, `SELECT d.id, d.subscription_id, d.event, d.status, d.attempts, d.last_response_code, d.created_at,
			(SELECT max(a.attempted_at) FROM webhook_attempts a WHERE a.store_id = d.store_id AND a.delivery_id = d.id)
		FROM webhook_subscriptions s
		CROSS JOIN LATERAL (SELECT * FROM webhook_deliveries d WHERE d.store_id = s.store_id AND d.subscription_id = s.id
			ORDER BY d.created_at DESC, d.id LIMIT $2) d
		WHERE s.store_id = $1 AND s.app_id IS NULL
		ORDER BY d.created_at DESC, d.id`, storeID, perSubscription)
	if err != nil {
		return nil, fmt.Errorf("find recent deliveries: %w", err)
	}
	deliveries, err := pgx.CollectRows(rows, pgx.RowToStructByPos[RecentDelivery])
	if err != nil {
		return nil, fmt.Errorf("find recent deliveries: %w", err)
	}
	return deliveries, nil
}
