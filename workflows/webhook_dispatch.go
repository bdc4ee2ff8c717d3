package workflows

import (
	"errors"
	"time"

	"github.com/google/uuid"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/merchantsvc/svc/activities"
)

// DispatchInput names a batch of first attempts and the ladder its failures follow.
type DispatchInput struct {
	BatchID  uuid.UUID
	Schedule []time.Duration
	// Store names the batch's store in its ladders' summaries (empty in
	// histories written before).
	Store string
	// Shape is the workflow's shape the dispatcher started it with:
	// DispatchShape since it was introduced, 0 in histories from before
	// (the first attempts as a regular activity).
	Shape int
}

// DispatchShape is today's shape: the first attempts run as a local
// activity in the worker that took the batch's workflow task, so a batch
// costs the server one workflow task and no activity task (6 history
// events on the happy path instead of 11, and no trip through matching;
// docs/decisions.md). A worker that dies mid-batch leaves its workflow task
// to time out (10 s), and the next worker runs the activity again: the
// deliveries it had recorded are not sent twice.
const DispatchShape = 1

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

// DispatchHeartbeat is how long a batch's activity (in runs from before
// DispatchShape) may go without a heartbeat before Temporal hands it to
// another worker. The activity beats on
// every answer, and a receiver has webhook.Timeout (10 s) to answer, so twice
// that never cuts off a live batch and a killed worker's batch resumes soon.
const DispatchHeartbeat = 20 * time.Second

// Dispatch sends a batch's first attempts in one local activity and starts
// a retry ladder only for the deliveries that failed. The happy path costs
// one workflow task per batch rather than a workflow per delivery.
func Dispatch(ctx workflow.Context, in DispatchInput) (DispatchResult, error) {
	retry := &temporal.RetryPolicy{InitialInterval: time.Second, MaximumAttempts: 10}
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: 10 * time.Minute,
		HeartbeatTimeout:    DispatchHeartbeat,
		RetryPolicy:         retry,
	})
	attempts := activities.FirstAttemptsInput{BatchID: in.BatchID, Final: len(in.Schedule) == 0}
	var first workflow.Future
	if in.Shape == DispatchShape {
		first = workflow.ExecuteLocalActivity(workflow.WithLocalActivityOptions(ctx, workflow.LocalActivityOptions{
			StartToCloseTimeout: 10 * time.Minute,
			RetryPolicy:         retry,
		}), a.SendFirstAttempts, attempts)
	} else {
		first = workflow.ExecuteActivity(ctx, a.SendFirstAttempts, attempts)
	}
	var out activities.FirstAttemptsResult
	err := first.Get(ctx, &out)
	if err != nil {
		return DispatchResult{}, err
	}
	for _, f := range out.Failed {
		opts := DeliveryWork(f.StoreID, f.DeliveryID, "", 2, in.Store).childOptions(DeliveryWorkflowID(f.DeliveryID))
		opts.ParentClosePolicy = enumspb.PARENT_CLOSE_POLICY_ABANDON
		child := workflow.ExecuteChildWorkflow(workflow.WithChildOptions(ctx, opts), Delivery, DeliveryInput{StoreID: f.StoreID, DeliveryID: f.DeliveryID, Schedule: in.Schedule, NextAttempt: 2})
		// Wait only for the ladder to exist; it outlives this workflow.
		var started workflow.Execution
		if err := child.GetChildWorkflowExecution().Get(ctx, &started); err != nil && !isAlreadyStarted(err) {
			return DispatchResult{}, err
		}
	}
	return DispatchResult{Failed: len(out.Failed)}, nil
}

func isAlreadyStarted(err error) bool {
	var already *temporal.ChildWorkflowExecutionAlreadyStartedError
	return errors.As(err, &already)
}
