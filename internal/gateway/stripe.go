package gateway

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/stripe/stripe-go/v84"
	"github.com/stripe/stripe-go/v84/webhook"
)

// Stripe is a Stripe account reached at APIBase (https://api.stripe.com
// when empty; stripe-mock in tests and `make dev`).
type Stripe struct {
	APIBase       string
	SecretKey     string
	WebhookSecret string
	// HTTPClient defaults to a client with a 30 s timeout.
	HTTPClient *http.Client
}

var _ Gateway = (*Stripe)(nil)

func (s *Stripe) client() *stripe.Client {
	httpClient := s.HTTPClient
	if httpClient == nil {
		httpClient = &http.Client{Timeout: 30 * time.Second}
	}
	// Temporal retries; the client itself does not.
	cfg := &stripe.BackendConfig{HTTPClient: httpClient, MaxNetworkRetries: stripe.Int64(0),
		LeveledLogger: &stripe.LeveledLogger{Level: stripe.LevelNull}}
	if s.APIBase != "" {
		cfg.URL = stripe.String(strings.TrimRight(s.APIBase, "/"))
	}
	return stripe.NewClient(s.SecretKey, stripe.WithBackends(stripe.NewBackendsWithConfig(cfg)))
}

// Check implements Gateway with GET /v1/balance, which any working secret
// key (or a restricted key allowed to read balances) may call.
func (s *Stripe) Check(ctx context.Context) error {
	_, err := s.client().V1Balance.Retrieve(ctx, &stripe.BalanceRetrieveParams{})
	return stripeError(err)
}

// CreateIntent implements Gateway with POST /v1/payment_intents.
func (s *Stripe) CreateIntent(ctx context.Context, in Intent) (IntentResult, error) {
	params := &stripe.PaymentIntentCreateParams{Amount: stripe.Int64(in.Amount), Currency: stripe.String(strings.ToLower(in.Currency)),
		PaymentMethodTypes: []*string{stripe.String("card")}}
	if in.StatementDescriptor != "" {
		params.StatementDescriptorSuffix = stripe.String(in.StatementDescriptor)
	}
	params.SetIdempotencyKey(in.IdempotencyKey)
	for k, v := range in.Metadata {
		params.AddMetadata(k, v)
	}
	pi, err := s.client().V1PaymentIntents.Create(ctx, params)
	if err != nil {
		return IntentResult{}, stripeError(err)
	}
	return intentResult(pi), nil
}

// CancelIntent implements Gateway with POST /v1/payment_intents/{id}/cancel;
// a refusal (the payment is no longer cancelable) reads the payment back.
func (s *Stripe) CancelIntent(ctx context.Context, id string) (IntentResult, error) {
	pi, err := s.client().V1PaymentIntents.Cancel(ctx, id, &stripe.PaymentIntentCancelParams{})
	if err == nil {
		return intentResult(pi), nil
	}
	err = stripeError(err)
	var refused *RefusedError
	if !errors.As(err, &refused) {
		return IntentResult{}, err
	}
	pi, rerr := s.client().V1PaymentIntents.Retrieve(ctx, id, &stripe.PaymentIntentRetrieveParams{})
	if rerr != nil {
		return IntentResult{}, stripeError(rerr)
	}
	if pi.Status == stripe.PaymentIntentStatusSucceeded || pi.Status == stripe.PaymentIntentStatusCanceled {
		return intentResult(pi), nil
	}
	return IntentResult{}, err
}

func intentResult(pi *stripe.PaymentIntent) IntentResult {
	return IntentResult{ID: pi.ID, ClientSecret: pi.ClientSecret, Status: string(pi.Status), Amount: cmp.Or(pi.AmountReceived, pi.Amount)}
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
	return refundResult(refund), nil
}

