package storage

import (
	"context"
	"fmt"
	"slices"

	"github.com/google/uuid"
)

// How an order and its shipments settle each other (decisions §12): a
// shipment's move settles its order's status and, for COD, its cash
// (settleOrderShipments, reconcileCOD, returnOrder); an order's move through
// the status endpoints brings its shipments along (closeShipments).

// settleOrderShipments moves the order after one of its shipments moved
// (decisions §12): the first departure ships it (a forward skip), later
// ones only name their tracking number; nothing open or unshipped with one
// delivered delivers it; every departed shipment returned returns it. Once
// every departed shipment has ended, a COD order's cash is reconciled.
func (tx *Tx) settleOrderShipments(ctx context.Context, o *Order, moved *Shipment, actor *uuid.UUID) error {
	if moved.departedNow {
		tracking := moved.TrackingNumber
		if tracking == nil {
			tracking = &moved.Number
		}
		switch {
		case slices.Contains(forwardPath[:len(forwardPath)-1], o.Status):
			if err := tx.moveOrder(ctx, o, OrderShipped, tracking, "", actor); err != nil {
				return err
			}
		case o.Status == OrderShipped:
			if deref(o.TrackingNumber) != *tracking {
				o.TrackingNumber = tracking
				if _, err := tx.tx.Exec(ctx, `UPDATE orders SET tracking_number = $3 WHERE store_id = $1 AND id = $2`, o.StoreID, o.ID, tracking); err != nil {
					return fmt.Errorf("update order tracking: %w", err)
				}
			}
		}
	}
	if !moved.Status.Final() {
		return nil
	}
	if err := tx.flushShipments(ctx); err != nil {
		return err
	}
	shipments, err := tx.orderShipments(ctx, o.StoreID, o.ID)
	if err != nil {
		return err
	}
	var (
		onTheRoadNow, labels, delivered, departed, returned int
		collected                                           int64
	)
	for _, s := range shipments {
		switch {
		case s.status == ShipmentLabelCreated:
			labels++
		case slices.Contains(onTheRoad, s.status):
			onTheRoadNow++
		}
		if s.shippedAt != nil && s.status != ShipmentCancelled {
			departed++
		}
		switch s.status {
		case ShipmentDelivered:
			delivered++
			if s.codCollected != nil {
				collected += *s.codCollected
			}
		case ShipmentReturnedToSender:
			returned++
		}
	}
	if onTheRoadNow > 0 || moved.Status == ShipmentCancelled {
		return nil
	}
	left, err := tx.unshipped(ctx, *o)
	if err != nil {
		return err
	}
	unshippedPieces := 0
	for _, n := range left {
		unshippedPieces += n
	}
	switch {
	case delivered > 0 && labels == 0 && unshippedPieces == 0 && o.Status == OrderShipped:
		if o.PaymentMethod == "cod" && o.CollectedTotal == 0 {
			// The cash part: what gift cards paid is not collected (§19).
			cards, err := tx.giftCardPaid(ctx, o.StoreID, o.ID)
			if err != nil {
				return err
			}
			o.CollectedTotal = max(AcceptedValue(*o)-cards, 0) // written with the status
		}
		if err := tx.moveOrder(ctx, o, OrderDelivered, nil, "", actor); err != nil {
			return err
		}
	case departed > 0 && returned == departed && (o.Status == OrderShipped || o.Status == OrderDelivered):
		return tx.returnOrder(ctx, o, "", false, actor)
	}
	if delivered > 0 && o.PaymentMethod == "cod" && o.PaymentStatus != PaymentPaid {
		return tx.reconcileCOD(ctx, o, collected, actor)
	}
	return nil
}

