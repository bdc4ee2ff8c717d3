package storage

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// Card payments through the store's gateway (decisions §18). An order paid
// by card has one card payment; the card-payment:<order_id> workflow opens
// it at the gateway, settles it when the gateway says it succeeded, or
// expires it (and cancels the order) when the store's timeout passes.

// Card payment statuses.
const (
	CardPaymentOpen         = "open"
	CardPaymentSucceeded    = "succeeded"
	CardPaymentExpired      = "expired"
	CardPaymentMismatched   = "mismatched"
	CardPaymentRefundedLate = "refunded_late"
	// CardPaymentCancelled is a payment closed unpaid because its order
	// no longer waits on it: the merchant cancelled the order, or it was
	// paid some other way.
	CardPaymentCancelled = "cancelled"
)

// Card payment timeline entries.
const (
	ActivityCardPaymentStarted      ActivityKind = "card_payment_started"
	ActivityCardPaymentSucceeded    ActivityKind = "card_payment_succeeded"
	ActivityCardPaymentFailed       ActivityKind = "card_payment_failed"
	ActivityCardPaymentExpired      ActivityKind = "card_payment_expired"
	ActivityCardPaymentRefundedLate ActivityKind = "card_payment_refunded_late"
	ActivityCardPaymentCancelled    ActivityKind = "card_payment_cancelled"
)

// ReasonPaymentTimeout is the cancel reason of a card order nobody paid.
const ReasonPaymentTimeout = "payment_timeout"

// ErrNoGateway is a card checkout in a store without a connected gateway.
var ErrNoGateway = errors.New("no card gateway connected")

// CardPayment is an order's payment at the card gateway.
type CardPayment struct {
	StoreID  uuid.UUID
	OrderID  uuid.UUID
	Provider string
	Amount   int64
	Currency string
	// IntentID is the gateway's payment, ClientSecret (opened) what the
	// buyer's browser confirms it with; both empty until the workflow has
	// opened the payment.
	IntentID     string
	ClientSecret string
	Status       string
	ExpiresAt    time.Time
	CreatedAt    time.Time
}

func clientSecretPurpose(storeID, orderID uuid.UUID) string {
	return "card_payments/" + storeID.String() + "/" + orderID.String() + "/client_secret"
}

// OpenCardPayment records the card payment of an order just placed, due
// within the store's card payment timeout.
func (tx *Tx) OpenCardPayment(ctx context.Context, o Order, provider string) (CardPayment, error) {
	now := tx.now()
	p := CardPayment{StoreID: o.StoreID, OrderID: o.ID, Provider: provider, Amount: o.BalanceDue(), Currency: o.Currency, Status: CardPaymentOpen, CreatedAt: now}
	err := tx.tx.QueryRow(ctx, `INSERT INTO card_payments (store_id, order_id, provider, amount, currency, expires_at, created_at, updated_at)
		SELECT $1, $2, $3, $4, $5, $6::timestamptz + make_interval(mins => card_payment_timeout_minutes), $6, $6 FROM stores WHERE id = $1
		RETURNING expires_at`, o.StoreID, o.ID, provider, p.Amount, o.Currency, now).Scan(&p.ExpiresAt)
	if err != nil {
		return CardPayment{}, fmt.Errorf("open card payment: %w", err)
	}
	return p, nil
}

// FindCardPayment reads an order's card payment, its client secret opened.
func (r reader) FindCardPayment(ctx context.Context, sealer *Sealer, storeID, orderID uuid.UUID) (CardPayment, error) {
	p := CardPayment{StoreID: storeID, OrderID: orderID}
	var intent *string
	var sealed []byte
	err := r.q.QueryRow(ctx, `SELECT provider, amount, currency, intent_id, client_secret_sealed, status, expires_at, created_at
		FROM card_payments WHERE store_id = $1 AND order_id = $2`, storeID, orderID).
		Scan(&p.Provider, &p.Amount, &p.Currency, &intent, &sealed, &p.Status, &p.ExpiresAt, &p.CreatedAt)
	if err != nil {
		return CardPayment{}, notFoundIfNoRows(err, "find card payment of "+orderID.String())
	}
	if intent != nil {
		p.IntentID = *intent
	}
	if sealed != nil && sealer != nil {
		if p.ClientSecret, err = sealer.Open(sealed, clientSecretPurpose(storeID, orderID)); err != nil {
			return CardPayment{}, err
		}
	}
	return p, nil
}

