package workflows

import (
	"time"

	"github.com/google/uuid"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/merchantsvc/svc/activities"
)

// RefundInput names a card refund going back through the store's gateway.
type RefundInput struct {
	StoreID  uuid.UUID
	RefundID uuid.UUID
}

// RefundResult is the refund's status when the workflow ends: succeeded,
// failed, or pending while the gateway has accepted it and not yet
// confirmed it.
type RefundResult struct {
	Status string
}

// RefundWorkflowID is the id of a refund's gateway workflow.
func RefundWorkflowID(refundID uuid.UUID) string {
	return "refund:" + refundID.String()
}

// refundRetryWindow is how long a gateway that does not answer is retried
// before the refund is failed (and its amount refundable again).
const refundRetryWindow = 24 * time.Hour

// Refund pays a card refund back through the gateway (decisions §13, §18),
// retrying transient failures for a day under one idempotency key; then it
// fails the refund.
func Refund(ctx workflow.Context, in RefundInput) (RefundResult, error) {
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout:    time.Minute,
		ScheduleToCloseTimeout: refundRetryWindow,
		// A day holds about 55 attempts; the attempt cap only keeps the
		// day (ScheduleToClose) the bound everywhere, the test suite too.
		RetryPolicy: &temporal.RetryPolicy{InitialInterval: 2 * time.Second, BackoffCoefficient: 2, MaximumInterval: 30 * time.Minute,
			MaximumAttempts: 200},
	})
	ask := activities.RefundAtGatewayInput{StoreID: in.StoreID, RefundID: in.RefundID}
	var out activities.RefundAtGatewayResult
	err := workflow.ExecuteActivity(actx, a.RefundAtGateway, ask).Get(ctx, &out)
	if err == nil {
		return RefundResult{Status: out.Status}, nil
	}
	fctx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: time.Minute,
		RetryPolicy:         &temporal.RetryPolicy{InitialInterval: 2 * time.Second, BackoffCoefficient: 2, MaximumInterval: time.Minute},
	})
	fail := activities.FailGatewayRefundInput{RefundAtGatewayInput: ask, Reason: "gateway_unreachable: " + err.Error()}
	if ferr := workflow.ExecuteActivity(fctx, a.FailGatewayRefund, fail).Get(ctx, &out); ferr != nil {
		return RefundResult{}, ferr
	}
	return RefundResult{Status: out.Status}, nil
}
