package storage

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	sq "github.com/Masterminds/squirrel"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// Returns (decisions §13's shape). Fulfillment opens them so far: a
// shipment returned to sender opens an approved return of its pieces
// (refused_delivery), and receiving it is the only restock of those pieces.

// ReturnStatus is where a return is.
type ReturnStatus string

// Return statuses.
const (
	ReturnRequested ReturnStatus = "requested"
	ReturnApproved  ReturnStatus = "approved"
	ReturnReceived  ReturnStatus = "received"
	ReturnDeclined  ReturnStatus = "declined"
	ReturnCancelled ReturnStatus = "cancelled"
)

// ReturnStatuses lists every return status.
var ReturnStatuses = []ReturnStatus{ReturnRequested, ReturnApproved, ReturnReceived, ReturnDeclined, ReturnCancelled}

// ReturnAllowedNext lists the statuses a return may move to (§13).
func ReturnAllowedNext(s ReturnStatus) []ReturnStatus {
	switch s {
	case ReturnRequested:
		return []ReturnStatus{ReturnApproved, ReturnDeclined, ReturnCancelled}
	case ReturnApproved:
		return []ReturnStatus{ReturnReceived, ReturnCancelled}
	}
	return []ReturnStatus{}
}

// ReasonRefusedDelivery is the system's return reason for a shipment the
// customer refused.
const ReasonRefusedDelivery = "refused_delivery"

// Order activity kinds of returns.
const (
	ActivityReturnRequested ActivityKind = "return_requested"
	ActivityReturnApproved  ActivityKind = "return_approved"
	ActivityReturnDeclined  ActivityKind = "return_declined"
	ActivityReturnCancelled ActivityKind = "return_cancelled"
	ActivityReturnReceived  ActivityKind = "return_received"
)

// ReturnTransitionError refuses a return's move and says which are allowed.
type ReturnTransitionError struct {
	From, To    ReturnStatus
	AllowedNext []ReturnStatus
}

func (e *ReturnTransitionError) Error() string {
	return fmt.Sprintf("a return cannot move from %s to %s", e.From, e.To)
}

// Return is goods coming back from an order.
type Return struct {
	ID              uuid.UUID
	StoreID         uuid.UUID
	OrderID         uuid.UUID
	ShipmentID      *uuid.UUID
	Status          ReturnStatus
	TrackingNumber  *string
	SuggestedRefund int64
	Lines           []ReturnLine
	CreatedAt       time.Time
	UpdatedAt       time.Time
}

// ReturnLine is one order line's pieces in a return.
type ReturnLine struct {
	LineID            uuid.UUID
	Quantity          int
	Reason            string
	Note              *string
	ReceivedQuantity  int
	RestockedQuantity int
	LocationID        *uuid.UUID
}

const returnColumns = `id, store_id, order_id, shipment_id, status, tracking_number, suggested_refund, created_at, updated_at`

func scanReturn(row pgx.Row) (Return, error) {
	var r Return
	err := row.Scan(&r.ID, &r.StoreID, &r.OrderID, &r.ShipmentID, &r.Status, &r.TrackingNumber, &r.SuggestedRefund, &r.CreatedAt, &r.UpdatedAt)
	return r, err
}

// LineValue is what pieces of a line are worth less their pro-rata share
// of the order's discount, rounded down: unit price × pieces −
// ⌊discount × that ÷ subtotal⌋, never below zero. It is the rule for
// orders placed before discounts were kept per line (see lineValue).
func LineValue(unitPrice int64, pieces int, subtotal, discount int64) int64 {
	value := unitPrice * int64(pieces)
	if subtotal <= 0 || discount <= 0 {
		return value
	}
	return max(value-discount*value/subtotal, 0)
}

// lineValue is what pieces of an order's line are worth less their share
// of the discount: the line's own discount prorated by quantity, half up
// (§14); orders priced before lines kept their discount keep §13's
// whole-order rule (LineValue).
func lineValue(o Order, l OrderLine, pieces int) int64 {
	if o.pricedWithoutLineDiscounts() {
		return LineValue(l.UnitPrice, pieces, o.Subtotal, o.Discount)
	}
	return max(l.UnitPrice*int64(pieces)-ProrateDiscount(l.Discount, pieces, l.Quantity), 0)
}

