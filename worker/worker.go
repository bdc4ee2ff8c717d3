// Package worker registers the workflows and activities on the task queue.
package worker

import (
	"context"
	"errors"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	sdkworker "go.temporal.io/sdk/worker"

	"github.com/merchantsvc/svc/activities"
	"github.com/merchantsvc/svc/workflows"
)

// DefaultTaskQueue is where the API starts workflows and workers poll.
const DefaultTaskQueue = "svc"

// Register puts every workflow and activity on r.
func Register(r sdkworker.Registry, acts *activities.Activities) {
	r.RegisterWorkflow(workflows.Ping)
	r.RegisterWorkflow(workflows.Dispatch)
	r.RegisterWorkflow(workflows.Delivery)
	r.RegisterWorkflow(workflows.WebhookTest)
	r.RegisterWorkflow(workflows.ProductImage)
	r.RegisterWorkflow(workflows.ProductImport)
	r.RegisterWorkflow(workflows.OrderPlaced)
	r.RegisterWorkflow(workflows.DraftConversion)
	r.RegisterWorkflow(workflows.OrderMessage)
	r.RegisterWorkflow(workflows.PaymentProof)
	r.RegisterWorkflow(workflows.EInvoiceSync)
	r.RegisterWorkflow(workflows.AbandonmentSweep)
	r.RegisterWorkflow(workflows.RecoveryEmail)
	r.RegisterActivity(acts)
}

// StopTimeout is how long a stopping worker lets running activities finish
// (long ones heartbeat and resume on another worker after it).
const StopTimeout = 30 * time.Second

// New creates a worker on taskQueue with everything registered. Stop stops
// polling at once and waits up to StopTimeout for running activities.
func New(c client.Client, taskQueue string, acts *activities.Activities) sdkworker.Worker {
	w := sdkworker.New(c, taskQueue, sdkworker.Options{WorkerStopTimeout: StopTimeout})
	Register(w, acts)
	return w
}

// EnsureSchedules creates the abandonment sweep's schedule (every 60 s, no
// overlap) unless it exists; every worker calls it at start.
func EnsureSchedules(ctx context.Context, c client.Client, taskQueue string) error {
	_, err := c.ScheduleClient().Create(ctx, client.ScheduleOptions{
		ID:      workflows.AbandonmentScheduleID,
		Spec:    client.ScheduleSpec{Intervals: []client.ScheduleIntervalSpec{{Every: time.Minute}}},
		Overlap: enumspb.SCHEDULE_OVERLAP_POLICY_SKIP,
		Action: &client.ScheduleWorkflowAction{
			ID:        workflows.AbandonmentScheduleID,
			Workflow:  workflows.AbandonmentSweep,
			TaskQueue: taskQueue,
		},
	})
	if errors.Is(err, temporal.ErrScheduleAlreadyRunning) {
		return nil
	}
	return err
}