// lockCardPayment locks the order (every change of its card payment is
// made under the order's lock) and reads its card payment, its client
// secret not opened.
func (tx *Tx) lockCardPayment(ctx context.Context, storeID, orderID uuid.UUID) (Order, CardPayment, error) {
	o, err := tx.lockOrder(ctx, storeID, orderID)
	if err != nil {
		return Order{}, CardPayment{}, err
	}
	p, err := tx.FindCardPayment(ctx, nil, storeID, orderID)
	return o, p, err
}

// RecordCardIntent keeps the payment the gateway opened for an order (its
// client secret sealed) and notes it on the timeline; a payment already
// recorded is kept.
func (tx *Tx) RecordCardIntent(ctx context.Context, sealer *Sealer, storeID, orderID uuid.UUID, intentID, clientSecret string) error {
	o, p, err := tx.lockCardPayment(ctx, storeID, orderID)
	if err != nil || p.IntentID != "" {
		return err
	}
	sealed, err := sealer.Seal(clientSecret, clientSecretPurpose(storeID, orderID))
	if err != nil {
		return err
	}
	if _, err := tx.tx.Exec(ctx, `UPDATE card_payments SET intent_id = $3, client_secret_sealed = $4, updated_at = $5
		WHERE store_id = $1 AND order_id = $2`, storeID, orderID, intentID, sealed, tx.now()); err != nil {
		return fmt.Errorf("record card intent: %w", err)
	}
	return tx.addActivity(ctx, o, ActivityCardPaymentStarted, "", map[string]any{"provider": p.Provider, "reference": intentID,
		"amount": p.Amount, "expires_at": p.ExpiresAt.UTC()}, nil)
}

// MarkCardPaymentStarted records that the order's card-payment workflow runs.
func (r reader) MarkCardPaymentStarted(ctx context.Context, storeID, orderID uuid.UUID) error {
	if _, err := r.q.Exec(ctx, `UPDATE card_payments SET workflow_started_at = now() WHERE store_id = $1 AND order_id = $2 AND workflow_started_at IS NULL`,
		storeID, orderID); err != nil {
		return fmt.Errorf("mark card payment started: %w", err)
	}
	return nil
}

// CardPaymentDue is a card payment whose workflow start was lost.
type CardPaymentDue struct {
	StoreID, OrderID uuid.UUID
	OrderNumber      string
	StoreSubdomain   string
}

// FindCardPaymentsDue lists card payments older than age whose workflow was
// never started.
func (r reader) FindCardPaymentsDue(ctx context.Context, age time.Duration, limit int) ([]CardPaymentDue, error) {
	rows, err := r.q.Query(ctx, `SELECT c.store_id, c.order_id, o.order_number, s.subdomain FROM card_payments c
		JOIN orders o ON o.store_id = c.store_id AND o.id = c.order_id JOIN stores s ON s.id = c.store_id
		WHERE c.workflow_started_at IS NULL AND c.created_at < $1 ORDER BY c.created_at LIMIT $2`, Now().Add(-age), limit)
	if err != nil {
		return nil, fmt.Errorf("find card payments due: %w", err)
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (CardPaymentDue, error) {
		var d CardPaymentDue
		return d, row.Scan(&d.StoreID, &d.OrderID, &d.OrderNumber, &d.StoreSubdomain)
	})
}

// CardOutcome is what a gateway's success did to its order.
type CardOutcome string