// pricedWithoutLineDiscounts reports an order placed before discounts were
// kept per line (a discount, and no discounts recorded).
func (o Order) pricedWithoutLineDiscounts() bool { return o.Discount > 0 && len(o.Discounts) == 0 }

// openRefusedReturn opens the approved return of a shipment returned to
// sender: its pieces, at its location, reason refused_delivery.
func (tx *Tx) openRefusedReturn(ctx context.Context, o Order, s Shipment, actor *uuid.UUID) error {
	lines, err := tx.linesOfShipment(ctx, s)
	if err != nil {
		return err
	}
	byID := map[uuid.UUID]OrderLine{}
	for _, l := range o.Lines {
		byID[l.ID] = l
	}
	r := Return{ID: NewID(), StoreID: o.StoreID, OrderID: o.ID, ShipmentID: &s.ID, Status: ReturnApproved, TrackingNumber: s.TrackingNumber,
		CreatedAt: tx.now()}
	r.UpdatedAt = r.CreatedAt
	ids, qty, positions := make([]uuid.UUID, len(lines)), make([]int32, len(lines)), make([]int32, len(lines))
	for i, l := range lines {
		r.SuggestedRefund += lineValue(o, byID[l.LineID], l.Quantity)
		ids[i], qty[i], positions[i] = l.LineID, int32(l.Quantity), int32(i)
	}
	if _, err := tx.tx.Exec(ctx, `INSERT INTO returns (`+returnColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
		r.ID, r.StoreID, r.OrderID, r.ShipmentID, r.Status, r.TrackingNumber, r.SuggestedRefund, r.CreatedAt, r.UpdatedAt); err != nil {
		return fmt.Errorf("open return: %w", err)
	}
	if _, err := tx.tx.Exec(ctx, `INSERT INTO return_lines (store_id, return_id, line_id, position, quantity, reason, location_id)
		SELECT $1, $2, u.line_id, u.position, u.n, $6, $7 FROM unnest($3::uuid[], $4::int[], $5::int[]) AS u(line_id, n, position)`,
		r.StoreID, r.ID, ids, qty, positions, ReasonRefusedDelivery, s.LocationID); err != nil {
		return fmt.Errorf("open return lines: %w", err)
	}
	return tx.addActivity(ctx, o, ActivityReturnApproved, "", map[string]any{"return_id": r.ID, "reason": ReasonRefusedDelivery,
		"shipment_id": s.ID, "number": s.Number}, actor)
}

// withReturnLines reads the lines of returns.
func (r reader) withReturnLines(ctx context.Context, storeID uuid.UUID, list []Return) error {
	if len(list) == 0 {
		return nil
	}
	index := map[uuid.UUID]int{}
	ids := make([]uuid.UUID, len(list))
	for i := range list {
		index[list[i].ID], ids[i] = i, list[i].ID
		list[i].Lines = []ReturnLine{}
	}
	rows, err := r.q.Query(ctx, `SELECT return_id, line_id, quantity, reason, note, received_quantity, restocked_quantity, location_id
		FROM return_lines WHERE store_id = $1 AND return_id = ANY($2) ORDER BY return_id, position`, storeID, ids)
	if err != nil {
		return fmt.Errorf("read return lines: %w", err)
	}
	var (
		returnID uuid.UUID
		l        ReturnLine
	)
	_, err = pgx.ForEachRow(rows, []any{&returnID, &l.LineID, &l.Quantity, &l.Reason, &l.Note, &l.ReceivedQuantity, &l.RestockedQuantity, &l.LocationID},
		func() error {
			i := index[returnID]
			list[i].Lines = append(list[i].Lines, l)
			return nil
		})
	if err != nil {
		return fmt.Errorf("read return lines: %w", err)
	}
	return nil
}

// FindReturn reads one return with its lines.
func (r reader) FindReturn(ctx context.Context, storeID, id uuid.UUID) (Return, error) {
	ret, err := scanReturn(r.q.QueryRow(ctx, `SELECT `+returnColumns+` FROM returns WHERE store_id = $1 AND id = $2`, storeID, id))
	if err != nil {
		return Return{}, notFoundIfNoRows(err, "find return "+id.String())
	}
	list := []Return{ret}
	return list[0], r.withReturnLines(ctx, storeID, list)
}

