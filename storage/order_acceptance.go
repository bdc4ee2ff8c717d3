package storage

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// AcceptedLine is how many pieces of one line the customer kept.
type AcceptedLine struct {
	LineID           uuid.UUID
	AcceptedQuantity int
}

// Restock is what went back on the shelf.
type Restock struct {
	VariantID uuid.UUID
	Quantity  int
}

// PartialAcceptance is the outcome of a delivery the customer partly refused.
type PartialAcceptance struct {
	Order          Order
	CollectedTotal int64
	Restocked      []Restock
	RefundDue      int64
	AutoMarkedPaid bool
}

// partialFrom are the states a delivery can be partly accepted in.
var partialFrom = []OrderStatus{OrderConfirmed, OrderProcessing, OrderReadyToShip, OrderShipped}

// AcceptedValue is what the kept pieces (quantity less returned) of an
// order are worth, never below zero: each line's kept pieces less their
// share of the line's discount (prorated by quantity, half up, §14), plus
// shipping less what discounts took off it. Orders placed before
// discounts were kept per line keep §10's rule: kept line totals plus
// shipping less the whole discount.
func AcceptedValue(o Order) int64 {
	var value int64
	if o.pricedWithoutLineDiscounts() {
		for _, l := range o.Lines {
			value += int64(l.Quantity-l.ReturnedQuantity) * l.UnitPrice
		}
		return max(value+o.ShippingFee-o.Discount, 0)
	}
	for _, l := range o.Lines {
		kept := l.Quantity - l.ReturnedQuantity
		value += int64(kept)*l.UnitPrice - ProrateDiscount(l.Discount, kept, l.Quantity)
	}
	shipping := o.ShippingFee
	for _, d := range o.Discounts {
		shipping -= d.ShippingAmount
	}
	return max(value+max(shipping, 0), 0)
}

