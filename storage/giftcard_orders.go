package storage

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// Gift cards paying carts and orders (decisions §19). A cart keeps the ids
// of the cards its buyer applied; pricing applies them last, in the order
// given, up to the total (shipping included). A checkout debits them in the
// order's transaction, after the variant locks, in card id order, each by
// DebitGiftCard's one conditional UPDATE, and records each as an
// order_payments row of source gift_card. Cancel gives the debits back
// once; unmark-paid and voids leave card rows alone.

// PaymentGiftCard is the payment method of an order its cards cover whole.
const PaymentGiftCard = "gift_card"

// MaxGiftCardsPerCart is how many cards a cart or an order takes.
const MaxGiftCardsPerCart = 5

// ErrGiftCardNotUsable is a code that reaches no card the store could take
// now: unknown, disabled, expired or spent (one answer, so nothing can be
// probed).
var ErrGiftCardNotUsable = errors.New("gift card not usable")

// AppliedGiftCard is one card as it pays a cart or an order.
type AppliedGiftCard struct {
	CardID       uuid.UUID
	Last4        string
	Usable       bool // active now; an unusable card applies nothing
	Applied      int64
	BalanceAfter int64
}

// SumApplied is what the cards pay together.
func SumApplied(cards []AppliedGiftCard) int64 {
	var sum int64
	for _, c := range cards {
		sum += c.Applied
	}
	return sum
}

// UsableGiftCard finds the active gift card a typed code reaches, else
// ErrGiftCardNotUsable.
func (r reader) UsableGiftCard(ctx context.Context, sealer *Sealer, storeID uuid.UUID, typed string) (GiftCard, error) {
	c, err := r.FindGiftCardByCode(ctx, sealer, storeID, typed)
	if errors.Is(err, ErrNotFound) || (err == nil && c.Status != GiftCardActive) {
		return GiftCard{}, ErrGiftCardNotUsable
	}
	return c, err
}

// applyGiftCards applies the cards (ids, in the order given) to amount:
// each pays what it holds, up to what the cards before it left.
func (r reader) applyGiftCards(ctx context.Context, storeID uuid.UUID, ids []uuid.UUID, amount int64) ([]AppliedGiftCard, error) {
	out := make([]AppliedGiftCard, 0, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	rows, err := r.q.Query(ctx, `SELECT `+giftCardColumns+` `+giftCardFrom+` WHERE g.store_id = $1 AND g.id = ANY($2)`, storeID, ids)
	if err != nil {
		return nil, fmt.Errorf("find applied gift cards: %w", err)
	}
	cards, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (GiftCard, error) { return scanGiftCard(row) })
	if err != nil {
		return nil, fmt.Errorf("find applied gift cards: %w", err)
	}
	byID := make(map[uuid.UUID]GiftCard, len(cards))
	for _, c := range cards {
		byID[c.ID] = c
	}
	left := max(amount, 0)
	for _, id := range ids {
		c, ok := byID[id]
		if !ok {
			continue
		}
		a := AppliedGiftCard{CardID: id, Last4: deref(c.Last4), Usable: c.Status == GiftCardActive, BalanceAfter: c.Balance}
		if a.Usable {
			a.Applied = min(c.Balance, left)
			a.BalanceAfter -= a.Applied
			left -= a.Applied
		}
		out = append(out, a)
	}
	return out, nil
}