// ReturnFilter narrows a return list.
type ReturnFilter struct {
	OrderID *uuid.UUID
	Status  *ReturnStatus
	Page    Page
}

// FindReturns lists a store's returns, newest first.
func (r reader) FindReturns(ctx context.Context, storeID uuid.UUID, f ReturnFilter) ([]Return, int, error) {
	eq := sq.Eq{"store_id": storeID}
	if f.OrderID != nil {
		eq["order_id"] = *f.OrderID
	}
	if f.Status != nil {
		eq["status"] = *f.Status
	}
	cond, args, err := dollarSQL(eq)
	if err != nil {
		return nil, 0, err
	}
	list, total, err := findPage(ctx, r, "returns", listQuery{columns: returnColumns, from: "FROM returns WHERE " + cond, args: args,
		orderBy: "created_at DESC, id DESC"}, f.Page.Limit, int(f.Page.Offset()), func(row pgx.CollectableRow) (Return, error) { return scanReturn(row) })
	if err != nil {
		return nil, 0, err
	}
	return list, total, r.withReturnLines(ctx, storeID, list)
}

// lockReturn holds a return and its order, order first.
func (tx *Tx) lockReturn(ctx context.Context, storeID, id uuid.UUID) (Return, Order, error) {
	o, err := tx.lockOrderOf(ctx, "returns", storeID, id)
	if err != nil {
		return Return{}, Order{}, err
	}
	ret, err := scanReturn(tx.tx.QueryRow(ctx, `SELECT `+returnColumns+` FROM returns WHERE store_id = $1 AND id = $2 FOR UPDATE`, storeID, id))
	if err != nil {
		return Return{}, Order{}, notFoundIfNoRows(err, "find return "+id.String())
	}
	return ret, o, nil
}

// ReceivedLine is what came back of one return line.
type ReceivedLine struct {
	LineID           uuid.UUID
	ReceivedQuantity int
	Restock          bool
	LocationID       *uuid.UUID
}

