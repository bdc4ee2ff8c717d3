package storage

import (
	"context"
	"errors"
	"fmt"
	"time"

	sq "github.com/Masterminds/squirrel"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// Shipments (decisions §12): an order leaves in one or several shipments;
// their statuses drive the order's through the one transition routine.

// Refusals of the shipment routes.
var (
	ErrOrderNotShippable = errors.New("order not shippable")
	ErrNothingToShip     = errors.New("nothing to ship")
	ErrDuplicateTracking = errors.New("duplicate tracking number")
	ErrShipmentClosed    = errors.New("shipment closed")
	ErrUnshippedQuantity = errors.New("unshipped quantity")
)

// Autopilot exception reasons fulfillment opens.
const (
	ReasonDeliveryFailed = "delivery_failed"
	ReasonWaybillFailed  = "waybill_failed"
	ReasonCODMismatch    = "cod_mismatch"
)

// Order activity kinds of shipments (the order's timeline).
const (
	ActivityShipmentCreated   ActivityKind = "shipment_created"
	ActivityShipmentUpdated   ActivityKind = "shipment_updated"
	ActivityShipmentStatus    ActivityKind = "shipment_status"
	ActivityShipmentCancelled ActivityKind = "shipment_cancelled"
	ActivityWaybillRequested  ActivityKind = "waybill_requested"
	ActivityWaybillReady      ActivityKind = "waybill_ready"
	ActivityWaybillFailed     ActivityKind = "waybill_failed"
	ActivityCODRemitted       ActivityKind = "cod_remitted"
)

// Where a shipment's cash is.
const (
	CODNone      = "none"      // nothing to collect
	CODPending   = "pending"   // to be collected at the door
	CODCollected = "collected" // collected, not yet remitted
	CODRemitted  = "remitted"  // the carrier paid it out in full
	CODMismatch  = "mismatch"  // a remittance paid another amount
)

// CODStates lists every cod_state.
var CODStates = []string{CODNone, CODPending, CODCollected, CODRemitted, CODMismatch}

// Shipment sources: who reported a status.
const (
	SourceAPI     = "api"
	SourceCarrier = "carrier"
	SourceSystem  = "system"
)

// Shipment is one parcel of an order.
type Shipment struct {
	ID               uuid.UUID
	StoreID          uuid.UUID
	OrderID          uuid.UUID
	OrderNumber      string
	Number           string
	Status           ShipmentStatus
	LocationID       *uuid.UUID // nil once its location was deleted
	CarrierAccountID *uuid.UUID
	Carrier          string
	Service          *string
	TrackingNumber   *string
	TrackingURL      *string
	CODAmount        int64
	CODCollected     *int64
	CODFee           *int64
	CODState         string
	CODRemitted      int64
	WaybillStatus    string
	ShippedAt        *time.Time
	DeliveredAt      *time.Time
	CreatedAt        time.Time
	UpdatedAt        time.Time
	Lines            []ShipmentLine
	Events           []ShipmentEvent

	departedNow bool // the move just applied was its first departure
}

// ShipmentLine is how many pieces of an order line a shipment carries.
type ShipmentLine struct {
	LineID   uuid.UUID
	Quantity int
}

// ShipmentEvent is one status report, applied or kept aside.
type ShipmentEvent struct {
	Status     ShipmentStatus
	OccurredAt time.Time
	Source     string
	Note       *string
	EventID    *string
	Applied    bool
	Ignored    *string
}

// ShipmentTransitionError refuses a status move and says which are allowed.
type ShipmentTransitionError struct {
	From, To    ShipmentStatus
	AllowedNext []ShipmentStatus
}

func (e *ShipmentTransitionError) Error() string {
	return fmt.Sprintf("a shipment cannot move from %s to %s", e.From, e.To)
}

const shipmentColumns = `s.id, s.store_id, s.order_id, o.order_number, s.number, s.status, s.location_id, s.carrier_account_id, s.carrier,
	s.service, s.tracking_number, s.tracking_url, s.cod_amount, s.cod_collected, s.cod_fee, s.cod_state, s.cod_remitted,
	s.waybill_status, s.shipped_at, s.delivered_at, s.created_at, s.updated_at`

const shipmentFrom = `FROM shipments s JOIN orders o ON o.store_id = s.store_id AND o.id = s.order_id`

func scanShipment(row pgx.Row) (Shipment, error) {
	var s Shipment
	err := row.Scan(&s.ID, &s.StoreID, &s.OrderID, &s.OrderNumber, &s.Number, &s.Status, &s.LocationID, &s.CarrierAccountID, &s.Carrier,
		&s.Service, &s.TrackingNumber, &s.TrackingURL, &s.CODAmount, &s.CODCollected, &s.CODFee, &s.CODState, &s.CODRemitted,
		&s.WaybillStatus, &s.ShippedAt, &s.DeliveredAt, &s.CreatedAt, &s.UpdatedAt)
	return s, err
}

// withDetails reads the lines and events of shipments (of one store).
func (r reader) withDetails(ctx context.Context, storeID uuid.UUID, shipments []Shipment) error {
	if len(shipments) == 0 {
		return nil
	}
	ids := make([]uuid.UUID, len(shipments))
	index := map[uuid.UUID]int{}
	for i, s := range shipments {
		ids[i], index[s.ID] = s.ID, i
		shipments[i].Lines, shipments[i].Events = []ShipmentLine{}, []ShipmentEvent{}
	}
	batch := &pgx.Batch{}
	batch.Queue(`SELECT l.shipment_id, l.line_id, l.quantity FROM shipment_lines l JOIN order_lines ol ON ol.id = l.line_id
		WHERE l.store_id = $1 AND l.shipment_id = ANY($2) ORDER BY ol.position`, storeID, ids).Query(func(rows pgx.Rows) error {
		var (
			shipmentID uuid.UUID
			l          ShipmentLine
		)
		_, err := pgx.ForEachRow(rows, []any{&shipmentID, &l.LineID, &l.Quantity}, func() error {
			i := index[shipmentID]
			shipments[i].Lines = append(shipments[i].Lines, l)
			return nil
		})
		return err
	})
	batch.Queue(`SELECT shipment_id, status, occurred_at, source, note, event_id, applied, ignored FROM shipment_events
		WHERE store_id = $1 AND shipment_id = ANY($2) ORDER BY seq`, storeID, ids).Query(func(rows pgx.Rows) error {
		var (
			shipmentID uuid.UUID
			e          ShipmentEvent
		)
		_, err := pgx.ForEachRow(rows, []any{&shipmentID, &e.Status, &e.OccurredAt, &e.Source, &e.Note, &e.EventID, &e.Applied, &e.Ignored}, func() error {
			i := index[shipmentID]
			shipments[i].Events = append(shipments[i].Events, e)
			return nil
		})
		return err
	})
	if err := r.q.SendBatch(ctx, batch).Close(); err != nil {
		return fmt.Errorf("read shipment details: %w", err)
	}
	return nil
}

// FindShipment reads one shipment with its lines and events.
func (r reader) FindShipment(ctx context.Context, storeID, id uuid.UUID) (Shipment, error) {
	s, err := scanShipment(r.q.QueryRow(ctx, `SELECT `+shipmentColumns+` `+shipmentFrom+` WHERE s.store_id = $1 AND s.id = $2`, storeID, id))
	if err != nil {
		return Shipment{}, notFoundIfNoRows(err, "find shipment "+id.String())
	}
	list := []Shipment{s}
	if err := r.withDetails(ctx, storeID, list); err != nil {
		return Shipment{}, err
	}
	return list[0], nil
}

// ShipmentFilter narrows a shipment list.
type ShipmentFilter struct {
	OrderID        *uuid.UUID
	Status         *ShipmentStatus
	Carrier        *string
	TrackingNumber *string
	CODState       *string
	UpdatedSince   *time.Time
	CreatedFrom    *time.Time
	CreatedTo      *time.Time
	Page           Page
}

// FindShipments lists a store's shipments, newest first.
func (r reader) FindShipments(ctx context.Context, storeID uuid.UUID, f ShipmentFilter) ([]Shipment, int, error) {
	where := sq.And{sq.Eq{"s.store_id": storeID}}
	if f.OrderID != nil {
		where = append(where, sq.Eq{"s.order_id": *f.OrderID})
	}
	if f.Status != nil {
		where = append(where, sq.Eq{"s.status": *f.Status})
	}
	if f.Carrier != nil {
		where = append(where, sq.Eq{"s.carrier": *f.Carrier})
	}
	if f.TrackingNumber != nil {
		where = append(where, sq.Eq{"s.tracking_number": *f.TrackingNumber})
	}
	if f.CODState != nil {
		where = append(where, sq.Eq{"s.cod_state": *f.CODState})
	}
	if f.UpdatedSince != nil {
		where = append(where, sq.GtOrEq{"s.updated_at": *f.UpdatedSince})
	}
	if f.CreatedFrom != nil {
		where = append(where, sq.GtOrEq{"s.created_at": *f.CreatedFrom})
	}
	if f.CreatedTo != nil {
		where = append(where, sq.Lt{"s.created_at": *f.CreatedTo})
	}
	cond, args, err := dollarSQL(where)
	if err != nil {
		return nil, 0, err
	}
	shipments, total, err := findPage(ctx, r, "shipments", listQuery{
		columns: shipmentColumns, from: shipmentFrom + " WHERE " + cond, args: args, orderBy: "s.created_at DESC, s.id DESC",
	}, f.Page.Limit, int(f.Page.Offset()), func(row pgx.CollectableRow) (Shipment, error) { return scanShipment(row) })
	if err != nil {
		return nil, 0, err
	}
	return shipments, total, r.withDetails(ctx, storeID, shipments)
}

// NewShipment is a shipment to open on an order.
type NewShipment struct {
	Lines            []ShipmentLine // nil: every unshipped piece
	LocationID       *uuid.UUID
	CarrierAccountID *uuid.UUID
	Carrier          string // when no carrier account names it
	Service          *string
	TrackingNumber   *string
	TrackingURL      *string
	CODAmount        *int64

	asIs bool // reservations stay where they are (an implicit shipment)
}

// openShipment is a shipment of the order not cancelled; departed says
// whether it left.
type openShipment struct {
	id           uuid.UUID
	status       ShipmentStatus
	codAmount    int64
	codCollected *int64
	tracking     *string
	number       string
	shippedAt    *time.Time
}

// orderShipments reads an order's shipments (all statuses).
func (tx *Tx) orderShipments(ctx context.Context, storeID, orderID uuid.UUID) ([]openShipment, error) {
	rows, err := tx.tx.Query(ctx, `SELECT id, status, cod_amount, cod_collected, tracking_number, number, shipped_at FROM shipments
		WHERE store_id = $1 AND order_id = $2 ORDER BY created_at, id`, storeID, orderID)
	if err != nil {
		return nil, fmt.Errorf("read order shipments: %w", err)
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (openShipment, error) {
		var s openShipment
		return s, row.Scan(&s.id, &s.status, &s.codAmount, &s.codCollected, &s.tracking, &s.number, &s.shippedAt)
	})
}

// unshipped is how many pieces of each line no live shipment carries
// (cancelled shipments give theirs back).
func (tx *Tx) unshipped(ctx context.Context, o Order) (map[uuid.UUID]int, error) {
	left := map[uuid.UUID]int{}
	for _, l := range o.Lines {
		left[l.ID] = l.Quantity
	}
	rows, err := tx.tx.Query(ctx, `SELECT l.line_id, sum(l.quantity)::int FROM shipment_lines l JOIN shipments s ON s.store_id = l.store_id AND s.id = l.shipment_id
		WHERE l.store_id = $1 AND s.order_id = $2 AND s.status <> 'cancelled' GROUP BY l.line_id`, o.StoreID, o.ID)
	if err != nil {
		return nil, fmt.Errorf("read shipped pieces: %w", err)
	}
	var (
		lineID uuid.UUID
		n      int
	)
	if _, err := pgx.ForEachRow(rows, []any{&lineID, &n}, func() error {
		left[lineID] = max(left[lineID]-n, 0)
		return nil
	}); err != nil {
		return nil, fmt.Errorf("read shipped pieces: %w", err)
	}
	return left, nil
}

// shippable are the order statuses a shipment may be opened in.
func shippable(status OrderStatus) bool {
	switch status {
	case OrderDraft, OrderCancelled, OrderDelivered, OrderReturned:
		return false
	}
	return true
}

// CreateShipment opens a shipment on an order (decisions §12): the lines
// asked for (every unshipped piece by default), at a location holding their
// reservations (moved there if need be), COD the balance due less what the
// order's other open shipments collect. Its waybill is asked for.
func (tx *Tx) CreateShipment(ctx context.Context, storeID, orderID uuid.UUID, in NewShipment, actor *uuid.UUID) (Shipment, error) {
	o, err := tx.lockOrder(ctx, storeID, orderID)
	if err != nil {
		return Shipment{}, err
	}
	if !shippable(o.Status) {
		return Shipment{}, fmt.Errorf("ship a %s order: %w", o.Status, ErrOrderNotShippable)
	}
	id, err := tx.openShipment(ctx, &o, in, SourceAPI, actor)
	if err != nil {
		return Shipment{}, err
	}
	return tx.FindShipment(ctx, storeID, id)
}

// CreateShipmentForOrder opens a shipment for all of a placed order's
// lines (auto_create_shipment, decisions §12), once: at the location
// holding most of its reservation (else the default), carrier "other"
// until the store has carrier accounts, COD the balance due.
func (db *DB) CreateShipmentForOrder(ctx context.Context, storeID, orderID uuid.UUID) error {
	return db.InTx(ctx, func(tx *Tx) error {
		id, now := NewID(), tx.now()
		tag, err := tx.tx.Exec(ctx, `INSERT INTO shipments (id, store_id, order_id, number, status, location_id, carrier, cod_amount, created_at, updated_at)
			SELECT $3, o.store_id, o.id, o.order_number || '-' || (SELECT count(*) + 1 FROM shipments x WHERE x.store_id = o.store_id AND x.order_id = o.id),
			       'label_created',
			       COALESCE((SELECT a.location_id FROM order_allocations a WHERE a.store_id = o.store_id AND a.order_id = o.id
			                 GROUP BY a.location_id ORDER BY sum(a.reserved) DESC, a.location_id LIMIT 1),
			                (SELECT l.id FROM locations l WHERE l.store_id = o.store_id AND l.is_default)),
			       'other', CASE WHEN o.payment_method = 'cod' THEN GREATEST(o.total - o.paid_total, 0) ELSE 0 END, $4, $4
			FROM orders o
			WHERE o.store_id = $1 AND o.id = $2 AND NOT EXISTS (SELECT 1 FROM shipments s WHERE s.store_id = $1 AND s.order_id = $2)`,
			storeID, orderID, id, now)
		if err != nil {
			return fmt.Errorf("create shipment: %w", err)
		}
		if tag.RowsAffected() == 1 {
			if _, err := tx.tx.Exec(ctx, `INSERT INTO shipment_lines (store_id, shipment_id, line_id, quantity)
				SELECT store_id, $3, id, quantity FROM order_lines WHERE store_id = $1 AND order_id = $2 AND quantity > 0`,
				storeID, orderID, id); err != nil {
				return fmt.Errorf("create shipment lines: %w", err)
			}
			if _, err := tx.tx.Exec(ctx, `INSERT INTO shipment_events (store_id, shipment_id, status, occurred_at, source, applied, created_at)
				VALUES ($1, $2, 'label_created', $3, 'system', true, $3)`, storeID, id, now); err != nil {
				return fmt.Errorf("record shipment event: %w", err)
			}
		}
		return tx.RecordSideEffect(ctx, storeID, orderID, "shipment", "succeeded", map[string]any{})
	})
}

// openShipment writes a shipment of o; the caller holds the order.
func (tx *Tx) openShipment(ctx context.Context, o *Order, in NewShipment, source string, actor *uuid.UUID) (uuid.UUID, error) {
	left, err := tx.unshipped(ctx, *o)
	if err != nil {
		return uuid.Nil, err
	}
	lines := in.Lines
	if lines == nil {
		for _, l := range o.Lines {
			if left[l.ID] > 0 {
				lines = append(lines, ShipmentLine{LineID: l.ID, Quantity: left[l.ID]})
			}
		}
		if len(lines) == 0 {
			return uuid.Nil, ErrNothingToShip
		}
	}
	seen := map[uuid.UUID]bool{}
	for i, l := range lines {
		remaining, ok := left[l.LineID]
		switch {
		case !ok:
			return uuid.Nil, &InvalidError{Field: fmt.Sprintf("lines[%d].line_id", i), Code: "not_found", Message: "is not a line of this order"}
		case seen[l.LineID]:
			return uuid.Nil, &InvalidError{Field: fmt.Sprintf("lines[%d].line_id", i), Code: "duplicate", Message: "is listed twice"}
		case remaining == 0:
			return uuid.Nil, ErrNothingToShip
		case l.Quantity < 1 || l.Quantity > remaining:
			return uuid.Nil, &InvalidError{Field: fmt.Sprintf("lines[%d].quantity", i), Code: "out_of_range",
				Message: fmt.Sprintf("must be between 1 and %d (the pieces not yet shipped)", remaining)}
		}
		seen[l.LineID] = true
	}
	carrier := in.Carrier
	if in.CarrierAccountID != nil {
		if err := tx.tx.QueryRow(ctx, `SELECT carrier FROM carrier_accounts WHERE store_id = $1 AND id = $2`, o.StoreID, *in.CarrierAccountID).Scan(&carrier); err != nil {
			if errors.Is(err, pgx.ErrNoRows) {
				return uuid.Nil, &InvalidError{Field: "carrier_account_id", Code: "not_found", Message: "is not a carrier account of this store"}
			}
			return uuid.Nil, fmt.Errorf("find carrier account: %w", err)
		}
	}
	if carrier == "" {
		return uuid.Nil, &InvalidError{Field: "carrier", Code: "required", Message: "is required when no carrier_account_id is given"}
	}
	locationID, err := tx.shipmentLocation(ctx, *o, lines, in.LocationID)
	if err != nil {
		return uuid.Nil, err
	}
	if !in.asIs {
		if err := tx.checkTracking(ctx, o.StoreID, uuid.Nil, in.TrackingNumber); err != nil {
			return uuid.Nil, err
		}
	}
	codAmount, err := tx.codAmount(ctx, *o, uuid.Nil, in.CODAmount)
	if err != nil {
		return uuid.Nil, err
	}
	id := NewID()
	if !in.asIs {
		if err := tx.moveReservations(ctx, *o, id, lines, locationID, UserActor(actor)); err != nil {
			return uuid.Nil, err
		}
	}
	now := tx.now()
	codState := CODNone
	if codAmount > 0 {
		codState = CODPending
	}
	var number string
	if err := tx.tx.QueryRow(ctx, `INSERT INTO shipments (id, store_id, order_id, number, status, location_id, carrier_account_id, carrier,
			service, tracking_number, tracking_url, cod_amount, cod_state, created_at, updated_at)
		VALUES ($1, $2, $3, $4 || '-' || (SELECT count(*) + 1 FROM shipments x WHERE x.store_id = $2 AND x.order_id = $3),
			'label_created', $5, $6, $7, $8, $9, $10, $11, $12, $13, $13)
		RETURNING number`, id, o.StoreID, o.ID, o.OrderNumber, locationID, in.CarrierAccountID, carrier, in.Service, in.TrackingNumber,
		in.TrackingURL, codAmount, codState, now).Scan(&number); err != nil {
		return uuid.Nil, fmt.Errorf("create shipment: %w", err)
	}
	lineIDs, qty := make([]uuid.UUID, len(lines)), make([]int32, len(lines))
	for i, l := range lines {
		lineIDs[i], qty[i] = l.LineID, int32(l.Quantity)
	}
	if _, err := tx.tx.Exec(ctx, `INSERT INTO shipment_lines (store_id, shipment_id, line_id, quantity)
		SELECT $1, $2, u.line_id, u.n FROM unnest($3::uuid[], $4::int[]) AS u(line_id, n)`, o.StoreID, id, lineIDs, qty); err != nil {
		return uuid.Nil, fmt.Errorf("create shipment lines: %w", err)
	}
	if err := tx.recordShipmentEvent(ctx, o.StoreID, id, ShipmentEvent{Status: ShipmentLabelCreated, OccurredAt: now, Source: source, Applied: true}); err != nil {
		return uuid.Nil, err
	}
	if err := tx.notifyDispatcher(ctx); err != nil {
		return uuid.Nil, err
	}
	return id, tx.addActivity(ctx, *o, ActivityShipmentCreated, "", map[string]any{"shipment_id": id, "number": number, "lines": lines,
		"carrier": carrier, "cod_amount": codAmount}, actor)
}

// shipmentLocation is the asked location, else the one holding most of the
// lines' reservations, else the default.
func (tx *Tx) shipmentLocation(ctx context.Context, o Order, lines []ShipmentLine, asked *uuid.UUID) (uuid.UUID, error) {
	if asked != nil {
		var exists bool
		if err := tx.tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM locations WHERE store_id = $1 AND id = $2)`, o.StoreID, *asked).Scan(&exists); err != nil {
			return uuid.Nil, fmt.Errorf("find location: %w", err)
		}
		if !exists {
			return uuid.Nil, &InvalidError{Field: "location_id", Code: "not_found", Message: "is not a location of this store"}
		}
		return *asked, nil
	}
	ids := make([]uuid.UUID, len(lines))
	for i, l := range lines {
		ids[i] = l.LineID
	}
	var id uuid.UUID
	err := tx.tx.QueryRow(ctx, `SELECT location_id FROM order_allocations WHERE store_id = $1 AND order_id = $2 AND line_id = ANY($3)
		GROUP BY location_id ORDER BY sum(reserved) DESC, location_id LIMIT 1`, o.StoreID, o.ID, ids).Scan(&id)
	if errors.Is(err, pgx.ErrNoRows) {
		return tx.defaultLocationID(ctx, o.StoreID)
	}
	if err != nil {
		return uuid.Nil, fmt.Errorf("find shipment location: %w", err)
	}
	return id, nil
}

// checkTracking refuses a tracking number another live shipment of the
// store carries.
func (tx *Tx) checkTracking(ctx context.Context, storeID, self uuid.UUID, tracking *string) error {
	if tracking == nil {
		return nil
	}
	var taken bool
	if err := tx.tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM shipments WHERE store_id = $1 AND tracking_number = $2 AND id <> $3 AND status <> 'cancelled')`,
		storeID, *tracking, self).Scan(&taken); err != nil {
		return fmt.Errorf("check tracking number: %w", err)
	}
	if taken {
		return ErrDuplicateTracking
	}
	return nil
}