// AcceptPartially delivers an order of which the customer kept part, in one
// transaction: the order becomes DELIVERED, the returned pieces are
// restocked line by line, a cash-on-delivery order expects (and is marked
// paid for) the accepted value, and a prepaid order reports the refund due.
func (tx *Tx) AcceptPartially(ctx context.Context, storeID, orderID uuid.UUID, lines []AcceptedLine, note string, actor *uuid.UUID) (PartialAcceptance, error) {
	o, err := tx.lockOrder(ctx, storeID, orderID)
	if err != nil {
		return PartialAcceptance{}, err
	}
	if !slices.Contains(partialFrom, o.Status) {
		return PartialAcceptance{}, &TransitionError{From: o.Status, To: OrderDelivered, AllowedNext: AllowedNext(o.Status)}
	}
	departed, err := tx.departedPieces(ctx, o)
	if err != nil {
		return PartialAcceptance{}, err
	}
	accepted := map[uuid.UUID]int{}
	byID := map[uuid.UUID]OrderLine{}
	for _, l := range o.Lines {
		byID[l.ID] = l
	}
	for i, a := range lines {
		l, ok := byID[a.LineID]
		if !ok {
			return PartialAcceptance{}, &InvalidError{Field: fmt.Sprintf("lines[%d].line_id", i), Code: "not_found", Message: "is not a line of this order"}
		}
		if a.AcceptedQuantity > l.Quantity-l.ReturnedQuantity {
			return PartialAcceptance{}, &InvalidError{Field: fmt.Sprintf("lines[%d].accepted_quantity", i), Code: "out_of_range",
				Message: fmt.Sprintf("must be between 0 and %d", l.Quantity-l.ReturnedQuantity)}
		}
		accepted[a.LineID] = a.AcceptedQuantity
	}
	result := PartialAcceptance{Restocked: []Restock{}}
	returnedUnits := map[uuid.UUID]int{}
	anyReturned := false
	for i, l := range o.Lines {
		kept, listed := accepted[l.ID]
		if !listed {
			continue
		}
		returned := l.Quantity - l.ReturnedQuantity - kept
		if returned == 0 {
			continue
		}
		anyReturned = true
		o.Lines[i].ReturnedQuantity += returned
		if _, err := tx.tx.Exec(ctx, `UPDATE order_lines SET returned_quantity = $4 WHERE store_id = $1 AND order_id = $2 AND id = $3`,
			storeID, orderID, l.ID, o.Lines[i].ReturnedQuantity); err != nil {
			return PartialAcceptance{}, fmt.Errorf("record returned pieces: %w", err)
		}
		if l.VariantID != nil {
			result.Restocked = append(result.Restocked, Restock{VariantID: *l.VariantID, Quantity: returned})
		}
		returnedUnits[l.ID] = returned
	}
	if err := tx.stockForAcceptance(ctx, o, departed > 0, returnedUnits, UserActor(actor)); err != nil {
		return PartialAcceptance{}, err
	}
	value := AcceptedValue(o)
	if err := tx.deliverForAcceptance(ctx, &o, max(value-o.PaidTotal, 0), actor); err != nil {
		return PartialAcceptance{}, err
	}

	from := o.Status
	o.Status, o.FulfillmentStatus = OrderDelivered, "delivered"
	if anyReturned {
		o.FulfillmentStatus = "partially_delivered"
	}
	if _, err := tx.ResolveAutopilotExceptions(ctx, storeID, orderID); err != nil {
		return PartialAcceptance{}, err
	}
	if _, err := tx.tx.Exec(ctx, `UPDATE orders SET status = $3, fulfillment_status = $4 WHERE store_id = $1 AND id = $2`,
		storeID, orderID, o.Status, o.FulfillmentStatus); err != nil {
		return PartialAcceptance{}, fmt.Errorf("deliver order: %w", err)
	}
	if err := tx.countStatus(ctx, storeID, from, o.Status); err != nil {
		return PartialAcceptance{}, err
	}

	wasPaid := o.PaymentStatus == PaymentPaid
	if o.PaymentMethod == "cod" {
		// The courier collects the cash part: gift cards paid the rest (§19).
		cards, err := tx.giftCardPaid(ctx, storeID, orderID)
		if err != nil {
			return PartialAcceptance{}, err
		}
		o.CollectedTotal, o.CollectibleTotal = max(value-cards, 0), value
		o.RefundDue = max(o.PaidTotal-value, 0)
		if !wasPaid {
			if err := tx.credit(ctx, &o, "partial_acceptance", nil, o.BalanceDue(), actor); err != nil {
				return PartialAcceptance{}, err
			}
		}
	} else {
		// Prepaid: no cash at the door. Paid in full, the difference is due
		// back; not yet paid, only the kept pieces remain to be paid.
		o.CollectedTotal = 0
		if !wasPaid {
			o.CollectibleTotal = value
		}
		o.RefundDue = max(o.PaidTotal-value, 0)
	}
	if err := tx.addActivity(ctx, o, ActivityStatusChanged, note, map[string]any{"from": from, "to": o.Status, "partial_acceptance": true,
		"accepted_value": value, "restocked": result.Restocked}, actor); err != nil {
		return PartialAcceptance{}, err
	}
	if err := tx.emitStatusChanged(ctx, o, from); err != nil {
		return PartialAcceptance{}, err
	}
	if err := tx.settlePayment(ctx, &o, "partial_acceptance", actor); err != nil {
		return PartialAcceptance{}, err
	}
	if err := tx.correctInvoice(ctx, o, InvoiceReasonPartialAcceptance, nil); err != nil {
		return PartialAcceptance{}, err
	}
	result.AutoMarkedPaid = !wasPaid && o.PaymentStatus == PaymentPaid
	result.Order, result.CollectedTotal, result.RefundDue = o, o.CollectedTotal, o.RefundDue
	return result, nil
}

// stockForAcceptance settles the stock of a partial acceptance, shipment by
// shipment, each naming itself on its movements. Pieces of a shipped order
// came back: they are restocked where they left from. Before shipping, the
// kept pieces leave the building now with the labels the acceptance
// delivers, and the refused ones were never gone: their reservation is
// released (the order's, no shipment took them).
func (tx *Tx) stockForAcceptance(ctx context.Context, o Order, shipped bool, returned map[uuid.UUID]int, actor Actor) error {
	shipments, err := tx.acceptanceShipments(ctx, o, shipped)
	if err != nil {
		return err
	}
	// Every move below locks the variants it touches, one after another;
	// holding all of the order's first, in the one lock order, keeps a later
	// move from locking a variant after an earlier one's levels.
	var ids []uuid.UUID
	for _, l := range o.Lines {
		if l.VariantID != nil {
			ids = append(ids, *l.VariantID)
		}
	}
	if _, err := tx.lockVariants(ctx, o.StoreID, ids); err != nil {
		return err
	}
	if _, err := tx.lockLevels(ctx, o.StoreID, ids); err != nil {
		return err
	}
	if shipped {
		return tx.moveShipmentsStock(ctx, o, shipments, returned, restockUnits, actor)
	}
	if err := tx.moveOrderStock(ctx, o, returned, releaseUnits, actor); err != nil {
		return err
	}
	return tx.moveShipmentsStock(ctx, o, shipments, nil, shipUnits, actor)
}

