package storage

import (
	"context"
	"fmt"

	"github.com/google/uuid"
)

// ConvertDraft turns a draft into a PENDING order as if it had just been
// placed: stock is reserved now, the COD trust check runs, and
// order.created is written.
func (tx *Tx) ConvertDraft(ctx context.Context, storeID, orderID uuid.UUID, actor *uuid.UUID) (Order, error) {
	o, err := tx.lockOrder(ctx, storeID, orderID)
	if err != nil {
		return Order{}, err
	}
	if o.Status != OrderDraft {
		return Order{}, &TransitionError{From: o.Status, To: OrderPending, AllowedNext: AllowedNext(o.Status)}
	}
	requested := make([]NewOrderLine, 0, len(o.Lines))
	for _, l := range o.Lines {
		if l.VariantID == nil {
			return Order{}, &InvalidError{Field: "lines", Code: "not_found", Message: "a line's variant no longer exists"}
		}
		requested = append(requested, NewOrderLine{VariantID: *l.VariantID, Quantity: l.Quantity, Recipient: l.GiftCardRecipient})
	}
	if _, err := tx.orderLines(ctx, storeID, requested, true); err != nil {
		return Order{}, err
	}
	limits, err := tx.recheckDiscounts(ctx, o)
	if err != nil {
		return Order{}, err
	}
	if err := tx.countDiscounts(ctx, o, limits); err != nil {
		return Order{}, err
	}
	if err := tx.reserveOrder(ctx, o, UserActor(actor)); err != nil {
		return Order{}, err
	}
	// The draft's gift cards are checked again and debited now (§19).
	giftCardIDs, err := tx.draftGiftCards(ctx, storeID, orderID)
	if err != nil {
		return Order{}, err
	}
	var cards []AppliedGiftCard
	if len(giftCardIDs) > 0 {
		method := o.PaymentMethod
		if method == PaymentGiftCard {
			method = ""
		}
		if cards, err = tx.planGiftCards(ctx, &o, giftCardIDs, method, true); err != nil {
			return Order{}, err
		}
		if _, err := tx.tx.Exec(ctx, `UPDATE orders SET payment_method = $3 WHERE store_id = $1 AND id = $2`,
			storeID, orderID, o.PaymentMethod); err != nil {
			return Order{}, fmt.Errorf("convert draft: %w", err)
		}
	}
	o.Status, o.UpdatedAt = OrderPending, tx.now()
	o.PlacedAt = &o.UpdatedAt
	// placed_started_at stays NULL: the dispatcher starts the order-placed
	// workflow after commit, as for any new order.
	// It counts in analytics from now (§17: a converted draft is placed at
	// its conversion).
	if _, err := tx.tx.Exec(ctx, `UPDATE orders SET status = 'PENDING', updated_at = $3, placed_at = $3 WHERE store_id = $1 AND id = $2`,
		storeID, orderID, o.UpdatedAt); err != nil {
		return Order{}, fmt.Errorf("convert draft: %w", err)
	}
	if err := tx.countStatus(ctx, storeID, OrderDraft, OrderPending); err != nil {
		return Order{}, err
	}
	if err := tx.addActivity(ctx, o, ActivityStatusChanged, "", map[string]any{"from": OrderDraft, "to": OrderPending, "converted": true}, actor); err != nil {
		return Order{}, err
	}
	if err := tx.trustCheck(ctx, o, o.Customer.Phone); err != nil {
		return Order{}, err
	}
	if err := tx.emitOrderCreated(ctx, o); err != nil {
		return Order{}, err
	}
	return o, tx.debitGiftCards(ctx, &o, cards, actor)
}
