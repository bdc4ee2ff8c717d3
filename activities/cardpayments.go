package activities

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"go.temporal.io/sdk/temporal"

	"github.com/merchantsvc/svc/internal/gateway"
	"github.com/merchantsvc/svc/storage"
)

// CardPaymentInput names an order paid by card.
type CardPaymentInput struct {
	StoreID uuid.UUID
	OrderID uuid.UUID
}

// OpenCardIntentResult is the order's payment at the gateway: payable
// until ExpiresAt, or closed (Status says how it ended) — or not payable
// for Reason (no gateway connected, the gateway refused).
type OpenCardIntentResult struct {
	Payable   bool
	Closed    bool
	Status    string
	Reason    string
	ExpiresAt time.Time
}

// OpenCardIntent opens the order's payment at the store's gateway, under an
// idempotency key derived from the order id, and records it (its client
// secret sealed, never in the workflow's history). A payment opened before
// is answered as it is.
func (a *Activities) OpenCardIntent(ctx context.Context, in CardPaymentInput) (OpenCardIntentResult, error) {
	p, err := a.DB.FindCardPayment(ctx, nil, in.StoreID, in.OrderID)
	if err != nil {
		return OpenCardIntentResult{}, err
	}
	out := OpenCardIntentResult{Status: p.Status, ExpiresAt: p.ExpiresAt}
	if p.Status != storage.CardPaymentOpen {
		out.Closed = true
		return out, nil
	}
	if p.IntentID != "" {
		out.Payable = true
		return out, nil
	}
	account, err := a.DB.FindGatewayAccount(ctx, a.Secrets, in.StoreID, p.Provider)
	if errors.Is(err, storage.ErrNotFound) || errors.Is(err, storage.ErrNoSecretsKey) {
		out.Reason = "gateway_not_connected"
		return out, nil
	}
	if err != nil {
		return OpenCardIntentResult{}, err
	}
	descriptor := ""
	if account.StatementDescriptor != nil {
		descriptor = *account.StatementDescriptor
	}
	g, err := a.gatewayFor(account)
	if err != nil {
		return OpenCardIntentResult{}, err
	}
	intent, err := g.CreateIntent(ctx, gateway.Intent{IdempotencyKey: "card-payment:" + in.OrderID.String(),
		Amount: p.Amount, Currency: p.Currency, StatementDescriptor: descriptor,
		Metadata: map[string]string{"store_id": in.StoreID.String(), "order_id": in.OrderID.String()}})
	var refused *gateway.RefusedError
	if errors.As(err, &refused) { // its status and code only: its message may quote the key
		out.Reason = fmt.Sprintf("gateway_refused: %d %s", refused.Status, refused.Code)
		return out, nil
	}
	if err != nil {
		return OpenCardIntentResult{}, err
	}
	err = a.DB.InTx(ctx, func(tx *storage.Tx) error {
		return tx.RecordCardIntent(ctx, a.Secrets, in.StoreID, in.OrderID, intent.ID, intent.ClientSecret)
	})
	if errors.Is(err, storage.ErrNoSecretsKey) {
		return OpenCardIntentResult{}, temporal.NewNonRetryableApplicationError(err.Error(), "NoSecretsKey", err)
	}
	if err != nil {
		return OpenCardIntentResult{}, err
	}
	out.Payable = true
	return out, nil
}

// SettleCardPaymentInput is the gateway's word that a payment succeeded.
type SettleCardPaymentInput struct {
	CardPaymentInput
	IntentID string
	Amount   int64
	Currency string
}

// SettleCardPaymentResult is what the success did: paid, mismatched,
// refunded_late or ignored.
type SettleCardPaymentResult struct {
	Outcome string
}

// Outcome of a success that came after its order expired, or after it was
// paid some other way.
const outcomeRefundedLate = "refunded_late"

// SettleCardPayment pays the order through the mark-paid routine; a
// success that came after the order expired, or after the merchant marked
// it paid by hand, is paid back at the gateway (under a key derived from
// the order, so a retry is the same refund) and recorded.
func (a *Activities) SettleCardPayment(ctx context.Context, in SettleCardPaymentInput) (SettleCardPaymentResult, error) {
	var outcome storage.CardOutcome
	err := a.DB.InTx(ctx, func(tx *storage.Tx) error {
		var err error
		outcome, err = tx.SettleCardPayment(ctx, in.StoreID, in.OrderID, in.IntentID, in.Amount, in.Currency)
		return err
	})
	if err != nil || (outcome != storage.CardLate && outcome != storage.CardPaidBefore) {
		return SettleCardPaymentResult{Outcome: string(outcome)}, err
	}
	p, err := a.DB.FindCardPayment(ctx, nil, in.StoreID, in.OrderID)
	if err != nil {
		return SettleCardPaymentResult{}, err
	}
	if p.Status == storage.CardPaymentRefundedLate {
		return SettleCardPaymentResult{Outcome: outcomeRefundedLate}, nil
	}
	account, err := a.DB.FindGatewayAccount(ctx, a.Secrets, in.StoreID, p.Provider)
	if err != nil {
		return SettleCardPaymentResult{}, err // retried: the money must go back
	}
	g, err := a.gatewayFor(account)
	if err != nil {
		return SettleCardPaymentResult{}, err
	}
	refund, err := g.Refund(ctx, gateway.Refund{IdempotencyKey: "late-payment:" + in.OrderID.String(), Payment: in.IntentID,
		Amount: in.Amount, Currency: in.Currency, Metadata: map[string]string{"store_id": in.StoreID.String(), "order_id": in.OrderID.String(),
			"reason": storage.LateRefundReason(outcome)}})
	if err != nil {
		return SettleCardPaymentResult{}, err
	}
	err = a.DB.InTx(ctx, func(tx *storage.Tx) error {
		return tx.RecordLateCardPayment(ctx, in.StoreID, in.OrderID, in.IntentID, in.Amount, refund.Reference, outcome)
	})
	return SettleCardPaymentResult{Outcome: outcomeRefundedLate}, err
}

