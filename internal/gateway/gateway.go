// Package gateway talks to a store's card gateway (decisions §18): today
// Stripe's PaymentIntents API, behind an interface small enough that a MENA
// gateway (Paymob, Tap, Moyasar, HyperPay) is one more file and its test
// double.
package gateway

import (
	"context"
	"errors"
	"fmt"
)

// Gateway is a store's card gateway account.
type Gateway interface {
	// Check proves the secret key works (the merchant connects it once).
	Check(ctx context.Context) error
	// CreateIntent opens a payment for an order; the same IdempotencyKey
	// answers the same payment.
	CreateIntent(ctx context.Context, in Intent) (IntentResult, error)
	// CancelIntent cancels a payment nobody completed. A payment that
	// succeeded meanwhile is answered as it is (Status succeeded), not
	// refused.
	CancelIntent(ctx context.Context, id string) (IntentResult, error)
	// Refund pays back part of a succeeded payment.
	Refund(ctx context.Context, r Refund) (RefundResult, error)
	// Event verifies a webhook's signature over its payload and reads it.
	// A bad signature is ErrBadSignature.
	Event(payload []byte, signature string) (Event, error)
}

// Account is what a provider needs to act for a store.
type Account struct {
	Provider      string
	SecretKey     string
	WebhookSecret string
	// APIBase is the provider's API address (empty: its production API).
	APIBase string
}

// ErrUnknownProvider is an account at a provider this package does not
// speak to.
var ErrUnknownProvider = errors.New("unknown gateway provider")

// Open is the Gateway of an account: the one place that knows every
// provider.
func Open(a Account) (Gateway, error) {
	switch a.Provider {
	case "stripe":
		return &Stripe{APIBase: a.APIBase, SecretKey: a.SecretKey, WebhookSecret: a.WebhookSecret}, nil
	default:
		return nil, fmt.Errorf("%w: %s", ErrUnknownProvider, a.Provider)
	}
}

// Intent is a payment to open at the gateway.
type Intent struct {
	IdempotencyKey      string
	Amount              int64 // minor units
	Currency            string
	StatementDescriptor string
	Metadata            map[string]string
}

// IntentResult is the gateway's payment: its id, the secret the buyer's
// browser confirms it with, and where it is.
type IntentResult struct {
	ID           string
	ClientSecret string
	Status       string
	Amount       int64
}

// Payment statuses a gateway answers, besides its own in-between states.
const (
	IntentSucceeded = "succeeded"
	IntentCanceled  = "canceled"
)

// Refund asks the gateway to pay back part of a payment.
type Refund struct {
	// IdempotencyKey makes a retried call the same refund at the gateway.
	IdempotencyKey string
	// Payment is the gateway's id of the payment (a PaymentIntent).
	Payment  string
	Amount   int64 // minor units
	Currency string
	Metadata map[string]string
}

// RefundResult is the gateway's answer: its id of the refund and where the
// refund is (succeeded, pending, or failed with a reason).
type RefundResult struct {
	Reference     string
	Status        string
	FailureReason string
}

// Refund statuses a gateway answers.
const (
	StatusSucceeded = "succeeded"
	StatusPending   = "pending"
	StatusFailed    = "failed"
)

// Event kinds the service acts on; every other event is Other.
const (
	EventPaymentSucceeded = "payment_succeeded"
	EventPaymentFailed    = "payment_failed"
	EventRefundUpdated    = "refund_updated"
	EventOther            = "other"
)

// Event is a verified gateway webhook, read into what the service needs.
type Event struct {
	// ID is the gateway's event id; a second delivery carries the same.
	ID   string
	Kind string
	// Type is the gateway's own name for the event (payment_intent.succeeded).
	Type string
	// Payment is the payment's id, Amount and Currency what it carried
	// (payment events), Metadata the metadata it was opened with.
	Payment  string
	Amount   int64
	Currency string
	Metadata map[string]string
	// FailureMessage is the gateway's reason for a failed payment.
	FailureMessage string
	// Refunds are the refunds a refund event reports.
	Refunds []RefundUpdate
}

// RefundUpdate is one refund's state in a refund event.
type RefundUpdate struct {
	Reference     string
	Status        string
	FailureReason string
	Metadata      map[string]string
}

// ErrBadSignature is a webhook whose signature does not verify.
var ErrBadSignature = errors.New("the webhook's signature does not verify")

// RefusedError is the gateway's final answer to a request (a 4xx other
// than 409, 429 and 408): trying again will not change it.
type RefusedError struct {
	Status  int
	Code    string
	Message string
}

func (e *RefusedError) Error() string {
	return fmt.Sprintf("the gateway refused (%d %s): %s", e.Status, e.Code, e.Message)
}
