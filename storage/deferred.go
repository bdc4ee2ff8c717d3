package storage

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"
)

// deferredWrites holds the rows a long transaction (a carrier's batch of
// 500 reports) writes but never reads back, to write them in a few set-wise
// statements instead of one round trip each: shipment events, order
// activities, and shipments' new states (written before anything reads
// shipments again).
type deferredWrites struct {
	events     []deferredEvent
	activities []deferredActivity
	outbox     []deferredOutbox
	shipments  map[uuid.UUID]Shipment
	// storeTerms caches each store's commission and e-invoicing switch
	// for the transaction's payments.
	storeTerms map[uuid.UUID]storeTerms
}

type storeTerms struct {
	commissionBPS int
	eInvoices     bool
}

type deferredOutbox struct {
	id, storeID uuid.UUID
	event       string
	body        []byte
	createdAt   time.Time
	traceParent string
}

type deferredEvent struct {
	storeID, shipmentID uuid.UUID
	e                   ShipmentEvent
	createdAt           time.Time
}

type deferredActivity struct {
	id, storeID, orderID uuid.UUID
	kind                 ActivityKind
	body                 string
	data                 []byte
	actor                *uuid.UUID
	createdAt            time.Time
}

// deferWrites starts holding back the transaction's event, activity and
// shipment-state writes until flushDeferred.
func (tx *Tx) deferWrites() {
	tx.deferred = &deferredWrites{shipments: map[uuid.UUID]Shipment{}, storeTerms: map[uuid.UUID]storeTerms{}}
}

// flushShipments writes the held shipment states.
func (tx *Tx) flushShipments(ctx context.Context) error {
	d := tx.deferred
	if d == nil || len(d.shipments) == 0 {
		return nil
	}
	n := len(d.shipments)
	var (
		storeIDs, ids           = make([]uuid.UUID, 0, n), make([]uuid.UUID, 0, n)
		statuses, codStates     = make([]string, 0, n), make([]string, 0, n)
		shipped, delivered, upd = make([]*time.Time, 0, n), make([]*time.Time, 0, n), make([]time.Time, 0, n)
		collected               = make([]*int64, 0, n)
	)
	for _, s := range d.shipments {
		storeIDs, ids = append(storeIDs, s.StoreID), append(ids, s.ID)
		statuses, codStates = append(statuses, string(s.Status)), append(codStates, s.CODState)
		shipped, delivered, upd = append(shipped, s.ShippedAt), append(delivered, s.DeliveredAt), append(upd, s.UpdatedAt)
		collected = append(collected, s.CODCollected)
	}
	if _, err := tx.tx.Exec(ctx, `UPDATE shipments s SET status = u.status, shipped_at = u.shipped_at, delivered_at = u.delivered_at,
			cod_collected = u.cod_collected, cod_state = u.cod_state, updated_at = u.updated_at
		FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::timestamptz[], $5::timestamptz[], $6::bigint[], $7::text[], $8::timestamptz[])
			AS u(store_id, id, status, shipped_at, delivered_at, cod_collected, cod_state, updated_at)
		WHERE s.store_id = u.store_id AND s.id = u.id`, storeIDs, ids, statuses, shipped, delivered, collected, codStates, upd); err != nil {
		return fmt.Errorf("move shipments: %w", err)
	}
	clear(d.shipments)
	return nil
}

