package storage

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"sort"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
)

// Carriers are the couriers a carrier account or a shipment may name.
var Carriers = []string{"aramex", "smsa", "bosta", "mylerz", "jt", "dhl", "fedex", "ups", "r2s", "other"}

// CarrierSecretOverlap is how long a rotated-out callback secret still verifies.
const CarrierSecretOverlap = 24 * time.Hour

// CarrierAccount is a store's account with a courier: it names the
// shipments' carrier and signs the courier's status callbacks.
type CarrierAccount struct {
	ID        uuid.UUID
	StoreID   uuid.UUID
	Carrier   string
	Name      string
	Secret    string // only answered when created or rotated
	CreatedAt time.Time
	UpdatedAt time.Time
}

func newCarrierSecret() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return "csec_" + hex.EncodeToString(b)
}

const carrierAccountColumns = `id, store_id, carrier, name, created_at, updated_at`

func scanCarrierAccount(row pgx.Row) (CarrierAccount, error) {
	var a CarrierAccount
	err := row.Scan(&a.ID, &a.StoreID, &a.Carrier, &a.Name, &a.CreatedAt, &a.UpdatedAt)
	return a, err
}

// CreateCarrierAccount adds an account with a fresh callback secret.
func (tx *Tx) CreateCarrierAccount(ctx context.Context, storeID uuid.UUID, carrier, name string) (CarrierAccount, error) {
	a := CarrierAccount{ID: NewID(), StoreID: storeID, Carrier: carrier, Name: name, Secret: newCarrierSecret(), CreatedAt: tx.now()}
	a.UpdatedAt = a.CreatedAt
	if _, err := tx.tx.Exec(ctx, `INSERT INTO carrier_accounts (id, store_id, carrier, name, secret, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $6)`, a.ID, storeID, carrier, name, a.Secret, a.CreatedAt); err != nil {
		if isUniqueViolation(err, "carrier_accounts_store_id_carrier_name_key") {
			return CarrierAccount{}, &ConflictError{Field: "name", Message: "the store has an account of this carrier with this name"}
		}
		return CarrierAccount{}, fmt.Errorf("create carrier account: %w", err)
	}
	return a, nil
}

// FindCarrierAccounts lists a store's carrier accounts, oldest first.
func (r reader) FindCarrierAccounts(ctx context.Context, storeID uuid.UUID, page Page) ([]CarrierAccount, int, error) {
	return findPage(ctx, r, "carrier accounts", listQuery{
		columns: carrierAccountColumns, from: "FROM carrier_accounts WHERE store_id = $1", args: []any{storeID}, orderBy: "created_at, id",
	}, page.Limit, int(page.Offset()), func(row pgx.CollectableRow) (CarrierAccount, error) { return scanCarrierAccount(row) })
}

// FindCarrierAccount reads one of a store's carrier accounts.
func (r reader) FindCarrierAccount(ctx context.Context, storeID, id uuid.UUID) (CarrierAccount, error) {
	a, err := scanCarrierAccount(r.q.QueryRow(ctx, `SELECT `+carrierAccountColumns+` FROM carrier_accounts WHERE store_id = $1 AND id = $2`, storeID, id))
	if err != nil {
		return CarrierAccount{}, notFoundIfNoRows(err, "find carrier account "+id.String())
	}
	return a, nil
}

