package storage

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
) // WebhookEvents are the events a subscription may name (spec §6.1).
var WebhookEvents = []string{EventOrderCreated, EventOrderPaid, EventOrderStatusChanged,
	EventProductCreated, EventProductUpdated, EventProductDeleted}

// eventDomains is the scope domain whose read scope an event needs: an
// app receives only the events its granted scopes could read.
var eventDomains = map[string]string{EventOrderCreated: "orders", EventOrderPaid: "orders", EventOrderStatusChanged: "orders",
	EventProductCreated: "catalog", EventProductUpdated: "catalog", EventProductDeleted: "catalog"}

// EventReadScope is the scope a credential needs to receive event (the
// read scope of its domain; `:write` implies it, see ScopesGrant), "" for
// an event no subscription may name. Apps' grants (EventsReadable) and
// merchants' subscriptions (api/webhook.go) both ask it.
func EventReadScope(event string) string {
	if d, ok := eventDomains[event]; ok {
		return d + ":read"
	}
	return ""
}

// EventsReadable keeps the events that scopes can read (`d:read` or
// `d:write` of the event's domain), in their order.
func EventsReadable(events, scopes []string) []string {
	out := []string{}
	for _, e := range events {
		if scope := EventReadScope(e); scope != "" && ScopesGrant(scopes, scope) {
			out = append(out, e)
		}
	}
	return out
}

// EventWebhookPing is sent only by the test operation.
const EventWebhookPing = "webhook.ping"

// MaxSubscriptionsPerStore caps a store's webhook subscriptions.
const MaxSubscriptionsPerStore = 20

// Subscription is a merchant's webhook endpoint.
type Subscription struct {
	ID             uuid.UUID
	StoreID        uuid.UUID
	URL            string
	Events         []string
	Description    string
	IsActive       bool
	Secret         string
	DisabledAt     *time.Time
	DisabledReason *string
	CreatedAt      time.Time
	UpdatedAt      time.Time
}

// SubscriptionUpdate is a partial update.
type SubscriptionUpdate struct {
	URL         *string
	Events      []string // nil leaves them
	Description *string
	IsActive    *bool
}

const subscriptionColumns = `id, store_id, url, events, description, is_active, secret, disabled_at, disabled_reason, created_at, updated_at`

func scanSubscription(row pgx.Row) (Subscription, error) {
	var s Subscription
	err := row.Scan(&s.ID, &s.StoreID, &s.URL, &s.Events, &s.Description, &s.IsActive, &s.Secret, &s.DisabledAt,
		&s.DisabledReason, &s.CreatedAt, &s.UpdatedAt)
	return s, err
}