// Card outcomes.
const (
	CardPaid       CardOutcome = "paid"        // the order is paid (now or before)
	CardMismatched CardOutcome = "mismatched"  // the amount differs: an exception is open, nothing paid
	CardLate       CardOutcome = "late"        // the order expired first: the payment must go back
	CardPaidBefore CardOutcome = "paid_before" // the order was paid some other way first: the payment must go back
	CardIgnored    CardOutcome = "ignored"     // not this order's payment
)

// SettleCardPayment takes the gateway's word that the order's payment
// succeeded with amount: the order is paid through the mark-paid routine
// (source gateway, the payment's id as reference), once. An amount or
// currency other than the order's opens the exception
// gateway_amount_mismatch and pays nothing; an order that expired first
// answers CardLate, and one already paid some other way (marked paid by
// hand while its card payment was open) CardPaidBefore: the caller pays the
// money back, so the buyer is not charged twice.
func (tx *Tx) SettleCardPayment(ctx context.Context, storeID, orderID uuid.UUID, intentID string, amount int64, currency string) (CardOutcome, error) {
	o, p, err := tx.lockCardPayment(ctx, storeID, orderID)
	if err != nil {
		return "", err
	}
	switch {
	case p.IntentID != "" && p.IntentID != intentID:
		return CardIgnored, nil
	case p.Status == CardPaymentSucceeded:
		return CardPaid, nil
	case p.Status == CardPaymentMismatched:
		return CardMismatched, nil
	case p.Status == CardPaymentExpired || p.Status == CardPaymentRefundedLate || o.Status == OrderCancelled:
		return CardLate, nil
	case o.PaidTotal > 0:
		return CardPaidBefore, nil
	}
	data := map[string]any{"provider": p.Provider, "reference": intentID, "amount": amount, "currency": currency}
	if amount != p.Amount || !strings.EqualFold(currency, p.Currency) {
		data["expected_amount"], data["expected_currency"] = p.Amount, p.Currency
		if err := tx.FlagOrder(ctx, storeID, orderID, "gateway_amount_mismatch",
			"The gateway took a different amount than the order's total; nothing was marked paid.",
			"حصلت بوابة الدفع على مبلغ يختلف عن إجمالي الطلب؛ لم يُسجَّل أي دفع.", data); err != nil {
			return "", err
		}
		return CardMismatched, tx.setCardStatus(ctx, storeID, orderID, CardPaymentMismatched)
	}
	if err := tx.setCardStatus(ctx, storeID, orderID, CardPaymentSucceeded); err != nil {
		return "", err
	}
	if err := tx.addActivity(ctx, o, ActivityCardPaymentSucceeded, "", data, nil); err != nil {
		return "", err
	}
	_, err = tx.PayThroughGateway(ctx, storeID, orderID, p.Provider, intentID, amount)
	return CardPaid, err
}

func (tx *Tx) setCardStatus(ctx context.Context, storeID, orderID uuid.UUID, status string) error {
	if _, err := tx.tx.Exec(ctx, `UPDATE card_payments SET status = $3, updated_at = $4 WHERE store_id = $1 AND order_id = $2`,
		storeID, orderID, status, tx.now()); err != nil {
		return fmt.Errorf("set card payment status: %w", err)
	}
	return nil
}

