package storage

import (
	"context"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// OrderStatus is where an order is in its life (decisions §4).
type OrderStatus string

// Order statuses.
const (
	OrderDraft       OrderStatus = "DRAFT"
	OrderPending     OrderStatus = "PENDING"
	OrderConfirmed   OrderStatus = "CONFIRMED"
	OrderProcessing  OrderStatus = "PROCESSING"
	OrderReadyToShip OrderStatus = "READY_TO_SHIP"
	OrderShipped     OrderStatus = "SHIPPED"
	OrderDelivered   OrderStatus = "DELIVERED"
	OrderReturned    OrderStatus = "RETURNED"
	OrderCancelled   OrderStatus = "CANCELLED"
)

// OrderStatuses lists every status in lifecycle order.
var OrderStatuses = []OrderStatus{OrderDraft, OrderPending, OrderConfirmed, OrderProcessing, OrderReadyToShip,
	OrderShipped, OrderDelivered, OrderReturned, OrderCancelled}

// forwardPath is the line along which forward skips are allowed.
var forwardPath = []OrderStatus{OrderPending, OrderConfirmed, OrderProcessing, OrderReadyToShip, OrderShipped}

// AllowedNext lists the statuses the status endpoints may move an order to
// from status (decisions §4): forward along PENDING…SHIPPED (skips allowed),
// READY_TO_SHIP back to PROCESSING, SHIPPED to DELIVERED or RETURNED,
// DELIVERED to RETURNED, and CANCELLED from any non-terminal status before
// shipping. A DRAFT leaves only through conversion.
func AllowedNext(status OrderStatus) []OrderStatus {
	if status == OrderDraft {
		return []OrderStatus{}
	}
	next := []OrderStatus{}
	for i, s := range forwardPath {
		if s != status {
			continue
		}
		next = append(next, forwardPath[i+1:]...)
	}
	switch status {
	case OrderReadyToShip:
		next = append(next, OrderProcessing)
	case OrderShipped:
		next = append(next, OrderDelivered, OrderReturned)
	case OrderDelivered:
		next = append(next, OrderReturned)
	}
	if Cancellable(status) {
		next = append(next, OrderCancelled)
	}
	return next
}

// Cancellable reports whether an order in status may be cancelled: not once
// shipped, delivered, returned or already cancelled. A DRAFT is cancelled
// silently by DELETE.
func Cancellable(status OrderStatus) bool {
	switch status {
	case OrderPending, OrderConfirmed, OrderProcessing, OrderReadyToShip, OrderDraft:
		return true
	}
	return false
}

// CanMove reports whether the status endpoints may move from to to.
func CanMove(from, to OrderStatus) bool {
	for _, s := range AllowedNext(from) {
		if s == to {
			return true
		}
	}
	return false
}

// TransitionError refuses a status move and says which moves are allowed.
type TransitionError struct {
	From, To    OrderStatus
	AllowedNext []OrderStatus
}

// countStatus moves one order between status counters (from "" when new,
// to "" when leaving the counts). Drafts are never counted.
func (tx *Tx) countStatus(ctx context.Context, storeID uuid.UUID, from, to OrderStatus) error {
	batch := &pgx.Batch{}
	if queueCountStatus(batch, storeID, from, to); batch.Len() == 0 {
		return nil
	}
	if err := tx.tx.SendBatch(ctx, batch).Close(); err != nil {
		return fmt.Errorf("count order status: %w", err)
	}
	return nil
}

// countedStatus is the counter a status counts in: none ("") for a draft.
func countedStatus(s OrderStatus) OrderStatus {
	if s == OrderDraft {
		return ""
	}
	return s
}

// queueCountStatus is countStatus as one statement of a batch, for both
// counters (none when the counts do not change).
func queueCountStatus(batch *pgx.Batch, storeID uuid.UUID, from, to OrderStatus) {
	if countedStatus(from) == countedStatus(to) {
		return
	}
	batch.Queue(`WITH leaving AS (UPDATE order_status_counts SET n = n - 1 WHERE store_id = $1 AND status = $2 AND $2 <> '')
		INSERT INTO order_status_counts (store_id, status, n) SELECT $1, $3, 1 WHERE $3 <> ''
		ON CONFLICT (store_id, status) DO UPDATE SET n = order_status_counts.n + 1`,
		storeID, string(countedStatus(from)), string(countedStatus(to)))
}

func (tx *Tx) lockOrder(ctx context.Context, storeID, id uuid.UUID) (Order, error) {
	o, err := scanOrder(tx.tx.QueryRow(ctx, `SELECT `+orderColumns+` FROM orders WHERE store_id = $1 AND id = $2 FOR UPDATE`, storeID, id))
	if err != nil {
		return Order{}, notFoundIfNoRows(err, "find order "+id.String())
	}
	if o.Lines, err = tx.orderLinesOf(ctx, storeID, id); err != nil {
		return Order{}, err
	}
	return o, nil
}

// fulfillmentFor maps a status onto fulfillment_status where it implies one.
func fulfillmentFor(status OrderStatus, current FulfillmentStatus) FulfillmentStatus {
	switch status {
	case OrderShipped:
		return "in_transit"
	case OrderDelivered:
		return "delivered"
	case OrderReturned:
		return "returned"
	}
	return current
}

// TransitionOrder moves an order along the status machine through the
// status endpoints, writing an activity and order.status_changed (which
// carries the tracking number). Its shipments come along (closeShipments);
// CANCELLED goes through CancelOrder's rules.
func (tx *Tx) TransitionOrder(ctx context.Context, storeID, id uuid.UUID, to OrderStatus, tracking *string, note string, actor *uuid.UUID) (Order, error) {
	o, err := tx.lockOrder(ctx, storeID, id)
	if err != nil {
		return Order{}, err
	}
	if !CanMove(o.Status, to) {
		return Order{}, &TransitionError{From: o.Status, To: to, AllowedNext: AllowedNext(o.Status)}
	}
	// Any move through the status endpoints settles what automation flagged.
	if _, err := tx.ResolveAutopilotExceptions(ctx, storeID, id); err != nil {
		return Order{}, err
	}
	if to == OrderCancelled {
		return tx.cancel(ctx, o, note, actor)
	}
	if to == OrderReturned {
		return o, tx.returnOrder(ctx, &o, note, true, actor)
	}
	if err := tx.closeShipments(ctx, &o, to, tracking, actor); err != nil {
		return Order{}, err
	}
	return o, tx.moveOrder(ctx, &o, to, tracking, note, actor)
}

// moveOrder is the one transition routine: the order's status (and the
// fulfillment status it implies), its counters, its activity and
// order.status_changed. Stock and shipments are the caller's.
func (tx *Tx) moveOrder(ctx context.Context, o *Order, to OrderStatus, tracking *string, note string, actor *uuid.UUID) error {
	from := o.Status
	o.Status, o.FulfillmentStatus = to, fulfillmentFor(to, o.FulfillmentStatus)
	if tracking != nil {
		o.TrackingNumber = tracking
	}
	o.UpdatedAt = tx.now()
	// Whatever moves an order (the status endpoints, a return received, a
	// carrier's report) ends a carrier's confirmation of its outcome: an
	// outcome the merchant sets is its own word, counted in its own store's
	// COD trust check, never in another's (decisions §28). A carrier's batch
	// confirms the outcomes its reports reached after its moves
	// (confirmOutcomes).
	if _, err := tx.tx.Exec(ctx, `UPDATE orders SET status = $3, fulfillment_status = $4, tracking_number = $5, updated_at = $6, collected_total = $7,
			carrier_confirmed_at = NULL
		WHERE store_id = $1 AND id = $2`, o.StoreID, o.ID, o.Status, o.FulfillmentStatus, o.TrackingNumber, o.UpdatedAt, o.CollectedTotal); err != nil {
		return fmt.Errorf("update order status: %w", err)
	}
	if err := tx.countStatus(ctx, o.StoreID, from, to); err != nil {
		return err
	}
	if err := tx.addActivity(ctx, *o, ActivityStatusChanged, note, map[string]any{"from": from, "to": to, "tracking_number": o.TrackingNumber}, actor); err != nil {
		return err
	}
	return tx.emitStatusChanged(ctx, *o, from)
}

// CancelOrder cancels an order and restocks what was reserved. A draft is
// cancelled silently; shipped, delivered, returned or cancelled orders refuse.
func (tx *Tx) CancelOrder(ctx context.Context, storeID, id uuid.UUID, reason string, actor *uuid.UUID) (Order, error) {
	o, err := tx.lockOrder(ctx, storeID, id)
	if err != nil {
		return Order{}, err
	}
	if !Cancellable(o.Status) {
		return Order{}, &TransitionError{From: o.Status, To: OrderCancelled, AllowedNext: AllowedNext(o.Status)}
	}
	if _, err := tx.ResolveAutopilotExceptions(ctx, storeID, id); err != nil {
		return Order{}, err
	}
	return tx.cancel(ctx, o, reason, actor)
}

func (tx *Tx) cancel(ctx context.Context, o Order, reason string, actor *uuid.UUID) (Order, error) {
	from := o.Status
	if from != OrderDraft {
		if err := tx.closeShipments(ctx, &o, OrderCancelled, nil, actor); err != nil {
			return Order{}, err
		}
		if err := tx.moveOrderStock(ctx, o, nil, releaseUnits, UserActor(actor)); err != nil {
			return Order{}, err
		}
		if err := tx.releaseDiscounts(ctx, o); err != nil {
			return Order{}, err
		}
		// Cards the order sold are taken back (§19): every live one is
		// disabled, and a spent one refuses the cancel (409
		// GIFT_CARD_ALREADY_USED), as refunding its line would.
		sold := map[uuid.UUID]int{}
		for _, l := range o.Lines {
			if l.GiftCardValue != nil {
				sold[l.ID] = l.Quantity
			}
		}
		if err := tx.disableRefundedGiftCards(ctx, o, sold, "order cancelled"); err != nil {
			return Order{}, err
		}
		// Gift cards get their debits back, once (§19): the payments
		// reversed here are not due back as a refund.
		back, err := tx.reverseGiftCards(ctx, &o, "order cancelled")
		if err != nil {
			return Order{}, err
		}
		if back > 0 {
			latest, err := tx.refreshLatestProof(ctx, o.StoreID, o.ID)
			if err != nil {
				return Order{}, err
			}
			o.PaidTotal -= back
			o.PaymentStatus = PaymentStatusFor(o.PaymentStatus, o.PaidTotal, o.CollectibleTotal, latest)
		}
	}
	o.Status, o.UpdatedAt = OrderCancelled, tx.now()
	if reason != "" {
		o.CancelReason = &reason
	}
	// What was paid is due back (decisions §13), less refunds already made.
	if o.PaidTotal > 0 {
		so, err := tx.refundedSoFar(ctx, o)
		if err != nil {
			return Order{}, err
		}
		o.RefundDue = max(o.PaidTotal-so.amount, 0)
	}
	if _, err := tx.tx.Exec(ctx, `UPDATE orders SET status = 'CANCELLED', cancel_reason = $3, updated_at = $4, refund_due = $5,
			paid_total = $6, payment_status = $7 WHERE store_id = $1 AND id = $2`,
		o.StoreID, o.ID, o.CancelReason, o.UpdatedAt, o.RefundDue, o.PaidTotal, o.PaymentStatus); err != nil {
		return Order{}, fmt.Errorf("cancel order: %w", err)
	}
	if from != OrderDraft {
		if err := tx.countStatus(ctx, o.StoreID, from, OrderCancelled); err != nil {
			return Order{}, err
		}
		if err := tx.correctInvoice(ctx, o, InvoiceReasonCancellation, nil); err != nil {
			return Order{}, err
		}
	}
	if err := tx.addActivity(ctx, o, ActivityStatusChanged, reason, map[string]any{"from": from, "to": OrderCancelled}, actor); err != nil {
		return Order{}, err
	}
	if from == OrderDraft {
		return o, nil
	}
	return o, tx.emitStatusChanged(ctx, o, from)
}

// stockForStatus moves stock with an order that is RETURNED: everything
// not yet back returns to stock (its lines then count every piece as
// returned). Shipping moves stock through its shipments.
func (tx *Tx) stockForStatus(ctx context.Context, o *Order, to OrderStatus, actor *uuid.UUID) error {
	if to != OrderReturned {
		return nil
	}
	want := map[uuid.UUID]int{}
	for i, l := range o.Lines {
		want[l.ID] = l.Quantity - l.ReturnedQuantity
		o.Lines[i].ReturnedQuantity = l.Quantity
	}
	if err := tx.moveOrderStock(ctx, *o, want, restockUnits, UserActor(actor)); err != nil {
		return err
	}
	if _, err := tx.tx.Exec(ctx, `UPDATE order_lines SET returned_quantity = quantity WHERE store_id = $1 AND order_id = $2`,
		o.StoreID, o.ID); err != nil {
		return fmt.Errorf("return lines: %w", err)
	}
	return nil
}