// planGiftCards applies an order's cards to its total, less its gift card
// lines, before it is written, and sets its payment method: gift_card when the cards cover the
// whole total, else the one asked for. A card that can no longer be used,
// or cards that no longer cover an order placed without a method, is
// ErrGiftCardBalanceChanged; no method and no cards (or a draft the cards
// do not cover) is 422.
func (tx *Tx) planGiftCards(ctx context.Context, o *Order, ids []uuid.UUID, method string, placed bool) ([]AppliedGiftCard, error) {
	// A gift card never pays for a gift card (§19): the cards pay the
	// order less its gift card lines.
	payable := o.Total
	for _, l := range o.Lines {
		if l.GiftCardValue != nil {
			payable -= l.Total - l.Discount
		}
	}
	cards, err := tx.applyGiftCards(ctx, o.StoreID, ids, payable)
	if err != nil {
		return nil, err
	}
	if len(cards) != len(ids) {
		return nil, fmt.Errorf("apply gift cards: %w", ErrGiftCardBalanceChanged)
	}
	for _, c := range cards {
		if !c.Usable {
			return nil, fmt.Errorf("apply gift card %s: %w", c.CardID, ErrGiftCardBalanceChanged)
		}
	}
	paid := SumApplied(cards)
	switch {
	case paid > 0 && paid == o.Total:
		o.PaymentMethod = PaymentGiftCard
	case method != "":
		o.PaymentMethod = method
	case payable < o.Total:
		return nil, &InvalidError{Field: "payment_method", Code: "required", Message: "is required: gift cards do not pay for gift cards"}
	case len(ids) > 0 && placed:
		return nil, fmt.Errorf("gift cards no longer cover the order: %w", ErrGiftCardBalanceChanged)
	default:
		return nil, &InvalidError{Field: "payment_method", Code: "required", Message: "is required unless gift cards pay the whole total"}
	}
	return cards, nil
}

// debitGiftCards takes each card's share from it (in card id order) after
// the order is written and its variants locked, records each as a
// gift_card payment, and settles the order through the one payment routine
// (order.paid once when the cards pay it whole).
func (tx *Tx) debitGiftCards(ctx context.Context, o *Order, cards []AppliedGiftCard, actor *uuid.UUID) error {
	byID := slices.Clone(cards)
	slices.SortFunc(byID, func(a, b AppliedGiftCard) int { return compareUUID(a.CardID, b.CardID) })
	debited := false
	for _, c := range byID {
		if c.Applied <= 0 {
			continue
		}
		if _, err := tx.DebitGiftCard(ctx, o.StoreID, c.CardID, c.Applied, GiftCardMove{OrderID: &o.ID}); err != nil {
			return err
		}
		if _, err := tx.tx.Exec(ctx, `INSERT INTO order_payments (id, store_id, order_id, source, gift_card_id, amount, status, actor_id, created_at)
			VALUES ($1, $2, $3, 'gift_card', $4, $5, 'succeeded', $6, $7)`, NewID(), o.StoreID, o.ID, c.CardID, c.Applied, actor, tx.now()); err != nil {
			return fmt.Errorf("record gift card payment: %w", err)
		}
		o.PaidTotal += c.Applied
		debited = true
	}
	if !debited {
		return nil
	}
	return tx.settlePayment(ctx, o, PaymentGiftCard, actor)
}

// queueGiftCardDebits queues a placed order's debits in its write batch,
// after the order's insert and in card id order: each card's conditional
// UPDATE (the one DebitGiftCard runs), its `redeem` entry and its gift_card
// payment in one statement; a card the UPDATE does not find fails the
// batch with ErrGiftCardBalanceChanged. The caller wrote the order with
// paid_total and payment_status already counting the cards.
func (tx *Tx) queueGiftCardDebits(batch *pgx.Batch, o Order, cards []AppliedGiftCard, actor *uuid.UUID) error {
	movedBy, err := json.Marshal(tx.movementActor())
	if err != nil {
		return err
	}
	byID := slices.Clone(cards)
	slices.SortFunc(byID, func(a, b AppliedGiftCard) int { return compareUUID(a.CardID, b.CardID) })
	for _, c := range byID {
		if c.Applied <= 0 {
			continue
		}
		cardID := c.CardID
		batch.Queue(`WITH u AS (`+debitGiftCardSQL+` RETURNING balance),
			t AS (INSERT INTO gift_card_transactions (id, store_id, gift_card_id, kind, amount, balance_after, order_id, actor, created_at)
				SELECT $5, $1, $2, 'redeem', -$3::bigint, u.balance, $6, $7, $4 FROM u RETURNING id)
			INSERT INTO order_payments (id, store_id, order_id, source, gift_card_id, amount, status, actor_id, created_at)
			SELECT $8, $1, $6, 'gift_card', $2, $3, 'succeeded', $9, $4 FROM t RETURNING id`,
			o.StoreID, cardID, c.Applied, tx.now(), NewID(), o.ID, movedBy, NewID(), actor).QueryRow(func(row pgx.Row) error {
			var id uuid.UUID
			err := row.Scan(&id)
			if errors.Is(err, pgx.ErrNoRows) {
				return fmt.Errorf("debit gift card %s: %w", cardID, ErrGiftCardBalanceChanged)
			}
			return err
		})
	}
	return nil
}