// DeleteCarrierAccount removes an account; its shipments keep their
// carrier name and lose the account.
func (tx *Tx) DeleteCarrierAccount(ctx context.Context, storeID, id uuid.UUID) error {
	tag, err := tx.tx.Exec(ctx, `DELETE FROM carrier_accounts WHERE store_id = $1 AND id = $2`, storeID, id)
	if err != nil {
		return fmt.Errorf("delete carrier account: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("delete carrier account %s: %w", id, ErrNotFound)
	}
	return nil
}

// RotateCarrierSecret gives an account a new callback secret; the old one
// verifies for CarrierSecretOverlap more.
func (tx *Tx) RotateCarrierSecret(ctx context.Context, storeID, id uuid.UUID) (CarrierAccount, error) {
	secret, now := newCarrierSecret(), tx.now()
	a, err := scanCarrierAccount(tx.tx.QueryRow(ctx, `UPDATE carrier_accounts SET previous_secret = secret, previous_secret_expires_at = $4,
			secret = $3, updated_at = $5
		WHERE store_id = $1 AND id = $2 RETURNING `+carrierAccountColumns, storeID, id, secret, now.Add(CarrierSecretOverlap), now))
	if err != nil {
		return CarrierAccount{}, notFoundIfNoRows(err, "rotate carrier secret "+id.String())
	}
	a.Secret = secret
	return a, nil
}

// CallbackSecrets are the secrets a carrier account's callbacks may be
// signed with now (the current one, and the previous one within its overlap).
func (db *DB) CallbackSecrets(ctx context.Context, accountID uuid.UUID) (storeID uuid.UUID, secrets []string, err error) {
	var (
		current  string
		previous *string
		expires  *time.Time
	)
	err = db.pool.QueryRow(ctx, `SELECT store_id, secret, previous_secret, previous_secret_expires_at FROM carrier_accounts WHERE id = $1`,
		accountID).Scan(&storeID, &current, &previous, &expires)
	if err != nil {
		return uuid.Nil, nil, notFoundIfNoRows(err, "find carrier account "+accountID.String())
	}
	secrets = []string{current}
	if previous != nil && expires != nil && db.now().Before(*expires) {
		secrets = append(secrets, *previous)
	}
	return storeID, secrets, nil
}

// CarrierEvent is one status report in a carrier's callback.
type CarrierEvent struct {
	EventID        string
	TrackingNumber string
	Status         ShipmentStatus
	OccurredAt     time.Time
	CODCollected   *int64
}

// IgnoredEvent names a report that changed nothing, and why.
type IgnoredEvent struct {
	EventID string
	Reason  string
}

// Why a carrier's report changed nothing.
const (
	IgnoredUnknownTracking = "unknown_tracking_number"
	IgnoredDuplicate       = "duplicate"
	IgnoredSameStatus      = "same_status"
	IgnoredStale           = "stale"
	IgnoredIllegal         = "illegal_transition"
	IgnoredInvalid         = "invalid"
)

// callbackShipment is a shipment a callback names, held with its order;
// lastApplied is when the latest move reported to it happened (the label's
// own creation does not count: a carrier's clock may run behind ours).
type callbackShipment struct {
	Shipment
	lastApplied pgtype.Timestamptz
}

// ApplyCarrierEvents applies a carrier account's batch of reports (decisions
// §12). Within the batch, reports apply in the order they happened; a report
// older than what a shipment last applied is stale, a repeated event id is a
// no-op, an illegal or same-status move is kept but changes nothing. Nothing
// here refuses the batch: carriers resend out of order.
func (tx *Tx) ApplyCarrierEvents(ctx context.Context, storeID, accountID uuid.UUID, events []CarrierEvent) (applied int, ignored []IgnoredEvent, err error) {
	ignored = []IgnoredEvent{}
	var carrier string
	if err := tx.tx.QueryRow(ctx, `SELECT carrier FROM carrier_accounts WHERE store_id = $1 AND id = $2`, storeID, accountID).Scan(&carrier); err != nil {
		return 0, nil, notFoundIfNoRows(err, "find carrier account "+accountID.String())
	}
	tracking := make([]string, 0, len(events))
	eventIDs := make([]string, 0, len(events))
	for _, e := range events {
		tracking, eventIDs = append(tracking, e.TrackingNumber), append(eventIDs, e.EventID)
	}
	// The orders first, in id order (every order routine locks its order
	// before its shipments), with their lines, then their shipments.
	orders, err := tx.lockOrdersOf(ctx, storeID, tracking)
	if err != nil {
		return 0, nil, err
	}
	rows, err := tx.tx.Query(ctx, `SELECT `+shipmentColumns+`,
			COALESCE((SELECT max(e.occurred_at) FROM shipment_events e WHERE e.store_id = s.store_id AND e.shipment_id = s.id AND e.applied
				AND e.source <> 'system' AND e.status <> 'label_created'), '-infinity')
		`+shipmentFrom+`
		WHERE s.store_id = $1 AND s.tracking_number = ANY($2) AND s.status <> 'cancelled'
		  AND (s.carrier_account_id = $3 OR (s.carrier_account_id IS NULL AND s.carrier = $4))
		ORDER BY s.id FOR UPDATE OF s`, storeID, tracking, accountID, carrier)
	if err != nil {
		return 0, nil, fmt.Errorf("read callback shipments: %w", err)
	}
	byTracking := map[string]*callbackShipment{}
	var list []*callbackShipment
	for rows.Next() {
		var c callbackShipment
		s := &c.Shipment
		if err := rows.Scan(&s.ID, &s.StoreID, &s.OrderID, &s.OrderNumber, &s.Number, &s.Status, &s.LocationID, &s.CarrierAccountID, &s.Carrier,
			&s.Service, &s.TrackingNumber, &s.TrackingURL, &s.CODAmount, &s.CODCollected, &s.CODFee, &s.CODState, &s.CODRemitted,
			&s.WaybillStatus, &s.ShippedAt, &s.DeliveredAt, &s.CreatedAt, &s.UpdatedAt, &c.lastApplied); err != nil {
			rows.Close()
			return 0, nil, fmt.Errorf("read callback shipments: %w", err)
		}
		byTracking[*s.TrackingNumber] = &c
		list = append(list, &c)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, nil, fmt.Errorf("read callback shipments: %w", err)
	}
	if err := tx.linesOf(ctx, storeID, list); err != nil {
		return 0, nil, err
	}
	seen := map[string]bool{}
	if len(list) > 0 {
		ids := make([]uuid.UUID, len(list))
		for i, c := range list {
			ids[i] = c.ID
		}
		rows, err := tx.tx.Query(ctx, `SELECT event_id FROM shipment_events WHERE store_id = $1 AND shipment_id = ANY($2) AND event_id = ANY($3)`,
			storeID, ids, eventIDs)
		if err != nil {
			return 0, nil, fmt.Errorf("read seen events: %w", err)
		}
		known, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			return 0, nil, fmt.Errorf("read seen events: %w", err)
		}
		for _, id := range known {
			seen[id] = true
		}
	}
	tx.deferWrites()
	order := make([]int, len(events))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return events[order[a]].OccurredAt.Before(events[order[b]].OccurredAt) })
	var reported []uuid.UUID // orders an applied report moved
	for _, i := range order {
		e := events[i]
		c, known := byTracking[e.TrackingNumber]
		switch {
		case !e.Status.Valid():
			ignored = append(ignored, IgnoredEvent{EventID: e.EventID, Reason: IgnoredInvalid})
			continue
		case !known:
			ignored = append(ignored, IgnoredEvent{EventID: e.EventID, Reason: IgnoredUnknownTracking})
			continue
		case seen[e.EventID]:
			ignored = append(ignored, IgnoredEvent{EventID: e.EventID, Reason: IgnoredDuplicate})
			continue
		}
		seen[e.EventID] = true
		reason := ""
		switch {
		case e.Status == c.Status:
			reason = IgnoredSameStatus
		case c.lastApplied.Valid && c.lastApplied.InfinityModifier == pgtype.Finite && e.OccurredAt.Before(c.lastApplied.Time):
			reason = IgnoredStale
		case !ShipmentCanMove(c.Status, e.Status):
			reason = IgnoredIllegal
		}
		eventID := e.EventID
		if reason != "" {
			ignored = append(ignored, IgnoredEvent{EventID: e.EventID, Reason: reason})
			if err := tx.recordShipmentEvent(ctx, storeID, c.ID, ShipmentEvent{Status: e.Status, OccurredAt: e.OccurredAt, Source: SourceCarrier,
				EventID: &eventID, Ignored: &reason}); err != nil {
				return 0, nil, err
			}
			continue
		}
		o := orders[c.OrderID]
		if err := tx.applyShipmentStatus(ctx, o, &c.Shipment, ShipmentReport{Status: e.Status, OccurredAt: e.OccurredAt, CODCollected: e.CODCollected,
			Source: SourceCarrier, EventID: &eventID}, true, nil); err != nil {
			return 0, nil, err
		}
		if err := tx.settleOrderShipments(ctx, o, &c.Shipment, nil); err != nil {
			return 0, nil, err
		}
		c.lastApplied = pgtype.Timestamptz{Time: e.OccurredAt, Valid: true}
		applied++
		reported = append(reported, c.OrderID)
	}
	if err := tx.flushDeferred(ctx); err != nil {
		return 0, nil, err
	}
	return applied, ignored, tx.confirmOutcomes(ctx, storeID, reported)
}

