package storage

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// Selling gift cards (decisions §19, migration 0064): a product of kind
// gift_card sells variants whose `value` is the balance each unit issues
// (the price may be lower, never higher). Its lines snapshot the value
// (OrderLine.GiftCardValue), hold no stock, take no discount and are not
// sold cash on delivery. When the order becomes paid (settlePayment), one
// card per unit is issued to the order's customer and sent to them;
// refunding the line disables its unspent cards.

// Product kinds.
const (
	ProductKindStandard = "standard"
	ProductKindGiftCard = "gift_card"
)

// ProductKindsMade lists the kinds a product may be made as here (bundles,
// §20, are not built yet; ProductKinds is what collection rules name).
var ProductKindsMade = []string{ProductKindStandard, ProductKindGiftCard}

// ErrGiftCardAlreadyUsed refuses refunding a sold gift card that has been
// spent (it has a `redeem` entry): the money is no longer the buyer's to
// take back.
var ErrGiftCardAlreadyUsed = errors.New("gift card already used")

// refuseGiftCardsOnCOD is §19's rule that a cart or order holding gift
// cards is not offered cash on delivery: a card sent before the courier
// collects would be spendable whether or not the buyer pays.
func refuseGiftCardsOnCOD(o Order) error {
	if o.PaymentMethod != "cod" {
		return nil
	}
	for _, l := range o.Lines {
		if l.GiftCardValue != nil {
			return errGiftCardsNotOnCOD
		}
	}
	return nil
}

var errGiftCardsNotOnCOD error = &InvalidError{Field: "payment_method", Code: "not_offered",
	Message: "gift cards are not sold cash on delivery; choose another payment method"}