func compareUUID(a, b uuid.UUID) int {
	for i := range a {
		if a[i] != b[i] {
			return int(a[i]) - int(b[i])
		}
	}
	return 0
}

// reverseGiftCards gives a cancelled order's card payments back to their
// cards, once: each succeeded gift_card row becomes reversed and its card
// gets a `reverse` entry; a second pass finds none. It returns what went
// back.
func (tx *Tx) reverseGiftCards(ctx context.Context, o *Order, reason string) (int64, error) {
	// What an `original` refund already gave back to a card is not given
	// back twice.
	rows, err := tx.tx.Query(ctx, `UPDATE order_payments SET status = 'reversed', reason = $3, ended_at = $4
		WHERE store_id = $1 AND order_id = $2 AND source = 'gift_card' AND status = 'succeeded'
		RETURNING gift_card_id, amount - refunded`, o.StoreID, o.ID, reason, tx.now())
	if err != nil {
		return 0, fmt.Errorf("reverse gift card payments: %w", err)
	}
	type back struct {
		CardID uuid.UUID
		Amount int64
	}
	backs, err := pgx.CollectRows(rows, pgx.RowToStructByPos[back])
	if err != nil {
		return 0, fmt.Errorf("reverse gift card payments: %w", err)
	}
	slices.SortFunc(backs, func(a, b back) int { return compareUUID(a.CardID, b.CardID) })
	var total int64
	for _, b := range backs {
		if b.Amount == 0 {
			continue
		}
		if _, err := tx.CreditGiftCard(ctx, o.StoreID, b.CardID, GiftCardReverse, b.Amount, GiftCardMove{OrderID: &o.ID, Reason: &reason}); err != nil {
			return 0, err
		}
		total += b.Amount
	}
	return total, nil
}

// giftCardRoom is what an `original` refund may still give back to one
// card: its payment of the order less what went back to it already.
type giftCardRoom struct {
	PaymentID uuid.UUID
	CardID    uuid.UUID
	Room      int64
}

// giftCardRefundRooms are the order's gift-card payments an `original`
// refund gives back to (§19), in the order they paid. A disabled or
// expired card is passed over (credit there could never be spent): its
// part goes back by the order's other method.
func (r reader) giftCardRefundRooms(ctx context.Context, o Order) ([]giftCardRoom, error) {
	rows, err := r.q.Query(ctx, `SELECT p.id, p.gift_card_id, p.amount - p.refunded
		FROM order_payments p JOIN gift_cards g ON g.store_id = p.store_id AND g.id = p.gift_card_id
		WHERE p.store_id = $1 AND p.order_id = $2 AND p.source = 'gift_card' AND p.status = 'succeeded' AND p.amount > p.refunded
			AND g.disabled_at IS NULL AND (g.expires_on IS NULL OR g.expires_on >= `+storeTodaySQL("$1")+`)
		ORDER BY p.created_at, p.id`, o.StoreID, o.ID)
	if err != nil {
		return nil, fmt.Errorf("find gift card payments: %w", err)
	}
	rooms, err := pgx.CollectRows(rows, pgx.RowToStructByPos[giftCardRoom])
	if err != nil {
		return nil, fmt.Errorf("find gift card payments: %w", err)
	}
	return rooms, nil
}

