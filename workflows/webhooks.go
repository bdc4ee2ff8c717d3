package workflows

import (
	"errors"
	"time"

	"github.com/google/uuid"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/merchantsvc/svc/activities"
	"github.com/merchantsvc/svc/storage"
)

// DefaultRetrySchedule is the wait before each retry (spec §6.2).
var DefaultRetrySchedule = []time.Duration{10 * time.Second, 30 * time.Second, 2 * time.Minute, 10 * time.Minute, 30 * time.Minute}

// attemptOptions run one attempt: the 10 s HTTP timeout plus recording.
// Activity retries cover infrastructure faults only; HTTP failures are
// outcomes, retried by the ladder's durable timers.
var attemptOptions = workflow.ActivityOptions{
	StartToCloseTimeout: 30 * time.Second,
	RetryPolicy:         &temporal.RetryPolicy{InitialInterval: time.Second, MaximumAttempts: 5},
}

// DispatchInput names a batch of first attempts.
type DispatchInput struct {
	BatchID  uuid.UUID
	Schedule []time.Duration
}

// DispatchResult counts what the batch did.
type DispatchResult struct {
	Failed int // deliveries handed to a retry ladder
}

// WebhookTaskQueue is the queue of webhook dispatches, ladders and tests
// beside taskQueue: deliveries never wait behind other work.
func WebhookTaskQueue(taskQueue string) string { return taskQueue + "-webhooks" }

// DispatchWorkflowID is the id of a batch's workflow; the dispatcher derives
// it from the batch row, so a second dispatcher cannot start it twice.
func DispatchWorkflowID(batchID uuid.UUID) string { return "webhook-dispatch:" + batchID.String() }

// DeliveryWorkflowID is the id of one delivery's retry ladder.
func DeliveryWorkflowID(deliveryID uuid.UUID) string {
	return "webhook-delivery:" + deliveryID.String()
}

// Dispatch sends a batch's first attempts in one activity and starts a retry
// ladder only for the deliveries that failed. The happy path costs one
// workflow and one activity per batch rather than per delivery.
func Dispatch(ctx workflow.Context, in DispatchInput) (DispatchResult, error) {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: 10 * time.Minute,
		HeartbeatTimeout:    time.Minute,
		RetryPolicy:         &temporal.RetryPolicy{InitialInterval: time.Second, MaximumAttempts: 10},
	})
	var failed []storage.DeliveryRef
	err := workflow.ExecuteActivity(ctx, a.SendFirstAttempts,
		activities.FirstAttemptsInput{BatchID: in.BatchID, Final: len(in.Schedule) == 0}).Get(ctx, &failed)
	if err != nil {
		return DispatchResult{}, err
	}
	for _, f := range failed {
		child := workflow.ExecuteChildWorkflow(workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{
			WorkflowID:        DeliveryWorkflowID(f.DeliveryID),
			ParentClosePolicy: enumspb.PARENT_CLOSE_POLICY_ABANDON,
		}), Delivery, DeliveryInput{StoreID: f.StoreID, DeliveryID: f.DeliveryID, Schedule: in.Schedule, NextAttempt: 2})
		// Wait only for the ladder to exist; it outlives this workflow.
		var started workflow.Execution
		if err := child.GetChildWorkflowExecution().Get(ctx, &started); err != nil && !isAlreadyStarted(err) {
			return DispatchResult{}, err
		}
	}
	return DispatchResult{Failed: len(failed)}, nil
}

func isAlreadyStarted(err error) bool {
	var already *temporal.ChildWorkflowExecutionAlreadyStartedError
	return errors.As(err, &already)
}

// DeliveryInput is one delivery's ladder.
type DeliveryInput struct {
	StoreID    uuid.UUID
	DeliveryID uuid.UUID
	// Schedule is the wait before each remaining attempt.
	Schedule []time.Duration
	// NextAttempt is the number of the first attempt this ladder makes.
	NextAttempt int
}

// DeliveryResult is how the ladder ended.
type DeliveryResult struct {
	Status   string
	Attempts int
}

// Delivery retries one delivery after each wait of its schedule (durable
// timers): until a 2xx, a 410, a switched-off subscription, or the last
// attempt, whose failure exhausts the delivery and switches the subscription off.
func Delivery(ctx workflow.Context, in DeliveryInput) (DeliveryResult, error) {
	ctx = workflow.WithActivityOptions(ctx, attemptOptions)
	result := DeliveryResult{Status: storage.DeliveryRetrying}
	for i, wait := range in.Schedule {
		if wait > 0 {
			if err := workflow.Sleep(ctx, wait); err != nil {
				return result, err
			}
		}
		attempt := in.NextAttempt + i
		var out activities.AttemptOutcome
		err := workflow.ExecuteActivity(ctx, a.AttemptDelivery, activities.AttemptInput{
			StoreID: in.StoreID, DeliveryID: in.DeliveryID, Attempt: attempt, Final: i == len(in.Schedule)-1,
		}).Get(ctx, &out)
		if err != nil {
			return result, err
		}
		result = DeliveryResult{Status: out.Status, Attempts: attempt}
		if out.Status != storage.DeliveryRetrying {
			return result, nil
		}
	}
	return result, nil
}

// WebhookTestWorkflowID is the id of one test ping.
func WebhookTestWorkflowID(deliveryID uuid.UUID) string { return "webhook-test:" + deliveryID.String() }

// WebhookTestInput names the ping delivery the API recorded.
type WebhookTestInput struct {
	StoreID    uuid.UUID
	DeliveryID uuid.UUID
}

// WebhookTestResult is what the endpoint answered.
type WebhookTestResult = activities.AttemptOutcome

// WebhookTest sends one signed webhook.ping at once and returns what the
// endpoint answered; it is never retried.
func WebhookTest(ctx workflow.Context, in WebhookTestInput) (WebhookTestResult, error) {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: 30 * time.Second,
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 1},
	})
	var out WebhookTestResult
	err := workflow.ExecuteActivity(ctx, a.AttemptDelivery, activities.AttemptInput{
		StoreID: in.StoreID, DeliveryID: in.DeliveryID, Attempt: 1, Final: true, Ping: true,
	}).Get(ctx, &out)
	return out, err
}