// CreateSubscription adds an endpoint, at most MaxSubscriptionsPerStore per store.
func (tx *Tx) CreateSubscription(ctx context.Context, s *Subscription) error {
	// Lock the store row so two concurrent creates cannot both pass the cap.
	if _, err := tx.tx.Exec(ctx, `SELECT 1 FROM stores WHERE id = $1 FOR UPDATE`, s.StoreID); err != nil {
		return fmt.Errorf("lock store: %w", err)
	}
	var count int
	if err := tx.tx.QueryRow(ctx, `SELECT count(*) FROM webhook_subscriptions WHERE store_id = $1 AND app_id IS NULL`, s.StoreID).Scan(&count); err != nil {
		return fmt.Errorf("count subscriptions: %w", err)
	}
	if count >= MaxSubscriptionsPerStore {
		return &InvalidError{Field: "url", Code: "limit_reached",
			Message: fmt.Sprintf("a store may have at most %d webhook subscriptions", MaxSubscriptionsPerStore)}
	}
	s.ID = NewID()
	now := tx.now()
	s.CreatedAt, s.UpdatedAt = now, now
	_, err := tx.tx.Exec(ctx, `INSERT INTO webhook_subscriptions (`+subscriptionColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, NULL, NULL, $8, $8)`,
		s.ID, s.StoreID, s.URL, s.Events, s.Description, s.IsActive, s.Secret, now)
	if err != nil {
		return fmt.Errorf("create subscription: %w", err)
	}
	return nil
}

// FindSubscriptions lists a store's subscriptions, oldest first.
func (r reader) FindSubscriptions(ctx context.Context, storeID uuid.UUID) ([]Subscription, error) {
	rows, err := r.q.Query(ctx, `SELECT `+subscriptionColumns+` FROM webhook_subscriptions WHERE store_id = $1 AND app_id IS NULL ORDER BY created_at, id`, storeID)
	if err != nil {
		return nil, fmt.Errorf("find subscriptions: %w", err)
	}
	subs, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (Subscription, error) { return scanSubscription(row) })
	if err != nil {
		return nil, fmt.Errorf("find subscriptions: %w", err)
	}
	return subs, nil
}

// FindSubscriptionByID returns one subscription of the store.
func (r reader) FindSubscriptionByID(ctx context.Context, storeID, id uuid.UUID) (Subscription, error) {
	s, err := scanSubscription(r.q.QueryRow(ctx, `SELECT `+subscriptionColumns+` FROM webhook_subscriptions WHERE store_id = $1 AND id = $2 AND app_id IS NULL`, storeID, id))
	if err != nil {
		return Subscription{}, notFoundIfNoRows(err, "find subscription "+id.String())
	}
	return s, nil
}

// UpdateSubscription applies a partial update; setting is_active true
// re-enables a subscription switched off by exhaustion.
func (tx *Tx) UpdateSubscription(ctx context.Context, storeID, id uuid.UUID, upd SubscriptionUpdate) (Subscription, error) {
	s, err := scanSubscription(tx.tx.QueryRow(ctx, `SELECT `+subscriptionColumns+` FROM webhook_subscriptions WHERE store_id = $1 AND id = $2 AND app_id IS NULL FOR UPDATE`, storeID, id))
	if err != nil {
		return Subscription{}, notFoundIfNoRows(err, "update subscription "+id.String())
	}
	if upd.URL != nil {
		s.URL = *upd.URL
	}
	if upd.Events != nil {
		s.Events = upd.Events
	}
	if upd.Description != nil {
		s.Description = *upd.Description
	}
	if upd.IsActive != nil {
		s.IsActive = *upd.IsActive
		if s.IsActive {
			s.DisabledAt, s.DisabledReason = nil, nil
		}
	}
	s.UpdatedAt = tx.now()
	_, err = tx.tx.Exec(ctx, `UPDATE webhook_subscriptions SET url = $3, events = $4, description = $5, is_active = $6,
		disabled_at = $7, disabled_reason = $8, updated_at = $9 WHERE store_id = $1 AND id = $2`,
		storeID, id, s.URL, s.Events, s.Description, s.IsActive, s.DisabledAt, s.DisabledReason, s.UpdatedAt)
	if err != nil {
		return Subscription{}, fmt.Errorf("update subscription: %w", err)
	}
	return s, nil
}

// RotateSubscriptionSecret replaces the signing secret; every attempt from
// the commit on, retries included, signs with the new one.
func (tx *Tx) RotateSubscriptionSecret(ctx context.Context, storeID, id uuid.UUID, secret string) (Subscription, error) {
	s, err := scanSubscription(tx.tx.QueryRow(ctx, `UPDATE webhook_subscriptions SET secret = $3, updated_at = $4
		WHERE store_id = $1 AND id = $2 AND app_id IS NULL RETURNING `+subscriptionColumns, storeID, id, secret, tx.now()))
	if err != nil {
		return Subscription{}, notFoundIfNoRows(err, "rotate subscription secret")
	}
	return s, nil
}

// DeleteSubscription removes a subscription with its deliveries and logs.
func (tx *Tx) DeleteSubscription(ctx context.Context, storeID, id uuid.UUID) error {
	tag, err := tx.tx.Exec(ctx, `DELETE FROM webhook_subscriptions WHERE store_id = $1 AND id = $2 AND app_id IS NULL`, storeID, id)
	if err != nil {
		return fmt.Errorf("delete subscription: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("delete subscription %s: %w", id, ErrNotFound)
	}
	return nil
}