// CartHoldsGiftCards reports whether a cart has a line of a gift card
// product (the storefront refuses cod for it, §19).
func (r reader) CartHoldsGiftCards(ctx context.Context, storeID, cartID uuid.UUID) (bool, error) {
	var holds bool
	if err := r.q.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM cart_lines l
			JOIN variants v ON v.store_id = l.store_id AND v.id = l.variant_id
			JOIN products p ON p.store_id = v.store_id AND p.id = v.product_id
		WHERE l.store_id = $1 AND l.cart_id = $2 AND p.kind = 'gift_card')`, storeID, cartID).Scan(&holds); err != nil {
		return false, fmt.Errorf("find cart gift cards: %w", err)
	}
	return holds, nil
}

// markGiftCardLines marks the priced lines of gift card products, which no
// discount takes a share of (a cart's lines do not carry their kind).
func (r reader) markGiftCardLines(ctx context.Context, storeID uuid.UUID, lines []PricedLine) error {
	ids := make([]uuid.UUID, 0, len(lines))
	for _, l := range lines {
		if l.ProductID != nil && !l.GiftCard {
			ids = append(ids, *l.ProductID)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	rows, err := r.q.Query(ctx, `SELECT id FROM products WHERE store_id = $1 AND id = ANY ($2) AND kind = 'gift_card'`, storeID, ids)
	if err != nil {
		return fmt.Errorf("find gift card products: %w", err)
	}
	giftCards, err := pgx.CollectRows(rows, pgx.RowTo[uuid.UUID])
	if err != nil {
		return fmt.Errorf("find gift card products: %w", err)
	}
	for i, l := range lines {
		for _, id := range giftCards {
			if l.ProductID != nil && *l.ProductID == id {
				lines[i].GiftCard = true
			}
		}
	}
	return nil
}

// errRecipientNotAllowed refuses a recipient on line i of a product that is
// not a gift card.
func errRecipientNotAllowed(i int) error {
	return &InvalidError{Field: fmt.Sprintf("lines[%d].recipient", i), Code: "not_allowed", Message: "only a gift card line names a recipient"}
}

// issueSoldGiftCards issues, in the transaction that made the order paid,
// one card per unit of each gift card line not yet issued (source
// purchase, the order and line named, the line's value) to the
// line's recipient (else the order's customer), and sends each: by email
// when the recipient has one, else recorded for WhatsApp when they have a
// phone. A second pass (paid again after an unmark) issues nothing new.
func (tx *Tx) issueSoldGiftCards(ctx context.Context, o Order) error {
	lines := o.Lines
	if lines == nil {
		var err error
		if lines, err = tx.orderLinesOf(ctx, o.StoreID, o.ID); err != nil {
			return err
		}
	}
	for _, l := range lines {
		if l.GiftCardValue == nil {
			continue
		}
		var issued int
		if err := tx.tx.QueryRow(ctx, `SELECT count(*) FROM gift_cards WHERE store_id = $1 AND order_id = $2 AND order_line_id = $3`,
			o.StoreID, o.ID, l.ID).Scan(&issued); err != nil {
			return fmt.Errorf("count sold gift cards: %w", err)
		}
		recipient := l.GiftCardRecipient
		if recipient == nil {
			recipient = &GiftCardRecipient{Name: o.Customer.Name, Email: o.Customer.Email, Phone: o.Customer.Phone}
		}
		channel := ""
		switch {
		case recipient.Email != nil && *recipient.Email != "":
			channel = "email"
		case recipient.Phone != nil && *recipient.Phone != "":
			channel = "whatsapp"
		}
		for range l.Quantity - issued {
			card, _, err := tx.CreateGiftCard(ctx, tx.sealer, NewGiftCard{StoreID: o.StoreID, Kind: GiftCardKindGiftCard,
				InitialValue: *l.GiftCardValue, CustomerID: o.CustomerID, Recipient: recipient, Source: GiftCardSourcePurchase, OrderID: &o.ID})
			if err != nil {
				return fmt.Errorf("issue sold gift card: %w", err)
			}
			if _, err := tx.tx.Exec(ctx, `UPDATE gift_cards SET order_line_id = $3 WHERE store_id = $1 AND id = $2`,
				o.StoreID, card.ID, l.ID); err != nil {
				return fmt.Errorf("issue sold gift card: %w", err)
			}
			if channel != "" {
				if _, err := tx.RecordGiftCardSend(ctx, o.StoreID, card.ID, channel); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// disableRefundedGiftCards disables, for each gift card line a refund
// covers, as many of the line's live cards as pieces refunded, unspent
// ones only: when fewer unspent cards are left than pieces refunded, the
// refund is refused (ErrGiftCardAlreadyUsed) and nothing changes. A line
// paid for but not issued (no card yet) disables nothing.
func (tx *Tx) disableRefundedGiftCards(ctx context.Context, o Order, refunded map[uuid.UUID]int, reason string) error {
	for _, l := range o.Lines {
		n := refunded[l.ID]
		if l.GiftCardValue == nil || n == 0 {
			continue
		}
		rows, err := tx.tx.Query(ctx, `SELECT g.id, EXISTS (SELECT 1 FROM gift_card_transactions t
				WHERE t.store_id = g.store_id AND t.gift_card_id = g.id AND t.kind = 'redeem') AS spent
			FROM gift_cards g WHERE g.store_id = $1 AND g.order_id = $2 AND g.order_line_id = $3 AND g.disabled_at IS NULL
			ORDER BY spent, g.created_at, g.id FOR UPDATE OF g`, o.StoreID, o.ID, l.ID)
		if err != nil {
			return fmt.Errorf("find sold gift cards: %w", err)
		}
		type soldCard struct {
			id    uuid.UUID
			spent bool
		}
		cards, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (soldCard, error) {
			var c soldCard
			return c, row.Scan(&c.id, &c.spent)
		})
		if err != nil {
			return fmt.Errorf("find sold gift cards: %w", err)
		}
		if len(cards) == 0 {
			continue
		}
		for _, c := range cards[:min(n, len(cards))] {
			if c.spent {
				return fmt.Errorf("refund gift card %s: %w", c.id, ErrGiftCardAlreadyUsed)
			}
			if _, _, err := tx.DisableGiftCard(ctx, o.StoreID, c.id, reason); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkGiftCardValue holds a variant's value to its product's kind: only a
// gift card product's variants carry one (422 `value` gift_card_only), and
// the price a buyer pays never exceeds the balance issued (422 on field,
// `price` or `value`, exceeds_value).
func checkGiftCardValue(kind string, price int64, value *int64, field string) error {
	switch {
	case value == nil:
		return nil
	case kind != ProductKindGiftCard:
		return &InvalidError{Field: "value", Code: "gift_card_only", Message: "only the variants of a gift card product carry a value"}
	case *value < 1:
		return &InvalidError{Field: "value", Code: "out_of_range", Message: "must be at least 1"}
	case price > *value:
		return &InvalidError{Field: field, Code: "exceeds_value",
			Message: fmt.Sprintf("the price (%d) must not exceed the gift card's value (%d)", price, *value)}
	}
	return nil
}

// isValueCheckViolation reports whether err is variants' value ≥ price
// check, which a product's price change can meet on its default variant.
func isValueCheckViolation(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == "23514" && pgErr.ConstraintName == "variants_value_check"
}

// GiftCardSendMessageID is the provider's message id a WhatsApp send
// already has (nil: not sent yet); NotFound when the send is gone.
func (r reader) GiftCardSendMessageID(ctx context.Context, storeID, sendID uuid.UUID) (*string, error) {
	var id *string
	if err := r.q.QueryRow(ctx, `SELECT provider_message_id FROM gift_card_sends WHERE store_id = $1 AND id = $2`,
		storeID, sendID).Scan(&id); err != nil {
		return nil, notFoundIfNoRows(err, "find gift card send "+sendID.String())
	}
	return id, nil
}

// RecordGiftCardSendOutcome keeps what the provider said of a WhatsApp
// send: its message id, or the code it refused with.
func (db *DB) RecordGiftCardSendOutcome(ctx context.Context, storeID, sendID uuid.UUID, messageID *string, refusedCode *int) error {
	if _, err := db.pool.Exec(ctx, `UPDATE gift_card_sends SET provider_message_id = $3, provider_error_code = $4 WHERE store_id = $1 AND id = $2`,
		storeID, sendID, messageID, refusedCode); err != nil {
		return fmt.Errorf("record gift card send: %w", err)
	}
	return nil
}