// ExpireCardPayment ends a card payment nobody completed in time: the
// order is cancelled with reason payment_timeout (its stock released, as
// any cancel), and the timeline says so. A payment no longer open, or an
// order paid some other way or past cancelling, is left as it is; the
// answer is the payment's status afterwards.
func (tx *Tx) ExpireCardPayment(ctx context.Context, storeID, orderID uuid.UUID) (string, error) {
	o, p, err := tx.lockCardPayment(ctx, storeID, orderID)
	if err != nil {
		return "", err
	}
	if p.Status != CardPaymentOpen {
		return p.Status, nil
	}
	if !o.AwaitsCardPayment() {
		return tx.closeCardPayment(ctx, o, p)
	}
	if err := tx.setCardStatus(ctx, storeID, orderID, CardPaymentExpired); err != nil {
		return "", err
	}
	if err := tx.addActivity(ctx, o, ActivityCardPaymentExpired, "", map[string]any{"provider": p.Provider, "reference": p.IntentID,
		"expires_at": p.ExpiresAt.UTC()}, nil); err != nil {
		return "", err
	}
	if _, err := tx.ResolveAutopilotExceptions(ctx, storeID, orderID); err != nil {
		return "", err
	}
	if _, err := tx.cancel(ctx, o, ReasonPaymentTimeout, nil); err != nil {
		return "", err
	}
	return CardPaymentExpired, nil
}

// CloseCancelledCardPayment closes the open payment of an order that no
// longer waits on it (cancelled by the merchant, or paid some other way):
// the payment becomes cancelled and the timeline says why. An order still
// waiting on its payment answers open and nothing changes.
func (tx *Tx) CloseCancelledCardPayment(ctx context.Context, storeID, orderID uuid.UUID) (string, error) {
	o, p, err := tx.lockCardPayment(ctx, storeID, orderID)
	if err != nil {
		return "", err
	}
	if p.Status != CardPaymentOpen || o.AwaitsCardPayment() {
		return p.Status, nil
	}
	return tx.closeCardPayment(ctx, o, p)
}

// AwaitsCardPayment says whether the order still waits on its card
// payment: nothing paid, and it can still be cancelled when nobody pays.
func (o Order) AwaitsCardPayment() bool { return o.PaidTotal == 0 && Cancellable(o.Status) }

// closeCardPayment marks an open payment cancelled, with the order's state
// as the reason: order_cancelled, order_paid, or order_ and the status the
// order moved on to unpaid.
func (tx *Tx) closeCardPayment(ctx context.Context, o Order, p CardPayment) (string, error) {
	reason := "order_" + strings.ToLower(string(o.Status))
	if o.Status != OrderCancelled && o.PaidTotal > 0 {
		reason = "order_paid"
	}
	if err := tx.setCardStatus(ctx, o.StoreID, o.ID, CardPaymentCancelled); err != nil {
		return "", err
	}
	if err := tx.addActivity(ctx, o, ActivityCardPaymentCancelled, "", map[string]any{"provider": p.Provider, "reference": p.IntentID,
		"reason": reason}, nil); err != nil {
		return "", err
	}
	return CardPaymentCancelled, nil
}

// RecordLateCardPayment records a payment that succeeded after its order
// expired, or after it was paid some other way (why says which), and was
// paid back at the gateway (refund): the ledger keeps it as refunded, and
// the timeline says so.
func (tx *Tx) RecordLateCardPayment(ctx context.Context, storeID, orderID uuid.UUID, intentID string, amount int64, refund string, why CardOutcome) error {
	o, p, err := tx.lockCardPayment(ctx, storeID, orderID)
	if err != nil || p.Status == CardPaymentRefundedLate {
		return err
	}
	now := tx.now()
	if _, err := tx.tx.Exec(ctx, `INSERT INTO order_payments (id, store_id, order_id, source, provider, reference, amount, status, reason, created_at, ended_at)
		VALUES ($1, $2, $3, 'gateway', $4, $5, $6, 'refunded', $7, $8, $8)`, NewID(), storeID, orderID, p.Provider, intentID, amount,
		lateRefundWords[LateRefundReason(why)]+"; refunded "+refund, now); err != nil {
		return fmt.Errorf("record late card payment: %w", err)
	}
	if err := tx.setCardStatus(ctx, storeID, orderID, CardPaymentRefundedLate); err != nil {
		return err
	}
	return tx.addActivity(ctx, o, ActivityCardPaymentRefundedLate, "", map[string]any{"provider": p.Provider, "reference": intentID,
		"amount": amount, "refund_reference": refund, "reason": LateRefundReason(why)}, nil)
}

