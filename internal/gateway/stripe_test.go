package gateway

import (
	"errors"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/stripe/stripe-go/v84"
	"github.com/stripe/stripe-go/v84/webhook"
)

const testWebhookSecret = "whsec_test_gateway"

// signed signs payload as Stripe would, at the given time.
func signed(payload string, at time.Time) string {
	return webhook.GenerateTestSignedPayload(&webhook.UnsignedPayload{Payload: []byte(payload), Secret: testWebhookSecret, Timestamp: at}).Header
}

// event is a Stripe event envelope around one object, in an API version
// other than the library's: the account's version is the merchant's.
func event(id, kind, object string) string {
	return fmt.Sprintf(`{"id": %q, "object": "event", "api_version": "2019-02-19", "type": %q, "data": {"object": %s}}`, id, kind, object)
}

// Each event kind the service acts on is read into the fields it needs;
// any other kind is Other with its id and type.
func TestStripeEventsAreReadIntoWhatTheServiceNeeds(t *testing.T) {
	s := &Stripe{WebhookSecret: testWebhookSecret}
	for name, tc := range map[string]struct {
		payload string
		want    Event
	}{
		"payment succeeded: the amount received": {
			event("evt_1", "payment_intent.succeeded", `{"id": "pi_1", "object": "payment_intent", "amount": 5000, "amount_received": 4500,
				"currency": "egp", "metadata": {"order_id": "o1"}}`),
			Event{ID: "evt_1", Type: "payment_intent.succeeded", Kind: EventPaymentSucceeded, Payment: "pi_1", Amount: 4500, Currency: "egp",
				Metadata: map[string]string{"order_id": "o1"}},
		},
		"payment failed: the amount asked and the reason": {
			event("evt_2", "payment_intent.payment_failed", `{"id": "pi_2", "object": "payment_intent", "amount": 5000, "currency": "egp",
				"last_payment_error": {"code": "card_declined", "message": "Your card was declined."}}`),
			Event{ID: "evt_2", Type: "payment_intent.payment_failed", Kind: EventPaymentFailed, Payment: "pi_2", Amount: 5000, Currency: "egp",
				FailureMessage: "Your card was declined."},
		},
		"charge refunded: every refund it holds": {
			event("evt_3", "charge.refunded", `{"id": "ch_1", "object": "charge", "payment_intent": "pi_3",
				"refunds": {"object": "list", "data": [{"id": "re_1", "object": "refund", "status": "succeeded", "metadata": {"refund_id": "r1"}}]}}`),
			Event{ID: "evt_3", Type: "charge.refunded", Kind: EventRefundUpdated, Payment: "pi_3",
				Refunds: []RefundUpdate{{Reference: "re_1", Status: StatusSucceeded, Metadata: map[string]string{"refund_id": "r1"}}}},
		},
		"refund failed: its reason": {
			event("evt_4", "refund.updated", `{"id": "re_2", "object": "refund", "status": "failed", "failure_reason": "expired_or_canceled_card",
				"payment_intent": "pi_4", "metadata": {"refund_id": "r2"}}`),
			Event{ID: "evt_4", Type: "refund.updated", Kind: EventRefundUpdated, Payment: "pi_4", Metadata: map[string]string{"refund_id": "r2"},
				Refunds: []RefundUpdate{{Reference: "re_2", Status: StatusFailed, FailureReason: "expired_or_canceled_card", Metadata: map[string]string{"refund_id": "r2"}}}},
		},
		"another kind": {
			event("evt_5", "customer.created", `{"id": "cus_1", "object": "customer"}`),
			Event{ID: "evt_5", Type: "customer.created", Kind: EventOther},
		},
	} {
		t.Run(name, func(t *testing.T) {
			got, err := s.Event([]byte(tc.payload), signed(tc.payload, time.Now()))
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
}

// A webhook that is not Stripe's, or too old to trust, is ErrBadSignature;
// a signed body that is no event is another error.
func TestStripeEventSignatures(t *testing.T) {
	s := &Stripe{WebhookSecret: testWebhookSecret}
	payload := event("evt_1", "payment_intent.succeeded", `{"id": "pi_1", "object": "payment_intent", "amount": 100, "currency": "egp"}`)
	other := &Stripe{WebhookSecret: "whsec_someone_else"}
	for name, tc := range map[string]struct {
		gateway   *Stripe
		payload   string
		signature string
	}{
		"no signature":              {s, payload, ""},
		"a malformed header":        {s, payload, "not-a-header"},
		"another secret":            {other, payload, signed(payload, time.Now())},
		"a changed body":            {s, payload + " ", signed(payload, time.Now())},
		"older than 300 s":          {s, payload, signed(payload, time.Now().Add(-301*time.Second))},
		"signed for another moment": {s, payload, signed(payload, time.Now().Add(-time.Hour))},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := tc.gateway.Event([]byte(tc.payload), tc.signature)
			require.ErrorIs(t, err, ErrBadSignature)
		})
	}

	_, err := s.Event([]byte(payload), signed(payload, time.Now().Add(-290*time.Second)))
	require.NoError(t, err, "within the tolerance")

	garbage := `{"id": 7}`
	_, err = s.Event([]byte(garbage), signed(garbage, time.Now()))
	require.Error(t, err)
	require.NotErrorIs(t, err, ErrBadSignature, "signed, but not an event")
}

// A 4xx is the gateway's final word (RefusedError, by status and code);
// 408, 409, 429, 5xx and the network are for Temporal to retry.
func TestStripeErrorsRefusedOrRetried(t *testing.T) {
	network := errors.New("connection refused")
	require.Nil(t, stripeError(nil))
	require.Same(t, network, stripeError(network))
	for status, refused := range map[int]bool{
		http.StatusBadRequest: true, http.StatusUnauthorized: true, http.StatusPaymentRequired: true, http.StatusNotFound: true,
		http.StatusRequestTimeout: false, http.StatusConflict: false, http.StatusTooManyRequests: false,
		http.StatusInternalServerError: false, http.StatusBadGateway: false,
	} {
		err := stripeError(&stripe.Error{HTTPStatusCode: status, Code: "resource_missing", Msg: "No such payment_intent"})
		var r *RefusedError
		require.Equal(t, refused, errors.As(err, &r), "status %d", status)
		if refused {
			require.Equal(t, RefusedError{Status: status, Code: "resource_missing", Message: "No such payment_intent"}, *r)
		}
	}
}
