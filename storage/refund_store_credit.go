package storage

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// Store-credit refunds (decisions §19): a refund paid onto the order's
// customer's store-credit card, succeeded at once. It moves no cash, so a
// COD return is settled without a courier or a transfer.

// RefundStoreCredit is the refund method that credits the customer's
// store-credit card.
const RefundStoreCredit = "store_credit"

// errRefundNoCustomer refuses a store-credit refund of an order without a
// customer: there is no one to hold the credit.
var errRefundNoCustomer = &InvalidError{Field: "method", Code: "no_customer",
	Message: "the order has no customer to hold store credit; choose cash, wallet or bank_transfer"}

// creditStoreCredit pays refund r onto the store-credit card of the order's
// customer in the store's currency (the one CreateGiftCard
// issues in), making the card on first use (source
// refund, no code, balance 0 then this credit): one usable card per
// customer and currency, reused by every later store-credit refund. A
// disabled or expired store-credit card is passed over (credit there could
// never be spent) and a new one made. The ledger's `credit` entry names
// the refund and the order.
func (tx *Tx) creditStoreCredit(ctx context.Context, o Order, r Refund) (uuid.UUID, error) {
	if o.CustomerID == nil {
		return uuid.Nil, errRefundNoCustomer
	}
	// Two refunds of two orders of one customer at once would each make a
	// card: the customer's credit is serialised by a transaction lock.
	if _, err := tx.tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended('store_credit:' || $1::text || ':' || $2::text, 0))`,
		o.StoreID, *o.CustomerID); err != nil {
		return uuid.Nil, fmt.Errorf("lock store credit: %w", err)
	}
	var cardID uuid.UUID
	err := tx.tx.QueryRow(ctx, `SELECT g.id `+giftCardFrom+`
		WHERE g.store_id = $1 AND g.kind = 'store_credit' AND g.customer_id = $2 AND g.currency = (SELECT currency FROM stores WHERE id = $1)
			AND g.disabled_at IS NULL AND (g.expires_on IS NULL OR g.expires_on >= t.today)
		ORDER BY g.created_at, g.id LIMIT 1`, o.StoreID, *o.CustomerID).Scan(&cardID)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		card, _, err := tx.CreateGiftCard(ctx, nil, NewGiftCard{StoreID: o.StoreID, Kind: GiftCardKindStoreCredit, CustomerID: o.CustomerID,
			Source: GiftCardSourceRefund, OrderID: &o.ID, RefundID: &r.ID})
		if err != nil {
			return uuid.Nil, err
		}
		cardID = card.ID
	case err != nil:
		return uuid.Nil, fmt.Errorf("find store credit: %w", err)
	}
	if _, err := tx.CreditGiftCard(ctx, o.StoreID, cardID, GiftCardCredit, r.Amount, GiftCardMove{OrderID: &o.ID, RefundID: &r.ID}); err != nil {
		return uuid.Nil, err
	}
	return cardID, nil
}