// RecordCardPaymentFailed notes a failed attempt on the timeline; the
// order stays payable with the same payment.
func (tx *Tx) RecordCardPaymentFailed(ctx context.Context, storeID, orderID uuid.UUID, intentID, message string) error {
	o, err := tx.lockOrder(ctx, storeID, orderID)
	if err != nil {
		return err
	}
	return tx.addActivity(ctx, o, ActivityCardPaymentFailed, message, map[string]any{"reference": intentID}, nil)
}

// RecordGatewayEvent takes a gateway event id once: false when it was
// taken before (the caller changes nothing).
func (tx *Tx) RecordGatewayEvent(ctx context.Context, storeID uuid.UUID, provider, eventID, eventType string) (bool, error) {
	tag, err := tx.tx.Exec(ctx, `INSERT INTO gateway_events (store_id, provider, event_id, type, received_at) VALUES ($1, $2, $3, $4, $5)
		ON CONFLICT DO NOTHING`, storeID, provider, eventID, eventType, tx.now())
	if err != nil {
		return false, fmt.Errorf("record gateway event: %w", err)
	}
	return tag.RowsAffected() == 1, nil
}

// FindGatewayRefund finds the store's gateway refund the gateway knows by
// reference (its own id), for a refund event that names no refund of ours.
func (r reader) FindGatewayRefund(ctx context.Context, storeID uuid.UUID, reference string) (uuid.UUID, error) {
	var id uuid.UUID
	err := r.q.QueryRow(ctx, `SELECT id FROM order_refunds WHERE store_id = $1 AND gateway IS NOT NULL AND reference = $2
		ORDER BY created_at DESC LIMIT 1`, storeID, reference).Scan(&id)
	if err != nil {
		return uuid.Nil, notFoundIfNoRows(err, "find gateway refund "+reference)
	}
	return id, nil
}

// OrderPayment is one amount credited to an order (its ledger).
type OrderPayment struct {
	ID        uuid.UUID
	Source    string
	Provider  *string
	Reference *string
	Amount    int64
	Status    string
	CreatedAt time.Time
	// GiftCardID and GiftCardLast4 name the card of a gift_card payment.
	GiftCardID    *uuid.UUID
	GiftCardLast4 *string
}

// FindOrderPayments lists an order's ledger, oldest first.
func (r reader) FindOrderPayments(ctx context.Context, storeID, orderID uuid.UUID) ([]OrderPayment, error) {
	rows, err := r.q.Query(ctx, `SELECT p.id, p.source, p.provider, p.reference, p.amount, p.status, p.created_at, p.gift_card_id, g.last4
		FROM order_payments p LEFT JOIN gift_cards g ON g.store_id = p.store_id AND g.id = p.gift_card_id
		WHERE p.store_id = $1 AND p.order_id = $2 ORDER BY p.created_at, p.id`, storeID, orderID)
	if err != nil {
		return nil, fmt.Errorf("find order payments: %w", err)
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (OrderPayment, error) {
		var p OrderPayment
		return p, row.Scan(&p.ID, &p.Source, &p.Provider, &p.Reference, &p.Amount, &p.Status, &p.CreatedAt, &p.GiftCardID, &p.GiftCardLast4)
	})
}

// LateRefundReason is the code a late payment's refund carries, at the
// gateway (metadata) and on the timeline: paid_after_expiry, or
// order_already_paid when the order had been paid some other way.
func LateRefundReason(why CardOutcome) string {
	if why == CardPaidBefore {
		return "order_already_paid"
	}
	return "paid_after_expiry"
}

// lateRefundWords are the ledger's words for each LateRefundReason.
var lateRefundWords = map[string]string{
	"paid_after_expiry":  "paid after the order expired",
	"order_already_paid": "paid after the order was paid some other way",
}