// ReceiveReturn records an approved return's goods as received (§13):
// restocked lines write return_restock at their location (default the
// shipment's origin), the order lines' returned_quantity rises, and a
// DELIVERED order whose every piece is back becomes RETURNED.
func (tx *Tx) ReceiveReturn(ctx context.Context, storeID, id uuid.UUID, received []ReceivedLine, actor *uuid.UUID) (Return, error) {
	ret, o, err := tx.lockReturn(ctx, storeID, id)
	if err != nil {
		return Return{}, err
	}
	if ret.Status != ReturnApproved {
		return Return{}, &ReturnTransitionError{From: ret.Status, To: ReturnReceived, AllowedNext: ReturnAllowedNext(ret.Status)}
	}
	list := []Return{ret}
	if err := tx.withReturnLines(ctx, storeID, list); err != nil {
		return Return{}, err
	}
	ret = list[0]
	lines := map[uuid.UUID]*ReturnLine{}
	for i := range ret.Lines {
		lines[ret.Lines[i].LineID] = &ret.Lines[i]
	}
	variants := map[uuid.UUID]*uuid.UUID{}
	for _, l := range o.Lines {
		variants[l.ID] = l.VariantID
	}
	seen := map[uuid.UUID]bool{}
	var changes []levelChange
	takeBack := map[uuid.UUID]int{}
	for i, in := range received {
		l, ok := lines[in.LineID]
		switch {
		case !ok:
			return Return{}, &InvalidError{Field: fmt.Sprintf("lines[%d].line_id", i), Code: "not_found", Message: "is not a line of this return"}
		case seen[in.LineID]:
			return Return{}, &InvalidError{Field: fmt.Sprintf("lines[%d].line_id", i), Code: "duplicate", Message: "is listed twice"}
		case in.ReceivedQuantity < 0 || in.ReceivedQuantity > l.Quantity:
			return Return{}, &InvalidError{Field: fmt.Sprintf("lines[%d].received_quantity", i), Code: "out_of_range",
				Message: fmt.Sprintf("must be between 0 and %d", l.Quantity)}
		}
		seen[in.LineID] = true
		location := l.LocationID
		if in.LocationID != nil {
			var exists bool
			if err := tx.tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM locations WHERE store_id = $1 AND id = $2)`, storeID, *in.LocationID).Scan(&exists); err != nil {
				return Return{}, fmt.Errorf("find location: %w", err)
			}
			if !exists {
				return Return{}, &InvalidError{Field: fmt.Sprintf("lines[%d].location_id", i), Code: "not_found", Message: "is not a location of this store"}
			}
			location = in.LocationID
		}
		l.ReceivedQuantity = in.ReceivedQuantity
		if in.Restock && in.ReceivedQuantity > 0 && variants[in.LineID] != nil {
			if location == nil {
				def, err := tx.defaultLocationID(ctx, storeID)
				if err != nil {
					return Return{}, err
				}
				location = &def
			}
			l.RestockedQuantity, l.LocationID = in.ReceivedQuantity, location
			takeBack[in.LineID] += in.ReceivedQuantity
			changes = append(changes, levelChange{variantID: *variants[in.LineID], locationID: *location, onHand: in.ReceivedQuantity})
		}
	}
	if len(changes) > 0 {
		if err := tx.restockReturned(ctx, o, ret, takeBack, changes, UserActor(actor)); err != nil {
			return Return{}, err
		}
	}
	returnedNow := 0
	for _, l := range ret.Lines {
		if _, err := tx.tx.Exec(ctx, `UPDATE return_lines SET received_quantity = $4, restocked_quantity = $5, location_id = $6
			WHERE store_id = $1 AND return_id = $2 AND line_id = $3`, storeID, id, l.LineID, l.ReceivedQuantity, l.RestockedQuantity, l.LocationID); err != nil {
			return Return{}, fmt.Errorf("receive return line: %w", err)
		}
		if l.ReceivedQuantity > 0 {
			returnedNow += l.ReceivedQuantity
			if _, err := tx.tx.Exec(ctx, `UPDATE order_lines SET returned_quantity = LEAST(quantity, returned_quantity + $4)
				WHERE store_id = $1 AND order_id = $2 AND id = $3`, storeID, o.ID, l.LineID, l.ReceivedQuantity); err != nil {
				return Return{}, fmt.Errorf("count returned pieces: %w", err)
			}
			for i := range o.Lines {
				if o.Lines[i].ID == l.LineID {
					o.Lines[i].ReturnedQuantity = min(o.Lines[i].Quantity, o.Lines[i].ReturnedQuantity+l.ReceivedQuantity)
				}
			}
		}
	}
	ret.Status, ret.UpdatedAt = ReturnReceived, tx.now()
	if _, err := tx.tx.Exec(ctx, `UPDATE returns SET status = 'received', updated_at = $3 WHERE store_id = $1 AND id = $2`, storeID, id, ret.UpdatedAt); err != nil {
		return Return{}, fmt.Errorf("receive return: %w", err)
	}
	restocked := 0
	for _, n := range takeBack {
		restocked += n
	}
	if err := tx.addActivity(ctx, o, ActivityReturnReceived, "", map[string]any{"return_id": id, "received": returnedNow, "restocked": restocked}, actor); err != nil {
		return Return{}, err
	}
	if o.Status == OrderDelivered {
		all := true
		for _, l := range o.Lines {
			all = all && l.ReturnedQuantity >= l.Quantity
		}
		if all {
			if err := tx.moveOrder(ctx, &o, OrderReturned, nil, "", actor); err != nil {
				return Return{}, err
			}
		}
	}
	return ret, nil
}

// restockReturned puts a return's received pieces back on hand (changes)
// and takes them off the order's shipped allocations, the shipment's origin
// first. Its movements name the return, and the shipment it came back from
// when it was refused at the door.
func (tx *Tx) restockReturned(ctx context.Context, o Order, ret Return, takeBack map[uuid.UUID]int, changes []levelChange, actor Actor) error {
	allocs, err := tx.allocationsOf(ctx, o)
	if err != nil {
		return err
	}
	for _, a := range allocs {
		n := min(a.shipped, takeBack[a.lineID])
		if n <= 0 {
			continue
		}
		takeBack[a.lineID] -= n
		if _, err := tx.tx.Exec(ctx, `UPDATE order_allocations SET shipped = shipped - $5
			WHERE store_id = $1 AND order_id = $2 AND line_id = $3 AND location_id = $4`, o.StoreID, o.ID, a.lineID, a.locationID, n); err != nil {
			return fmt.Errorf("take back shipped units: %w", err)
		}
	}
	ids, locations := make([]uuid.UUID, 0, len(changes)), make([]uuid.UUID, 0, len(changes))
	for _, c := range changes {
		ids, locations = append(ids, c.variantID), append(locations, c.locationID)
	}
	if err := tx.openLevels(ctx, o.StoreID, ids, locations); err != nil {
		return err
	}
	exists, err := tx.lockVariants(ctx, o.StoreID, ids)
	if err != nil {
		return err
	}
	kept := changes[:0]
	for _, c := range changes {
		if exists[c.variantID] {
			kept = append(kept, c)
		}
	}
	if _, err := tx.lockLevels(ctx, o.StoreID, ids); err != nil {
		return err
	}
	_, err = tx.writeLevelChanges(ctx, o.StoreID, kept, movementSource{reason: ReasonReturnRestock, orderID: &o.ID, shipmentID: ret.ShipmentID,
		returnID: &ret.ID, actor: actor})
	return err
}

// ReturnReasons are the reasons a return line may give (§13);
// refused_delivery is the system's.
var ReturnReasons = []string{"damaged", "defective", "wrong_item", "not_as_described", "size_or_fit", "changed_mind", "late_delivery",
	ReasonRefusedDelivery, "other"}

// ErrOrderNotReturnable refuses a return on an order whose goods have not
// left (or that was cancelled).
var ErrOrderNotReturnable = errors.New("order not returnable")

// NewReturnLine is one line of a requested return.
type NewReturnLine struct {
	LineID   uuid.UUID
	Quantity int
	Reason   string
	Note     *string
}

// returnable is how many pieces of each line may still be returned:
// delivered, less returned, less what open returns already ask for.
func (tx *Tx) returnable(ctx context.Context, o Order) (map[uuid.UUID]int, error) {
	left := map[uuid.UUID]int{}
	for _, l := range o.Lines {
		left[l.ID] = -l.ReturnedQuantity
	}
	rows, err := tx.tx.Query(ctx, `SELECT l.line_id, sum(l.quantity)::int FROM shipment_lines l
			JOIN shipments s ON s.store_id = l.store_id AND s.id = l.shipment_id
		WHERE l.store_id = $1 AND s.order_id = $2 AND s.status = 'delivered' GROUP BY l.line_id
		UNION ALL
		SELECT rl.line_id, -sum(rl.quantity - rl.received_quantity)::int FROM return_lines rl
			JOIN returns r ON r.store_id = rl.store_id AND r.id = rl.return_id
		WHERE rl.store_id = $1 AND r.order_id = $2 AND r.status IN ('requested', 'approved') GROUP BY rl.line_id`, o.StoreID, o.ID)
	if err != nil {
		return nil, fmt.Errorf("count returnable pieces: %w", err)
	}
	var (
		lineID uuid.UUID
		n      int
	)
	if _, err := pgx.ForEachRow(rows, []any{&lineID, &n}, func() error {
		left[lineID] += n
		return nil
	}); err != nil {
		return nil, fmt.Errorf("count returnable pieces: %w", err)
	}
	for id, n := range left {
		left[id] = max(n, 0)
	}
	return left, nil
}

// RequestReturn opens a return on an order's delivered pieces (§13),
// approved at once with approve.
func (tx *Tx) RequestReturn(ctx context.Context, storeID, orderID uuid.UUID, lines []NewReturnLine, approve bool, actor *uuid.UUID) (Return, error) {
	o, err := tx.lockOrder(ctx, storeID, orderID)
	if err != nil {
		return Return{}, err
	}
	switch o.Status {
	case OrderShipped, OrderDelivered, OrderReturned:
	default:
		return Return{}, fmt.Errorf("return a %s order: %w", o.Status, ErrOrderNotReturnable)
	}
	left, err := tx.returnable(ctx, o)
	if err != nil {
		return Return{}, err
	}
	byID := map[uuid.UUID]OrderLine{}
	for _, l := range o.Lines {
		byID[l.ID] = l
	}
	r := Return{ID: NewID(), StoreID: storeID, OrderID: orderID, Status: ReturnRequested, CreatedAt: tx.now()}
	if approve {
		r.Status = ReturnApproved
	}
	r.UpdatedAt = r.CreatedAt
	seen := map[uuid.UUID]bool{}
	for i, l := range lines {
		line, ok := byID[l.LineID]
		switch {
		case !ok:
			return Return{}, &InvalidError{Field: fmt.Sprintf("lines[%d].line_id", i), Code: "not_found", Message: "is not a line of this order"}
		case seen[l.LineID]:
			return Return{}, &InvalidError{Field: fmt.Sprintf("lines[%d].line_id", i), Code: "duplicate", Message: "is listed twice"}
		case l.Quantity < 1 || l.Quantity > left[l.LineID]:
			return Return{}, &InvalidError{Field: fmt.Sprintf("lines[%d].quantity", i), Code: "exceeds_returnable",
				Message: fmt.Sprintf("must be between 1 and %d (delivered, less returned and open returns)", left[l.LineID])}
		}
		seen[l.LineID] = true
		r.SuggestedRefund += lineValue(o, line, l.Quantity)
		r.Lines = append(r.Lines, ReturnLine{LineID: l.LineID, Quantity: l.Quantity, Reason: l.Reason, Note: l.Note})
	}
	if _, err := tx.tx.Exec(ctx, `INSERT INTO returns (`+returnColumns+`) VALUES ($1, $2, $3, NULL, $4, NULL, $5, $6, $6)`,
		r.ID, storeID, orderID, r.Status, r.SuggestedRefund, r.CreatedAt); err != nil {
		return Return{}, fmt.Errorf("request return: %w", err)
	}
	for i, l := range r.Lines {
		if _, err := tx.tx.Exec(ctx, `INSERT INTO return_lines (store_id, return_id, line_id, position, quantity, reason, note)
			VALUES ($1, $2, $3, $4, $5, $6, $7)`, storeID, r.ID, l.LineID, i, l.Quantity, l.Reason, l.Note); err != nil {
			return Return{}, fmt.Errorf("request return line: %w", err)
		}
	}
	// Approved at once is still two steps on the timeline: requested, approved.
	if err := tx.addActivity(ctx, o, ActivityReturnRequested, "", map[string]any{"return_id": r.ID, "lines": r.Lines}, actor); err != nil {
		return Return{}, err
	}
	if approve {
		if err := tx.addActivity(ctx, o, ActivityReturnApproved, "", map[string]any{"return_id": r.ID}, actor); err != nil {
			return Return{}, err
		}
	}
	return tx.FindReturn(ctx, storeID, r.ID)
}

// MoveReturn approves (with a tracking number), declines or cancels a
// return along §13's machine, with its reason.
func (tx *Tx) MoveReturn(ctx context.Context, storeID, id uuid.UUID, to ReturnStatus, tracking *string, reason string, actor *uuid.UUID) (Return, error) {
	ret, o, err := tx.lockReturn(ctx, storeID, id)
	if err != nil {
		return Return{}, err
	}
	if !slices.Contains(ReturnAllowedNext(ret.Status), to) || to == ReturnReceived {
		return Return{}, &ReturnTransitionError{From: ret.Status, To: to, AllowedNext: ReturnAllowedNext(ret.Status)}
	}
	if _, err := tx.tx.Exec(ctx, `UPDATE returns SET status = $3, tracking_number = COALESCE($4, tracking_number), updated_at = $5
		WHERE store_id = $1 AND id = $2`, storeID, id, to, tracking, tx.now()); err != nil {
		return Return{}, fmt.Errorf("move return: %w", err)
	}
	kind := map[ReturnStatus]ActivityKind{ReturnApproved: ActivityReturnApproved, ReturnDeclined: ActivityReturnDeclined,
		ReturnCancelled: ActivityReturnCancelled}[to]
	if err := tx.addActivity(ctx, o, kind, reason, map[string]any{"return_id": id, "from": ret.Status, "to": to}, actor); err != nil {
		return Return{}, err
	}
	return tx.FindReturn(ctx, storeID, id)
}
