package workflows

import (
	"time"

	"github.com/google/uuid"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/merchantsvc/svc/activities"
)

// WebhookTestInput names the ping delivery the API recorded.
type WebhookTestInput struct {
	StoreID    uuid.UUID
	DeliveryID uuid.UUID
}

// WebhookTestResult is what the endpoint answered.
type WebhookTestResult struct {
	Status       string
	StatusCode   int
	ResponseBody string
	Error        string
	DurationMS   int64
}

// WebhookTestWorkflowID is the id of one test ping.
func WebhookTestWorkflowID(deliveryID uuid.UUID) string { return "webhook-test:" + deliveryID.String() }

// WebhookTest sends one signed webhook.ping at once and returns what the
// endpoint answered; it is never retried.
func WebhookTest(ctx workflow.Context, in WebhookTestInput) (WebhookTestResult, error) {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: 30 * time.Second,
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 1},
	})
	var out activities.AttemptOutcome
	err := workflow.ExecuteActivity(ctx, a.AttemptDelivery, activities.AttemptInput{
		StoreID: in.StoreID, DeliveryID: in.DeliveryID, Attempt: 1, Final: true, Ping: true,
	}).Get(ctx, &out)
	return WebhookTestResult{Status: out.Status, StatusCode: out.StatusCode, ResponseBody: out.ResponseBody,
		Error: out.Error, DurationMS: out.DurationMS}, err
}