// reconcileCOD pays an unpaid COD order when the cash its delivered
// shipments collected is what it expects (collected_total less what was
// paid before), and opens cod_mismatch otherwise, paying nothing.
func (tx *Tx) reconcileCOD(ctx context.Context, o *Order, collected int64, actor *uuid.UUID) error {
	// Cash only: gift cards paid their part at checkout (§19).
	cards, err := tx.giftCardPaid(ctx, o.StoreID, o.ID)
	if err != nil {
		return err
	}
	expected := o.CollectedTotal
	if expected == 0 {
		expected = max(AcceptedValue(*o)-cards, 0)
	}
	expected = max(expected-(o.PaidTotal-cards), 0)
	if collected != expected {
		return tx.FlagOrder(ctx, o.StoreID, o.ID, ReasonCODMismatch,
			fmt.Sprintf("The couriers collected %d where %d was expected; nothing was marked paid", collected, expected),
			fmt.Sprintf("حصّل المندوبون %d بدلًا من %d المتوقع؛ لم يُسجَّل أي دفع", collected, expected),
			map[string]any{"expected": expected, "collected": collected})
	}
	if err := tx.credit(ctx, o, "cod", nil, o.BalanceDue(), actor); err != nil {
		return err
	}
	return tx.settlePayment(ctx, o, "cod", actor)
}

// returnOrder moves an order to RETURNED: labels not yet gone are
// cancelled and their reservations released; with restock (the status
// endpoint) every piece not yet back is restocked at once, else (every
// departed shipment returned to sender) the pieces come back through the
// shipments' returns when received.
func (tx *Tx) returnOrder(ctx context.Context, o *Order, note string, restock bool, actor *uuid.UUID) error {
	if err := tx.closeShipments(ctx, o, OrderReturned, nil, actor); err != nil {
		return err
	}
	if err := tx.moveOrderStock(ctx, *o, nil, releaseUnits, UserActor(actor)); err != nil {
		return err
	}
	if restock {
		if err := tx.stockForStatus(ctx, o, OrderReturned, actor); err != nil {
			return err
		}
	}
	return tx.moveOrder(ctx, o, OrderReturned, nil, note, actor)
}

// closeShipments brings an order's shipments along with a move through the
// status endpoints (decisions §12): SHIPPED ships every unshipped piece as
// one shipment (carrier "other", the body's tracking number) and sends off
// every label; DELIVERED delivers what is open; RETURNED returns what is on
// the road and cancels labels; CANCELLED cancels labels.
func (tx *Tx) closeShipments(ctx context.Context, o *Order, to OrderStatus, tracking *string, actor *uuid.UUID) error {
	if to == OrderShipped {
		left, err := tx.unshipped(ctx, *o)
		if err != nil {
			return err
		}
		pieces := 0
		for _, n := range left {
			pieces += n
		}
		if pieces > 0 {
			// The status endpoint ships from wherever the pieces are reserved,
			// and keeps its old word on tracking numbers (no uniqueness).
			if _, err := tx.openShipment(ctx, o, NewShipment{Carrier: "other", TrackingNumber: tracking, asIs: true}, SourceSystem, actor); err != nil {
				return err
			}
			tracking = nil
		}
	}
	open, err := tx.openShipmentsOf(ctx, *o)
	if err != nil {
		return err
	}
	for i := range open {
		s := &open[i]
		var next ShipmentStatus
		switch to {
		case OrderShipped:
			if s.Status != ShipmentLabelCreated {
				continue
			}
			next = ShipmentInTransit
			if tracking != nil && s.TrackingNumber == nil {
				if _, err := tx.tx.Exec(ctx, `UPDATE shipments SET tracking_number = $3 WHERE store_id = $1 AND id = $2`, s.StoreID, s.ID, *tracking); err != nil {
					return fmt.Errorf("name tracking number: %w", err)
				}
				s.TrackingNumber, tracking = tracking, nil
			}
		case OrderDelivered:
			next = ShipmentDelivered
		case OrderReturned:
			next = ShipmentReturnedToSender
			if s.Status == ShipmentLabelCreated {
				next = ShipmentCancelled
			}
		case OrderCancelled:
			if s.Status != ShipmentLabelCreated {
				continue
			}
			next = ShipmentCancelled
		default:
			return nil
		}
		if err := tx.applyShipmentStatus(ctx, o, s, ShipmentReport{Status: next, OccurredAt: tx.now(), Source: SourceSystem}, true, actor); err != nil {
			return err
		}
	}
	return nil
}