func refundResult(refund *stripe.Refund) RefundResult {
	out := RefundResult{Reference: refund.ID, Status: StatusPending}
	switch refund.Status {
	case stripe.RefundStatusSucceeded:
		out.Status = StatusSucceeded
	case stripe.RefundStatusFailed, stripe.RefundStatusCanceled:
		out.Status = StatusFailed
		out.FailureReason = cmp.Or(string(refund.FailureReason), string(refund.Status))
	}
	return out
}

// webhookTolerance is how old a signed event may be (Stripe's default).
const webhookTolerance = 300 * time.Second

// Event implements Gateway with stripe-go's own signature check. Any
// event api_version is accepted: the account's version is the merchant's
// choice, and the fields read here are in every version.
func (s *Stripe) Event(payload []byte, signature string) (Event, error) {
	ev, err := webhook.ConstructEventWithOptions(payload, signature, s.WebhookSecret,
		webhook.ConstructEventOptions{Tolerance: webhookTolerance, IgnoreAPIVersionMismatch: true})
	switch {
	case errors.Is(err, webhook.ErrNotSigned), errors.Is(err, webhook.ErrInvalidHeader), errors.Is(err, webhook.ErrNoValidSignature),
		errors.Is(err, webhook.ErrTooOld):
		return Event{}, fmt.Errorf("%w: %w", ErrBadSignature, err)
	case err != nil:
		return Event{}, fmt.Errorf("read the event: %w", err)
	}
	out := Event{ID: ev.ID, Type: string(ev.Type), Kind: EventOther}
	if ev.Data == nil {
		return out, nil
	}
	switch ev.Type {
	case "payment_intent.succeeded", "payment_intent.payment_failed":
		var pi stripe.PaymentIntent
		if err := json.Unmarshal(ev.Data.Raw, &pi); err != nil {
			return Event{}, fmt.Errorf("read the payment intent: %w", err)
		}
		out.Kind, out.Payment, out.Currency, out.Metadata = EventPaymentSucceeded, pi.ID, string(pi.Currency), pi.Metadata
		out.Amount = cmp.Or(pi.AmountReceived, pi.Amount)
		if ev.Type == "payment_intent.payment_failed" {
			out.Kind, out.Amount = EventPaymentFailed, pi.Amount
			if pi.LastPaymentError != nil {
				out.FailureMessage = cmp.Or(pi.LastPaymentError.Msg, string(pi.LastPaymentError.Code))
			}
		}
	case "charge.refunded":
		var charge stripe.Charge
		if err := json.Unmarshal(ev.Data.Raw, &charge); err != nil {
			return Event{}, fmt.Errorf("read the charge: %w", err)
		}
		out.Kind, out.Metadata = EventRefundUpdated, charge.Metadata
		if charge.PaymentIntent != nil {
			out.Payment = charge.PaymentIntent.ID
		}
		if charge.Refunds != nil {
			for _, r := range charge.Refunds.Data {
				out.Refunds = append(out.Refunds, refundUpdate(r))
			}
		}
	case "charge.refund.updated", "refund.updated", "refund.failed":
		var refund stripe.Refund
		if err := json.Unmarshal(ev.Data.Raw, &refund); err != nil {
			return Event{}, fmt.Errorf("read the refund: %w", err)
		}
		out.Kind, out.Metadata, out.Refunds = EventRefundUpdated, refund.Metadata, []RefundUpdate{refundUpdate(&refund)}
		if refund.PaymentIntent != nil {
			out.Payment = refund.PaymentIntent.ID
		}
	}
	return out, nil
}

func refundUpdate(r *stripe.Refund) RefundUpdate {
	res := refundResult(r)
	return RefundUpdate{Reference: res.Reference, Status: res.Status, FailureReason: res.FailureReason, Metadata: r.Metadata}
}

// stripeError keeps a 4xx as a RefusedError; anything else (5xx, 409, 429,
// the network) is returned as it is, for Temporal to retry.
func stripeError(err error) error {
	if err == nil {
		return nil
	}
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