// codAmount is the cash a shipment collects: asked, or the balance due less
// what the order's other open shipments collect. A prepaid order collects
// nothing.
func (tx *Tx) codAmount(ctx context.Context, o Order, self uuid.UUID, asked *int64) (int64, error) {
	var others int64
	if err := tx.tx.QueryRow(ctx, `SELECT COALESCE(sum(cod_amount), 0)::bigint FROM shipments
		WHERE store_id = $1 AND order_id = $2 AND id <> $3 AND status NOT IN ('cancelled', 'returned_to_sender')`, o.StoreID, o.ID, self).Scan(&others); err != nil {
		return 0, fmt.Errorf("sum cod amounts: %w", err)
	}
	room := max(o.BalanceDue()-others, 0)
	if o.PaymentMethod != "cod" {
		room = 0
	}
	if asked == nil {
		return room, nil
	}
	if *asked > 0 && o.PaymentMethod != "cod" {
		return 0, &InvalidError{Field: "cod_amount", Code: "not_cod", Message: "the order is not paid cash on delivery"}
	}
	if *asked > room {
		return 0, &InvalidError{Field: "cod_amount", Code: "exceeds_balance",
			Message: fmt.Sprintf("must be at most %d (the balance due less the order's other open shipments)", room)}
	}
	return *asked, nil
}