// roomOf is what the rooms hold together.
func roomOf(rooms []giftCardRoom) int64 {
	var sum int64
	for _, room := range rooms {
		sum += room.Room
	}
	return sum
}

// refundToGiftCards credits r.GiftCardAmount to the cards of rooms, each
// up to its room in the order they paid, with a `credit` entry naming the
// refund, and keeps on each payment what went back. It returns the ids of
// the cards credited, comma-separated (the refund's reference).
func (tx *Tx) refundToGiftCards(ctx context.Context, o Order, r Refund, rooms []giftCardRoom) (string, error) {
	left := r.GiftCardAmount
	var ids []string
	for _, room := range rooms {
		take := min(left, room.Room)
		if take <= 0 {
			break
		}
		if _, err := tx.tx.Exec(ctx, `UPDATE order_payments SET refunded = refunded + $3 WHERE store_id = $1 AND id = $2`,
			o.StoreID, room.PaymentID, take); err != nil {
			return "", fmt.Errorf("record gift card refund: %w", err)
		}
		if _, err := tx.CreditGiftCard(ctx, o.StoreID, room.CardID, GiftCardCredit, take, GiftCardMove{OrderID: &o.ID, RefundID: &r.ID}); err != nil {
			return "", err
		}
		ids = append(ids, room.CardID.String())
		left -= take
	}
	if left != 0 {
		return "", fmt.Errorf("refund %s: %d left after the gift cards", r.ID, left)
	}
	return strings.Join(ids, ","), nil
}

// giftCardPaid is what an order's cards paid and still hold (succeeded
// gift_card rows).
func (tx *Tx) giftCardPaid(ctx context.Context, storeID, orderID uuid.UUID) (int64, error) {
	var sum int64
	if err := tx.tx.QueryRow(ctx, `SELECT COALESCE(sum(amount), 0)::bigint FROM order_payments
		WHERE store_id = $1 AND order_id = $2 AND source = 'gift_card' AND status = 'succeeded'`, storeID, orderID).Scan(&sum); err != nil {
		return 0, fmt.Errorf("sum gift card payments: %w", err)
	}
	return sum, nil
}

// orderGiftCards are a checked-out cart's cards as its order recorded them.
func (r reader) orderGiftCards(ctx context.Context, storeID, orderID uuid.UUID) ([]AppliedGiftCard, error) {
	rows, err := r.q.Query(ctx, `SELECT p.gift_card_id, COALESCE(g.last4, ''), true, p.amount,
			COALESCE((SELECT t.balance_after FROM gift_card_transactions t WHERE t.store_id = p.store_id AND t.gift_card_id = p.gift_card_id
				AND t.order_id = p.order_id AND t.kind = 'redeem' ORDER BY t.created_at DESC, t.id DESC LIMIT 1), g.balance)
		FROM order_payments p JOIN gift_cards g ON g.store_id = p.store_id AND g.id = p.gift_card_id
		WHERE p.store_id = $1 AND p.order_id = $2 AND p.source = 'gift_card' ORDER BY p.created_at, p.id`, storeID, orderID)
	if err != nil {
		return nil, fmt.Errorf("find order gift cards: %w", err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowToStructByPos[AppliedGiftCard])
	if err != nil {
		return nil, fmt.Errorf("find order gift cards: %w", err)
	}
	return out, nil
}

// draftGiftCards are the cards a draft will debit at its conversion.
func (tx *Tx) draftGiftCards(ctx context.Context, storeID, orderID uuid.UUID) ([]uuid.UUID, error) {
	var ids []uuid.UUID
	if err := tx.tx.QueryRow(ctx, `SELECT gift_card_ids FROM orders WHERE store_id = $1 AND id = $2`, storeID, orderID).Scan(&ids); err != nil {
		return nil, notFoundIfNoRows(err, "find draft gift cards")
	}
	return ids, nil
}