// confirmOutcomes marks the orders a carrier's reports brought to an
// outcome (DELIVERED, RETURNED) as carrier-confirmed: only these count in
// other stores' COD trust checks (decisions §28). A carrier's signed
// callback is the only writer, after the batch's moves; any other move of
// the order clears it (moveOrder).
func (tx *Tx) confirmOutcomes(ctx context.Context, storeID uuid.UUID, orderIDs []uuid.UUID) error {
	if len(orderIDs) == 0 {
		return nil
	}
	if _, err := tx.tx.Exec(ctx, `UPDATE orders SET carrier_confirmed_at = $3
		WHERE store_id = $1 AND id = ANY($2) AND status IN ('DELIVERED', 'RETURNED')`, storeID, orderIDs, tx.now()); err != nil {
		return fmt.Errorf("confirm carrier outcomes: %w", err)
	}
	return nil
}

// lockOrdersOf holds, in id order, the orders of the live shipments with
// these tracking numbers, and reads their lines.
func (tx *Tx) lockOrdersOf(ctx context.Context, storeID uuid.UUID, tracking []string) (map[uuid.UUID]*Order, error) {
	rows, err := tx.tx.Query(ctx, `SELECT `+orderColumns+` FROM orders WHERE store_id = $1 AND id IN (
			SELECT order_id FROM shipments WHERE store_id = $1 AND tracking_number = ANY($2) AND status <> 'cancelled')
		ORDER BY id FOR UPDATE`, storeID, tracking)
	if err != nil {
		return nil, fmt.Errorf("lock callback orders: %w", err)
	}
	list, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (Order, error) { return scanOrder(row) })
	if err != nil {
		return nil, fmt.Errorf("lock callback orders: %w", err)
	}
	orders := make(map[uuid.UUID]*Order, len(list))
	ids := make([]uuid.UUID, 0, len(list))
	for i := range list {
		list[i].Lines = []OrderLine{}
		orders[list[i].ID] = &list[i]
		ids = append(ids, list[i].ID)
	}
	rows, err = tx.tx.Query(ctx, `SELECT order_id, id, variant_id, product_id, name, sku, quantity, unit_price, total, returned_quantity, discount
		FROM order_lines WHERE store_id = $1 AND order_id = ANY($2) ORDER BY order_id, position`, storeID, ids)
	if err != nil {
		return nil, fmt.Errorf("find order lines: %w", err)
	}
	var (
		orderID uuid.UUID
		l       OrderLine
	)
	if _, err := pgx.ForEachRow(rows, []any{&orderID, &l.ID, &l.VariantID, &l.ProductID, &l.Name, &l.SKU, &l.Quantity, &l.UnitPrice, &l.Total,
		&l.ReturnedQuantity, &l.Discount}, func() error {
		o := orders[orderID]
		o.Lines = append(o.Lines, l)
		return nil
	}); err != nil {
		return nil, fmt.Errorf("find order lines: %w", err)
	}
	return orders, nil
}