// moveReservations makes sure the shipment's location holds the
// reservation of its pieces: what is reserved elsewhere for a line is
// released there and reserved here, refused when here lacks stock.
func (tx *Tx) moveReservations(ctx context.Context, o Order, shipmentID uuid.UUID, lines []ShipmentLine, locationID uuid.UUID, actor Actor) error {
	allocs, err := tx.allocationsOf(ctx, o)
	if err != nil {
		return err
	}
	var changes []levelChange
	type moveOut struct {
		lineID, locationID uuid.UUID
		n                  int
	}
	var outs []moveOut
	type moveIn struct {
		lineID, variantID uuid.UUID
		n                 int
		line              int
	}
	var ins []moveIn
	for i, l := range lines {
		here, elsewhere := 0, 0
		var variantID uuid.UUID
		for _, a := range allocs {
			if a.lineID != l.LineID {
				continue
			}
			variantID = a.variantID
			if a.locationID == locationID {
				here += a.reserved
			} else {
				elsewhere += a.reserved
			}
		}
		need := min(l.Quantity-here, elsewhere)
		if need <= 0 {
			continue
		}
		ins = append(ins, moveIn{lineID: l.LineID, variantID: variantID, n: need, line: i})
		for _, a := range allocs {
			if a.lineID != l.LineID || a.locationID == locationID || a.reserved == 0 || need == 0 {
				continue
			}
			n := min(a.reserved, need)
			need -= n
			outs = append(outs, moveOut{lineID: a.lineID, locationID: a.locationID, n: n})
			changes = append(changes, levelChange{variantID: a.variantID, locationID: a.locationID, reserved: -n})
		}
	}
	if len(ins) == 0 {
		return nil
	}
	variants := make([]uuid.UUID, 0, len(ins))
	for _, in := range ins {
		variants = append(variants, in.variantID)
	}
	if err := tx.openLevels(ctx, o.StoreID, variants, []uuid.UUID{locationID}); err != nil {
		return err
	}
	levels, err := tx.lockLevels(ctx, o.StoreID, variants)
	if err != nil {
		return err
	}
	for _, in := range ins {
		available := 0
		for _, l := range levels {
			if l.VariantID == in.variantID && l.LocationID == locationID {
				available = l.Available()
			}
		}
		if available < in.n {
			return &StockError{Line: in.line, VariantID: in.variantID, Available: available, Requested: in.n}
		}
		changes = append(changes, levelChange{variantID: in.variantID, locationID: locationID, reserved: in.n})
	}
	// What leaves elsewhere is an order_release, what arrives here an
	// order_reserve (decisions §11); both name the shipment that moved them.
	var away, here []levelChange
	for _, c := range changes {
		if c.reserved < 0 {
			away = append(away, c)
		} else {
			here = append(here, c)
		}
	}
	for _, w := range []struct {
		reason  string
		changes []levelChange
	}{{ReasonOrderRelease, away}, {ReasonOrderReserve, here}} {
		if _, err := tx.writeLevelChanges(ctx, o.StoreID, w.changes, movementSource{reason: w.reason, orderID: &o.ID, shipmentID: &shipmentID,
			actor: actor, note: "reservation moved to the shipment's location"}); err != nil {
			return err
		}
	}
	for _, out := range outs {
		if _, err := tx.tx.Exec(ctx, `UPDATE order_allocations SET reserved = reserved - $5
			WHERE store_id = $1 AND order_id = $2 AND line_id = $3 AND location_id = $4`, o.StoreID, o.ID, out.lineID, out.locationID, out.n); err != nil {
			return fmt.Errorf("move allocation: %w", err)
		}
	}
	for _, in := range ins {
		if _, err := tx.tx.Exec(ctx, `INSERT INTO order_allocations AS a (store_id, order_id, line_id, variant_id, location_id, reserved)
			VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (store_id, order_id, line_id, location_id) DO UPDATE SET reserved = a.reserved + EXCLUDED.reserved`,
			o.StoreID, o.ID, in.lineID, in.variantID, locationID, in.n); err != nil {
			return fmt.Errorf("move allocation: %w", err)
		}
	}
	return nil
}

