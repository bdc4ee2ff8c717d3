package storage

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// ActivityKind names an entry of an order's activity log.
type ActivityKind string

// Activity kinds.
const (
	ActivityComment              ActivityKind = "comment"
	ActivityOrderCreated         ActivityKind = "order_created"
	ActivityDraftCreated         ActivityKind = "draft_created"
	ActivityOrderUpdated         ActivityKind = "order_updated"
	ActivityStatusChanged        ActivityKind = "status_changed"
	ActivityPaymentProofUploaded ActivityKind = "payment_proof_uploaded"
	ActivityPaymentProofApproved ActivityKind = "payment_proof_approved"
	ActivityPaymentProofRejected ActivityKind = "payment_proof_rejected"
	ActivityPaymentRecorded      ActivityKind = "payment_recorded"
	ActivityPaymentUnmarked      ActivityKind = "payment_unmarked"
	ActivityPaymentVoided        ActivityKind = "payment_voided"
)

// addActivity appends an entry to an order's activity log.
func (tx *Tx) addActivity(ctx context.Context, o Order, kind ActivityKind, body string, data any, actor *uuid.UUID) error {
	batch := &pgx.Batch{}
	if err := tx.queueActivity(batch, o, kind, body, data, actor); err != nil || batch.Len() == 0 {
		return err
	}
	if err := tx.tx.SendBatch(ctx, batch).Close(); err != nil {
		return fmt.Errorf("record order activity: %w", err)
	}
	return nil
}

// queueActivity is addActivity as one statement of a batch (none while
// the transaction holds its writes back).
func (tx *Tx) queueActivity(batch *pgx.Batch, o Order, kind ActivityKind, body string, data any, actor *uuid.UUID) error {
	if held, err := tx.deferActivity(o, kind, body, data, actor); held {
		return err
	}
	raw, err := json.Marshal(data)
	if err != nil {
		return err
	}
	batch.Queue(`INSERT INTO order_activities (id, store_id, order_id, kind, body, data, author_user_id, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`, NewID(), o.StoreID, o.ID, kind, body, raw, actor, tx.now())
	return nil
}

// OrderActivity is a staff comment or a system event on an order.
type OrderActivity struct {
	ID           uuid.UUID
	Kind         ActivityKind
	Body         string
	Data         json.RawMessage
	AuthorUserID *uuid.UUID
	CreatedAt    time.Time
}

// AddOrderComment records a staff comment, visible only to merchant staff.
func (tx *Tx) AddOrderComment(ctx context.Context, storeID, orderID uuid.UUID, body string, actor *uuid.UUID) (OrderActivity, error) {
	o, err := scanOrder(tx.tx.QueryRow(ctx, orderByIDQuery, storeID, orderID))
	if err != nil {
		return OrderActivity{}, notFoundIfNoRows(err, "find order "+orderID.String())
	}
	if err := tx.addActivity(ctx, o, ActivityComment, body, map[string]any{}, actor); err != nil {
		return OrderActivity{}, err
	}
	a, _, err := tx.FindOrderActivities(ctx, storeID, orderID, ActivityFilter{Kinds: []ActivityKind{ActivityComment}}, Page{Page: 1, Limit: 1}, false)
	if err != nil || len(a) == 0 {
		return OrderActivity{}, err
	}
	return a[0], nil
}

// ActivityFilter narrows an order's activities.
type ActivityFilter struct {
	// Kinds keeps the activities of these kinds (all when none).
	Kinds []ActivityKind
	// WithoutStaffOnly leaves out what only the merchant's staff may read,
	// staff comments (spec §2.5): a partner app's token never sees them.
	WithoutStaffOnly bool
}

// FindOrderActivities lists an order's activities that filter keeps, newest
// first or oldest first.
func (r reader) FindOrderActivities(ctx context.Context, storeID, orderID uuid.UUID, filter ActivityFilter, page Page, oldestFirst bool) ([]OrderActivity, int, error) {
	kindNames := make([]string, 0, len(filter.Kinds)) // never nil: a NULL array matches nothing below
	for _, k := range filter.Kinds {
		kindNames = append(kindNames, string(k))
	}
	order := "created_at DESC, id DESC"
	if oldestFirst {
		order = "created_at, id"
	}
	return findPage(ctx, r, "order activities", listQuery{
		columns: "id, kind, body, data, author_user_id, created_at",
		from: `FROM order_activities WHERE store_id = $1 AND order_id = $2
			AND (cardinality($3::text[]) = 0 OR kind = ANY ($3)) AND NOT ($4 AND kind = $5)`,
		args:    []any{storeID, orderID, kindNames, filter.WithoutStaffOnly, string(ActivityComment)},
		orderBy: order,
	}, page.Limit, int(page.Offset()), func(row pgx.CollectableRow) (OrderActivity, error) {
		var a OrderActivity
		err := row.Scan(&a.ID, &a.Kind, &a.Body, &a.Data, &a.AuthorUserID, &a.CreatedAt)
		return a, err
	})
}

// deferredActivity is an activity row held back until flushDeferred (deferWrites).
type deferredActivity struct {
	id, storeID, orderID uuid.UUID
	kind                 ActivityKind
	body                 string
	data                 []byte
	actor                *uuid.UUID
	createdAt            time.Time
}

// deferActivity holds an activity row when writes are held.
func (tx *Tx) deferActivity(o Order, kind ActivityKind, body string, data any, actor *uuid.UUID) (bool, error) {
	if tx.deferred == nil {
		return false, nil
	}
	raw, err := json.Marshal(data)
	if err != nil {
		return true, err
	}
	tx.deferred.activities = append(tx.deferred.activities, deferredActivity{id: NewID(), storeID: o.StoreID, orderID: o.ID, kind: kind,
		body: body, data: raw, actor: actor, createdAt: tx.now()})
	return true, nil
}
