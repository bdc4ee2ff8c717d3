package activities

import (
	"context"
	"errors"
	"strings"

	"github.com/google/uuid"
	"go.temporal.io/sdk/temporal"

	"github.com/merchantsvc/svc/internal/gateway"
	"github.com/merchantsvc/svc/storage"
)

// RefundAtGatewayInput names a card refund going back through the gateway.
type RefundAtGatewayInput struct {
	StoreID  uuid.UUID
	RefundID uuid.UUID
}

// RefundAtGatewayResult is the refund's status after the call.
type RefundAtGatewayResult struct {
	Status string
}

// RefundAtGateway asks the store's gateway to pay a pending refund back to
// the card, under the refund's id as idempotency key, and records the
// answer. A transient failure is returned for Temporal to retry; a refusal
// (or a store without a connected gateway) fails the refund, which frees
// its amount. A refund already settled, or already accepted by the gateway
// and waiting for its confirmation, is left as it is.
func (a *Activities) RefundAtGateway(ctx context.Context, in RefundAtGatewayInput) (RefundAtGatewayResult, error) {
	req, err := a.DB.FindGatewayRefundRequest(ctx, in.StoreID, in.RefundID)
	if err != nil {
		return RefundAtGatewayResult{}, err
	}
	if req.Refund.Status != storage.RefundPending || req.Refund.Reference != nil {
		return RefundAtGatewayResult{Status: req.Refund.Status}, nil
	}
	account, err := a.DB.FindGatewayAccount(ctx, a.Secrets, in.StoreID, req.Provider)
	if errors.Is(err, storage.ErrNotFound) || errors.Is(err, storage.ErrNoSecretsKey) {
		return a.recordGatewayRefund(ctx, in, gateway.RefundResult{Status: gateway.StatusFailed, FailureReason: "gateway_not_connected"})
	}
	if err != nil {
		return RefundAtGatewayResult{}, err
	}
	g, err := a.gatewayFor(account)
	if err != nil {
		return RefundAtGatewayResult{}, err
	}
	result, err := g.Refund(ctx, gateway.Refund{IdempotencyKey: "refund:" + in.RefundID.String(), Payment: req.Payment,
		Amount: req.Amount, Currency: strings.ToLower(req.Currency),
		Metadata: map[string]string{"store_id": in.StoreID.String(), "order_id": req.Refund.OrderID.String(), "refund_id": in.RefundID.String()}})
	var refused *gateway.RefusedError
	if errors.As(err, &refused) {
		return a.recordGatewayRefund(ctx, in, gateway.RefundResult{Status: gateway.StatusFailed, FailureReason: refused.Error()})
	}
	if err != nil {
		return RefundAtGatewayResult{}, err
	}
	return a.recordGatewayRefund(ctx, in, result)
}

// FailGatewayRefundInput is a gateway refund the gateway never answered.
type FailGatewayRefundInput struct {
	RefundAtGatewayInput
	Reason string
}

// FailGatewayRefund fails a refund the gateway did not answer within the
// workflow's day of retries; its amount is refundable again.
func (a *Activities) FailGatewayRefund(ctx context.Context, in FailGatewayRefundInput) (RefundAtGatewayResult, error) {
	return a.recordGatewayRefund(ctx, in.RefundAtGatewayInput, gateway.RefundResult{Status: gateway.StatusFailed, FailureReason: in.Reason})
}

func (a *Activities) recordGatewayRefund(ctx context.Context, in RefundAtGatewayInput, result gateway.RefundResult) (RefundAtGatewayResult, error) {
	var refund storage.Refund
	err := a.DB.InTx(ctx, func(tx *storage.Tx) error {
		var err error
		refund, err = tx.RecordGatewayRefund(ctx, in.StoreID, in.RefundID, result.Status, result.Reference, result.FailureReason)
		return err
	})
	return RefundAtGatewayResult{Status: refund.Status}, err
}

func (a *Activities) gatewayFor(account storage.GatewayAccount) (gateway.Gateway, error) {
	g, err := gateway.Open(gateway.Account{Provider: account.Provider, SecretKey: account.SecretKey, APIBase: a.StripeAPIBase})
	if err != nil {
		return nil, temporal.NewNonRetryableApplicationError(err.Error(), "UnknownProvider", err)
	}
	return g, nil
}