// acceptanceShipments are the shipments whose pieces a partial acceptance
// settles, with their lines: the departed ones (those still on the road
// first) when pieces left, else the labels not yet gone.
func (tx *Tx) acceptanceShipments(ctx context.Context, o Order, departed bool) ([]Shipment, error) {
	rows, err := tx.tx.Query(ctx, `SELECT s.id, s.location_id, l.line_id, l.quantity
		FROM shipments s JOIN shipment_lines l ON l.store_id = s.store_id AND l.shipment_id = s.id
		WHERE s.store_id = $1 AND s.order_id = $2 AND s.status <> 'cancelled' AND (s.shipped_at IS NOT NULL) = $3
		ORDER BY s.status IN ('delivered', 'returned_to_sender'), s.created_at, s.id, l.line_id`, o.StoreID, o.ID, departed)
	if err != nil {
		return nil, fmt.Errorf("read accepted shipments: %w", err)
	}
	var (
		shipments  []Shipment
		id         uuid.UUID
		locationID *uuid.UUID
		line       ShipmentLine
	)
	if _, err := pgx.ForEachRow(rows, []any{&id, &locationID, &line.LineID, &line.Quantity}, func() error {
		if len(shipments) == 0 || shipments[len(shipments)-1].ID != id {
			shipments = append(shipments, Shipment{ID: id, StoreID: o.StoreID, OrderID: o.ID, LocationID: locationID})
		}
		last := &shipments[len(shipments)-1]
		last.Lines = append(last.Lines, line)
		return nil
	}); err != nil {
		return nil, fmt.Errorf("read accepted shipments: %w", err)
	}
	return shipments, nil
}

// moveShipmentsStock moves an order's units shipment by shipment: each
// moves what want asks of the lines it carries, up to its quantities, and
// names itself on its movements; what no shipment carries moves as the
// order's alone. want nil means all the order holds. The caller holds the
// order's variants and levels (stockForAcceptance): each shipment's move
// locks its own.
func (tx *Tx) moveShipmentsStock(ctx context.Context, o Order, shipments []Shipment, want map[uuid.UUID]int, move stockMove, actor Actor) error {
	left := maps.Clone(want)
	for i := range shipments {
		mine := map[uuid.UUID]int{}
		for _, l := range shipments[i].Lines {
			n := l.Quantity
			if want != nil {
				n = min(n, left[l.LineID])
				left[l.LineID] -= n
			}
			if n > 0 {
				mine[l.LineID] += n
			}
		}
		if len(mine) == 0 {
			continue
		}
		if err := tx.moveOrderStockFrom(ctx, o, mine, move, actor, &shipments[i]); err != nil {
			return err
		}
	}
	if want != nil {
		maps.DeleteFunc(left, func(_ uuid.UUID, n int) bool { return n <= 0 })
		if len(left) == 0 {
			return nil
		}
	}
	return tx.moveOrderStock(ctx, o, left, move, actor)
}

// departedPieces counts the pieces of an order that left in shipments. A
// partial acceptance settles either pieces that all left or pieces that all
// stayed: both at once is ErrUnshippedQuantity (decisions §12).
func (tx *Tx) departedPieces(ctx context.Context, o Order) (int, error) {
	var departed, live int
	if err := tx.tx.QueryRow(ctx, `SELECT COALESCE(sum(l.quantity) FILTER (WHERE s.shipped_at IS NOT NULL), 0)::int,
			COALESCE(sum(l.quantity), 0)::int
		FROM shipment_lines l JOIN shipments s ON s.store_id = l.store_id AND s.id = l.shipment_id
		WHERE l.store_id = $1 AND s.order_id = $2 AND s.status <> 'cancelled'`, o.StoreID, o.ID).Scan(&departed, &live); err != nil {
		return 0, fmt.Errorf("count departed pieces: %w", err)
	}
	pieces := 0
	for _, l := range o.Lines {
		pieces += l.Quantity
	}
	if departed > 0 && departed < pieces {
		return 0, ErrUnshippedQuantity
	}
	return departed, nil
}

// deliverForAcceptance delivers the order's open shipments (their stock was
// settled by the acceptance), sharing the cash collected among them.
func (tx *Tx) deliverForAcceptance(ctx context.Context, o *Order, cash int64, actor *uuid.UUID) error {
	open, err := tx.openShipmentsOf(ctx, *o)
	if err != nil {
		return err
	}
	if o.PaymentMethod != "cod" {
		cash = 0
	}
	for i := range open {
		collected := min(open[i].CODAmount, cash)
		if i == len(open)-1 {
			collected = cash
		}
		cash -= collected
		if err := tx.applyShipmentStatus(ctx, o, &open[i], ShipmentReport{Status: ShipmentDelivered, OccurredAt: tx.now(),
			CODCollected: &collected, Source: SourceSystem}, false, actor); err != nil {
			return err
		}
	}
	return nil
}