// linesOf reads the lines of shipments in one query.
func (tx *Tx) linesOf(ctx context.Context, storeID uuid.UUID, list []*callbackShipment) error {
	if len(list) == 0 {
		return nil
	}
	index := make(map[uuid.UUID]*callbackShipment, len(list))
	ids := make([]uuid.UUID, 0, len(list))
	for _, c := range list {
		c.Lines = []ShipmentLine{}
		index[c.ID] = c
		ids = append(ids, c.ID)
	}
	rows, err := tx.tx.Query(ctx, `SELECT shipment_id, line_id, quantity FROM shipment_lines WHERE store_id = $1 AND shipment_id = ANY($2)`, storeID, ids)
	if err != nil {
		return fmt.Errorf("read shipment lines: %w", err)
	}
	var (
		shipmentID uuid.UUID
		l          ShipmentLine
	)
	if _, err := pgx.ForEachRow(rows, []any{&shipmentID, &l.LineID, &l.Quantity}, func() error {
		c := index[shipmentID]
		c.Lines = append(c.Lines, l)
		return nil
	}); err != nil {
		return fmt.Errorf("read shipment lines: %w", err)
	}
	return nil
}

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

type deferredEvent struct {
	storeID, shipmentID uuid.UUID
	e                   ShipmentEvent
	createdAt           time.Time
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