// ExpireCardPaymentResult is how an expiry or a close ended: expired (the
// order is cancelled), cancelled (the order no longer waited on its
// payment), succeeded when the gateway had taken the payment after all (the
// workflow settles it), open when a close found the order still waiting,
// or the payment's status when it was no longer open.
type ExpireCardPaymentResult struct {
	Status   string
	IntentID string
	Amount   int64
	Currency string
}

// ExpireCardPayment cancels the order's payment at the gateway, then the
// order (reason payment_timeout, stock released). A payment the gateway
// took meanwhile is answered as succeeded instead. An order that no longer
// waited on its payment (cancelled by the merchant, or paid some other
// way) keeps its state, and the payment is closed as cancelled.
func (a *Activities) ExpireCardPayment(ctx context.Context, in CardPaymentInput) (ExpireCardPaymentResult, error) {
	return a.closeCardPayment(ctx, in, func(tx *storage.Tx) (string, error) {
		return tx.ExpireCardPayment(ctx, in.StoreID, in.OrderID)
	})
}

// CloseCancelledCardPayment closes the payment of an order the merchant
// cancelled while it was open (workflows.OrderCancelledSignal): the intent
// is cancelled at the gateway now, not at the store's timeout, and the
// payment marked cancelled. An order still waiting on its payment answers
// open and nothing changes; a payment the gateway took meanwhile answers
// succeeded, for the workflow to settle (an order cancelled first pays it
// back).
func (a *Activities) CloseCancelledCardPayment(ctx context.Context, in CardPaymentInput) (ExpireCardPaymentResult, error) {
	o, err := a.DB.FindOrderByRef(ctx, in.StoreID, in.OrderID.String())
	if err != nil {
		return ExpireCardPaymentResult{}, err
	}
	if o.AwaitsCardPayment() {
		return ExpireCardPaymentResult{Status: storage.CardPaymentOpen}, nil
	}
	return a.closeCardPayment(ctx, in, func(tx *storage.Tx) (string, error) {
		return tx.CloseCancelledCardPayment(ctx, in.StoreID, in.OrderID)
	})
}

// closeCardPayment cancels an open payment's intent at the gateway, then
// records what close says in a transaction. A payment the gateway took
// meanwhile answers succeeded and close is not run.
func (a *Activities) closeCardPayment(ctx context.Context, in CardPaymentInput, close func(tx *storage.Tx) (string, error)) (ExpireCardPaymentResult, error) {
	p, err := a.DB.FindCardPayment(ctx, nil, in.StoreID, in.OrderID)
	if err != nil {
		return ExpireCardPaymentResult{}, err
	}
	if p.Status != storage.CardPaymentOpen {
		return ExpireCardPaymentResult{Status: p.Status}, nil
	}
	if p.IntentID != "" {
		account, err := a.DB.FindGatewayAccount(ctx, a.Secrets, in.StoreID, p.Provider)
		switch {
		case err == nil:
			g, err := a.gatewayFor(account)
			if err != nil {
				return ExpireCardPaymentResult{}, err
			}
			intent, err := g.CancelIntent(ctx, p.IntentID)
			var refused *gateway.RefusedError
			if err != nil && !errors.As(err, &refused) {
				return ExpireCardPaymentResult{}, err
			}
			if err == nil && intent.Status == gateway.IntentSucceeded {
				return ExpireCardPaymentResult{Status: storage.CardPaymentSucceeded, IntentID: p.IntentID, Amount: intent.Amount, Currency: p.Currency}, nil
			}
		case !errors.Is(err, storage.ErrNotFound) && !errors.Is(err, storage.ErrNoSecretsKey):
			return ExpireCardPaymentResult{}, err
		}
	}
	var status string
	err = a.DB.InTx(ctx, func(tx *storage.Tx) error {
		status, err = close(tx)
		return err
	})
	return ExpireCardPaymentResult{Status: status}, err
}