func (tx *Tx) recordShipmentEvent(ctx context.Context, storeID, shipmentID uuid.UUID, e ShipmentEvent) error {
	if tx.deferred != nil {
		tx.deferred.events = append(tx.deferred.events, deferredEvent{storeID: storeID, shipmentID: shipmentID, e: e, createdAt: tx.now()})
		return nil
	}
	if _, err := tx.tx.Exec(ctx, `INSERT INTO shipment_events (store_id, shipment_id, status, occurred_at, source, note, event_id, applied, ignored, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`, storeID, shipmentID, e.Status, e.OccurredAt, e.Source, e.Note, e.EventID,
		e.Applied, e.Ignored, tx.now()); err != nil {
		return fmt.Errorf("record shipment event: %w", err)
	}
	return nil
}

// notifyDispatcher wakes the dispatcher at commit (a waybill to render).
func (tx *Tx) notifyDispatcher(ctx context.Context) error {
	if _, err := tx.tx.Exec(ctx, `SELECT pg_notify('`+OutboxChannel+`', '')`); err != nil {
		return fmt.Errorf("notify dispatcher: %w", err)
	}
	return nil
}

// lockOrderOf holds the order a row of table (shipments, returns,
// order_refunds) belongs to; the caller then holds the row itself.
func (tx *Tx) lockOrderOf(ctx context.Context, table string, storeID, id uuid.UUID) (Order, error) {
	var orderID uuid.UUID
	if err := tx.tx.QueryRow(ctx, `SELECT order_id FROM `+table+` WHERE store_id = $1 AND id = $2`, storeID, id).Scan(&orderID); err != nil {
		return Order{}, notFoundIfNoRows(err, "find "+table+" "+id.String())
	}
	return tx.lockOrder(ctx, storeID, orderID)
}

