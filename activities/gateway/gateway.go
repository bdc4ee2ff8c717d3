// Package gateway talks to a store's card gateway: today Stripe's API
// (decisions §18), behind an interface that leaves room for the MENA
// gateways (Paymob, Tap, Moyasar, HyperPay).
package gateway

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/stripe/stripe-go/v84"
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

// Gateway is a store's card gateway account.
type Gateway interface {
	Refund(ctx context.Context, r Refund) (RefundResult, error)
}

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

// Stripe is a Stripe account reached at APIBase (https://api.stripe.com
// when empty; stripe-mock or a test double in tests).
type Stripe struct {
	APIBase   string
	SecretKey string
	// HTTPClient defaults to a client with a 30 s timeout.
	HTTPClient *http.Client
}

func (s *Stripe) client() *stripe.Client {
	httpClient := s.HTTPClient
	if httpClient == nil {
		httpClient = &http.Client{Timeout: 30 * time.Second}
	}
	cfg := &stripe.BackendConfig{HTTPClient: httpClient, MaxNetworkRetries: stripe.Int64(0),
		LeveledLogger: &stripe.LeveledLogger{Level: stripe.LevelNull}}
	if s.APIBase != "" {
		cfg.URL = stripe.String(strings.TrimRight(s.APIBase, "/"))
	}
	// Temporal retries; the client itself does not.
	return stripe.NewClient(s.SecretKey, stripe.WithBackends(stripe.NewBackendsWithConfig(cfg)))
}

// Refund implements Gateway with POST /v1/refunds.
func (s *Stripe) Refund(ctx context.Context, r Refund) (RefundResult, error) {
	params := &stripe.RefundCreateParams{PaymentIntent: stripe.String(r.Payment), Amount: stripe.Int64(r.Amount)}
	params.SetIdempotencyKey(r.IdempotencyKey)
	for k, v := range r.Metadata {
		params.AddMetadata(k, v)
	}
	refund, err := s.client().V1Refunds.Create(ctx, params)
	if err != nil {
		return RefundResult{}, stripeError(err)
	}
	out := RefundResult{Reference: refund.ID, Status: StatusPending}
	switch refund.Status {
	case stripe.RefundStatusSucceeded:
		out.Status = StatusSucceeded
	case stripe.RefundStatusFailed, stripe.RefundStatusCanceled:
		out.Status = StatusFailed
		out.FailureReason = cmp.Or(string(refund.FailureReason), string(refund.Status))
	}
	return out, nil
}

// stripeError keeps a 4xx as a RefusedError; anything else (5xx, 409, 429,
// the network) is returned as it is, for Temporal to retry.
func stripeError(err error) error {
	var se *stripe.Error
	if !errors.As(err, &se) {
		return err
	}
	switch s := se.HTTPStatusCode; {
	case s >= 400 && s < 500 && s != http.StatusConflict && s != http.StatusTooManyRequests && s != http.StatusRequestTimeout:
		return &RefusedError{Status: s, Code: string(se.Code), Message: se.Msg}
	default:
		return fmt.Errorf("the gateway answered %d: %s", s, se.Msg)
	}
}