// flushDeferred writes everything held and stops holding.
func (tx *Tx) flushDeferred(ctx context.Context) error {
	d := tx.deferred
	if d == nil {
		return nil
	}
	if err := tx.flushShipments(ctx); err != nil {
		return err
	}
	if n := len(d.events); n > 0 {
		var (
			storeIDs, shipmentIDs = make([]uuid.UUID, n), make([]uuid.UUID, n)
			statuses, sources     = make([]string, n), make([]string, n)
			notes, eventIDs       = make([]*string, n), make([]*string, n)
			ignored               = make([]*string, n)
			applied               = make([]bool, n)
			occurred, created     = make([]time.Time, n), make([]time.Time, n)
		)
		for i, e := range d.events {
			storeIDs[i], shipmentIDs[i], statuses[i], sources[i] = e.storeID, e.shipmentID, string(e.e.Status), e.e.Source
			notes[i], eventIDs[i], ignored[i], applied[i] = e.e.Note, e.e.EventID, e.e.Ignored, e.e.Applied
			occurred[i], created[i] = e.e.OccurredAt, e.createdAt
		}
		if _, err := tx.tx.Exec(ctx, `INSERT INTO shipment_events (store_id, shipment_id, status, occurred_at, source, note, event_id, applied, ignored, created_at)
			SELECT u.store_id, u.shipment_id, u.status, u.occurred_at, u.source, u.note, u.event_id, u.applied, u.ignored, u.created_at
			FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::timestamptz[], $5::text[], $6::text[], $7::text[], $8::bool[], $9::text[], $10::timestamptz[])
				WITH ORDINALITY AS u(store_id, shipment_id, status, occurred_at, source, note, event_id, applied, ignored, created_at, n)
			ORDER BY u.n`,
			storeIDs, shipmentIDs, statuses, occurred, sources, notes, eventIDs, applied, ignored, created); err != nil {
			return fmt.Errorf("record shipment events: %w", err)
		}
	}
	if n := len(d.activities); n > 0 {
		var (
			ids, storeIDs, orderIDs = make([]uuid.UUID, n), make([]uuid.UUID, n), make([]uuid.UUID, n)
			kinds, bodies, data     = make([]string, n), make([]string, n), make([]string, n)
			actors                  = make([]*uuid.UUID, n)
			created                 = make([]time.Time, n)
		)
		for i, a := range d.activities {
			ids[i], storeIDs[i], orderIDs[i], kinds[i], bodies[i], data[i] = a.id, a.storeID, a.orderID, string(a.kind), a.body, string(a.data)
			actors[i], created[i] = a.actor, a.createdAt
		}
		if _, err := tx.tx.Exec(ctx, `INSERT INTO order_activities (id, store_id, order_id, kind, body, data, author_user_id, created_at)
			SELECT u.id, u.store_id, u.order_id, u.kind, u.body, u.data::jsonb, u.actor, u.created_at
			FROM unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::text[], $5::text[], $6::text[], $7::uuid[], $8::timestamptz[])
				AS u(id, store_id, order_id, kind, body, data, actor, created_at)`,
			ids, storeIDs, orderIDs, kinds, bodies, data, actors, created); err != nil {
			return fmt.Errorf("record order activities: %w", err)
		}
	}
	if n := len(d.outbox); n > 0 {
		var (
			ids, storeIDs = make([]uuid.UUID, n), make([]uuid.UUID, n)
			events, trace = make([]string, n), make([]string, n)
			bodies        = make([][]byte, n)
			created       = make([]time.Time, n)
		)
		for i, o := range d.outbox {
			ids[i], storeIDs[i], events[i], bodies[i], trace[i], created[i] = o.id, o.storeID, o.event, o.body, o.traceParent, o.createdAt
		}
		if _, err := tx.tx.Exec(ctx, `WITH rows AS (INSERT INTO outbox (id, store_id, event, body, created_at, trace_parent)
				SELECT u.id, u.store_id, u.event, u.body, u.created_at, NULLIF(u.trace_parent, '')
				FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::bytea[], $5::timestamptz[], $6::text[])
					WITH ORDINALITY AS u(id, store_id, event, body, created_at, trace_parent, n)
				ORDER BY u.n)
			SELECT pg_notify('`+OutboxChannel+`', '')`, ids, storeIDs, events, bodies, created, trace); err != nil {
			return fmt.Errorf("write events: %w", err)
		}
	}
	tx.deferred = nil
	return nil
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