// lockShipment holds a shipment and its order, order first (the order
// routines' lock order).
func (tx *Tx) lockShipment(ctx context.Context, storeID, id uuid.UUID) (Shipment, Order, error) {
	o, err := tx.lockOrderOf(ctx, "shipments", storeID, id)
	if err != nil {
		return Shipment{}, Order{}, err
	}
	s, err := scanShipment(tx.tx.QueryRow(ctx, `SELECT `+shipmentColumns+` `+shipmentFrom+` WHERE s.store_id = $1 AND s.id = $2 FOR UPDATE OF s`, storeID, id))
	if err != nil {
		return Shipment{}, Order{}, notFoundIfNoRows(err, "find shipment "+id.String())
	}
	return s, o, nil
}

// ShipmentUpdate changes what a shipment says of its carrier (nil: kept).
type ShipmentUpdate struct {
	Carrier        *string
	Service        *string
	TrackingNumber *string
	TrackingURL    *string
	CODAmount      *int64
}

// UpdateShipment changes an open shipment's carrier details; its COD amount
// only before it leaves.
func (tx *Tx) UpdateShipment(ctx context.Context, storeID, id uuid.UUID, upd ShipmentUpdate, actor *uuid.UUID) (Shipment, error) {
	s, o, err := tx.lockShipment(ctx, storeID, id)
	if err != nil {
		return Shipment{}, err
	}
	if s.Status.Final() {
		return Shipment{}, ErrShipmentClosed
	}
	if upd.CODAmount != nil && s.Status.Departed() {
		return Shipment{}, &InvalidError{Field: "cod_amount", Code: "departed", Message: "cannot change once the shipment has left"}
	}
	if err := tx.checkTracking(ctx, storeID, id, upd.TrackingNumber); err != nil {
		return Shipment{}, err
	}
	changed := map[string]any{}
	if upd.CODAmount != nil {
		amount, err := tx.codAmount(ctx, o, id, upd.CODAmount)
		if err != nil {
			return Shipment{}, err
		}
		upd.CODAmount, changed["cod_amount"] = &amount, amount
	}
	for name, v := range map[string]*string{"carrier": upd.Carrier, "service": upd.Service, "tracking_number": upd.TrackingNumber, "tracking_url": upd.TrackingURL} {
		if v != nil {
			changed[name] = *v
		}
	}
	if _, err := tx.tx.Exec(ctx, `UPDATE shipments SET carrier = COALESCE($3, carrier), service = COALESCE($4, service),
			tracking_number = COALESCE($5, tracking_number), tracking_url = COALESCE($6, tracking_url), cod_amount = COALESCE($7, cod_amount),
			cod_state = CASE WHEN $7::bigint IS NULL THEN cod_state WHEN $7 > 0 THEN 'pending' ELSE 'none' END,
			waybill_wanted = waybill_wanted + 1, waybill_status = 'pending', updated_at = $8
		WHERE store_id = $1 AND id = $2`, storeID, id, upd.Carrier, upd.Service, upd.TrackingNumber, upd.TrackingURL, upd.CODAmount, tx.now()); err != nil {
		return Shipment{}, fmt.Errorf("update shipment: %w", err)
	}
	if err := tx.notifyDispatcher(ctx); err != nil {
		return Shipment{}, err
	}
	if s.Status.Departed() && upd.TrackingNumber != nil && o.Status == OrderShipped {
		if _, err := tx.tx.Exec(ctx, `UPDATE orders SET tracking_number = $3 WHERE store_id = $1 AND id = $2`, storeID, o.ID, *upd.TrackingNumber); err != nil {
			return Shipment{}, fmt.Errorf("update order tracking: %w", err)
		}
	}
	if err := tx.addActivity(ctx, o, ActivityShipmentUpdated, "", map[string]any{"shipment_id": id, "number": s.Number, "changed": changed}, actor); err != nil {
		return Shipment{}, err
	}
	return tx.FindShipment(ctx, storeID, id)
}

// ShipmentReport is a status report on a shipment.
type ShipmentReport struct {
	Status       ShipmentStatus
	OccurredAt   time.Time
	CODCollected *int64
	Note         *string
	Source       string
	EventID      *string
}

// ReportShipmentStatus applies a status the merchant reports; an illegal
// move is refused with the moves that are allowed.
func (tx *Tx) ReportShipmentStatus(ctx context.Context, storeID, id uuid.UUID, report ShipmentReport, actor *uuid.UUID) (Shipment, error) {
	s, o, err := tx.lockShipment(ctx, storeID, id)
	if err != nil {
		return Shipment{}, err
	}
	if !ShipmentCanMove(s.Status, report.Status) {
		return Shipment{}, &ShipmentTransitionError{From: s.Status, To: report.Status, AllowedNext: ShipmentAllowedNext(s.Status)}
	}
	report.Source = SourceAPI
	if err := tx.applyShipmentStatus(ctx, &o, &s, report, true, actor); err != nil {
		return Shipment{}, err
	}
	if err := tx.settleOrderShipments(ctx, &o, &s, actor); err != nil {
		return Shipment{}, err
	}
	return tx.FindShipment(ctx, storeID, id)
}

// CancelShipment cancels a shipment that has not left: its pieces are
// unshipped again and keep their reservations.
func (tx *Tx) CancelShipment(ctx context.Context, storeID, id uuid.UUID, reason string, actor *uuid.UUID) (Shipment, error) {
	s, o, err := tx.lockShipment(ctx, storeID, id)
	if err != nil {
		return Shipment{}, err
	}
	if !ShipmentCanMove(s.Status, ShipmentCancelled) {
		return Shipment{}, &ShipmentTransitionError{From: s.Status, To: ShipmentCancelled, AllowedNext: ShipmentAllowedNext(s.Status)}
	}
	note := reason
	if err := tx.applyShipmentStatus(ctx, &o, &s, ShipmentReport{Status: ShipmentCancelled, OccurredAt: tx.now(), Note: &note, Source: SourceAPI}, true, actor); err != nil {
		return Shipment{}, err
	}
	if _, err := tx.tx.Exec(ctx, `UPDATE shipments SET cancel_reason = $3 WHERE store_id = $1 AND id = $2`, storeID, id, reason); err != nil {
		return Shipment{}, fmt.Errorf("cancel shipment: %w", err)
	}
	return tx.FindShipment(ctx, storeID, id)
}

// applyShipmentStatus moves a shipment (the move was checked): its event,
// its dates and cash, its first departure's order_ship movements (when
// moveStock), and a failed attempt's exception. The order's status is
// settled by the caller.
func (tx *Tx) applyShipmentStatus(ctx context.Context, o *Order, s *Shipment, r ShipmentReport, moveStock bool, actor *uuid.UUID) error {
	from, now := s.Status, tx.now()
	s.departedNow = false
	s.Status, s.UpdatedAt = r.Status, now
	firstDeparture := r.Status.Departed() && s.ShippedAt == nil
	if firstDeparture {
		s.ShippedAt, s.departedNow = &r.OccurredAt, true
		if moveStock {
			if err := tx.shipShipment(ctx, *o, *s, actor); err != nil {
				return err
			}
		}
	}
	switch r.Status {
	case ShipmentDelivered:
		s.DeliveredAt = &r.OccurredAt
		collected := s.CODAmount
		if r.CODCollected != nil {
			collected = *r.CODCollected
		}
		s.CODCollected = &collected
		if s.CODAmount > 0 || collected > 0 {
			s.CODState = CODCollected
		}
	case ShipmentCancelled:
		s.CODState = CODNone
	case ShipmentReturnedToSender:
		s.CODState = CODNone
		// Refused at the door: the pieces come back through an approved
		// return, restocked when received. The status endpoints' RETURNED
		// (source system) restocks at once instead, as it always did.
		if r.Source != SourceSystem {
			if err := tx.openRefusedReturn(ctx, *o, *s, actor); err != nil {
				return err
			}
		}
	case ShipmentFailedAttempt:
		if err := tx.FlagOrder(ctx, o.StoreID, o.ID, ReasonDeliveryFailed,
			fmt.Sprintf("Shipment %s: the courier could not deliver", s.Number),
			fmt.Sprintf("الشحنة %s: تعذّر على المندوب التسليم", s.Number),
			map[string]any{"shipment_id": s.ID, "number": s.Number, "note": r.Note}); err != nil {
			return err
		}
	}
	if tx.deferred != nil {
		tx.deferred.shipments[s.ID] = *s
	} else if _, err := tx.tx.Exec(ctx, `UPDATE shipments SET status = $3, shipped_at = $4, delivered_at = $5, cod_collected = $6, cod_state = $7, updated_at = $8
		WHERE store_id = $1 AND id = $2`, s.StoreID, s.ID, s.Status, s.ShippedAt, s.DeliveredAt, s.CODCollected, s.CODState, now); err != nil {
		return fmt.Errorf("move shipment: %w", err)
	}
	if err := tx.recordShipmentEvent(ctx, s.StoreID, s.ID, ShipmentEvent{Status: r.Status, OccurredAt: r.OccurredAt, Source: r.Source,
		Note: r.Note, EventID: r.EventID, Applied: true}); err != nil {
		return err
	}
	kind, data := ActivityShipmentStatus, map[string]any{"shipment_id": s.ID, "number": s.Number, "from": from, "to": r.Status, "source": r.Source}
	if r.Status == ShipmentCancelled {
		kind = ActivityShipmentCancelled
	}
	if s.CODCollected != nil && r.Status == ShipmentDelivered {
		data["cod_collected"] = *s.CODCollected
	}
	return tx.addActivity(ctx, *o, kind, deref(r.Note), data, actor)
}

// linesOfShipment is a shipment's lines: those it was read with, else read.
func (tx *Tx) linesOfShipment(ctx context.Context, s Shipment) ([]ShipmentLine, error) {
	if s.Lines != nil {
		return s.Lines, nil
	}
	rows, err := tx.tx.Query(ctx, `SELECT line_id, quantity FROM shipment_lines WHERE store_id = $1 AND shipment_id = $2`, s.StoreID, s.ID)
	if err != nil {
		return nil, fmt.Errorf("read shipment lines: %w", err)
	}
	lines, err := pgx.CollectRows(rows, pgx.RowToStructByPos[ShipmentLine])
	if err != nil {
		return nil, fmt.Errorf("read shipment lines: %w", err)
	}
	return lines, nil
}

// shipShipment writes a departing shipment's order_ship movements: its
// pieces leave its location (or wherever the rest is reserved).
func (tx *Tx) shipShipment(ctx context.Context, o Order, s Shipment, actor *uuid.UUID) error {
	lines, err := tx.linesOfShipment(ctx, s)
	if err != nil {
		return err
	}
	want := map[uuid.UUID]int{}
	for _, l := range lines {
		want[l.LineID] += l.Quantity
	}
	return tx.moveOrderStockFrom(ctx, o, want, shipUnits, UserActor(actor), &s)
}

// openShipmentsOf holds an order's shipments that have not ended, oldest
// first (held-back shipment states are written first).
func (tx *Tx) openShipmentsOf(ctx context.Context, o Order) ([]Shipment, error) {
	if err := tx.flushShipments(ctx); err != nil {
		return nil, err
	}
	rows, err := tx.tx.Query(ctx, `SELECT `+shipmentColumns+` `+shipmentFrom+`
		WHERE s.store_id = $1 AND s.order_id = $2 AND s.status IN ('label_created', 'in_transit', 'out_for_delivery', 'failed_attempt')
		ORDER BY s.created_at, s.id FOR UPDATE OF s`, o.StoreID, o.ID)
	if err != nil {
		return nil, fmt.Errorf("read open shipments: %w", err)
	}
	open, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (Shipment, error) { return scanShipment(row) })
	if err != nil {
		return nil, fmt.Errorf("read open shipments: %w", err)
	}
	return open, nil
}
