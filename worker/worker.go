// Package worker registers the workflows and activities on the task queue.
package worker

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/temporal"
	sdkworker "go.temporal.io/sdk/worker"

	"github.com/merchantsvc/svc/activities"
	"github.com/merchantsvc/svc/workflows"
)

// Register puts every workflow and activity on r.
func Register(r sdkworker.Registry, acts *activities.Activities) {
	RegisterWorkflows(r)
	r.RegisterActivity(acts)
}

// WorkflowRegistry is where RegisterWorkflows puts the workflows: a worker,
// or a replayer checking recorded histories against the code.
type WorkflowRegistry interface {
	RegisterWorkflow(w any)
}

// RegisterWorkflows puts every workflow on r.
func RegisterWorkflows(r WorkflowRegistry) {
	r.RegisterWorkflow(workflows.Ping)
	r.RegisterWorkflow(workflows.Dispatch)
	r.RegisterWorkflow(workflows.Delivery)
	r.RegisterWorkflow(workflows.WebhookTest)
	r.RegisterWorkflow(workflows.ProductImage)
	r.RegisterWorkflow(workflows.Media)
	r.RegisterWorkflow(workflows.ProductImport)
	r.RegisterWorkflow(workflows.OrderPlaced)
	r.RegisterWorkflow(workflows.OrderMessage)
	r.RegisterWorkflow(workflows.PaymentProof)
	r.RegisterWorkflow(workflows.EInvoiceSync)
	r.RegisterWorkflow(workflows.AbandonmentSweep)
	r.RegisterWorkflow(workflows.RecoveryEmail)
	r.RegisterWorkflow(workflows.PurgeExpired)
	r.RegisterWorkflow(workflows.ShipmentWaybill)
	r.RegisterWorkflow(workflows.Refund)
	r.RegisterWorkflow(workflows.CardPayment)
	r.RegisterWorkflow(workflows.InvitationMail)
	r.RegisterWorkflow(workflows.AccountMail)
	r.RegisterWorkflow(workflows.GatewayChangeMail)
	r.RegisterWorkflow(workflows.CollectionRebuild)
	r.RegisterWorkflow(workflows.GiftCardMail)
	r.RegisterWorkflow(workflows.GiftCardWhatsApp)
	r.RegisterWorkflow(workflows.SignInCode)
}

// StopTimeout is how long a stopping worker lets running activities finish
// (long ones heartbeat and resume on another worker after it).
const StopTimeout = 30 * time.Second

// Worker polls a task queue and its webhook queue
// (workflows.WebhookTaskQueue). Webhook deliveries have their own queue so a
// backlog of other work (a burst of orders, each with its order-placed
// workflow) never delays them: each queue is matched on its own, and each can
// be watched and scaled on its own backlog.
type Worker struct {
	workers []sdkworker.Worker
}

// Options tune a worker beyond its queue and its activities' dependencies.
type Options struct {
	// Interceptors wrap every workflow and activity the worker runs (tests
	// use one to slow an import down and stop the worker in its middle).
	Interceptors []interceptor.WorkerInterceptor
}

// New creates a worker on taskQueue and its webhook queue, with everything
// registered on both. Stop stops polling at once and waits up to StopTimeout
// for running activities.
func New(c client.Client, taskQueue string, acts *activities.Activities, opts Options) *Worker {
	w := &Worker{}
	for _, queue := range []string{taskQueue, workflows.WebhookTaskQueue(taskQueue)} {
		one := sdkworker.New(c, queue, sdkworker.Options{WorkerStopTimeout: StopTimeout, Interceptors: opts.Interceptors})
		Register(one, acts)
		w.workers = append(w.workers, one)
	}
	return w
}

// Start starts polling both queues.
func (w *Worker) Start() error {
	for i, one := range w.workers {
		if err := one.Start(); err != nil {
			for _, started := range w.workers[:i] {
				started.Stop()
			}
			return err
		}
	}
	return nil
}

// Stop stops both pollers together, so the whole stop takes at most
// StopTimeout.
func (w *Worker) Stop() {
	var wg sync.WaitGroup
	for _, one := range w.workers {
		wg.Go(one.Stop)
	}
	wg.Wait()
}

// EnsureSchedules creates the schedules unless they exist: the abandonment
// sweep every 60 s and the purge of expired rows every hour, neither
// overlapping itself. Every worker calls it at start.
func EnsureSchedules(ctx context.Context, c client.Client, taskQueue string) error {
	for _, s := range []struct {
		id       string
		every    time.Duration
		workflow any
		kind     workflows.WorkKind
		summary  string
	}{
		{workflows.AbandonmentScheduleID, time.Minute, workflows.AbandonmentSweep, workflows.KindAbandonment, "abandoned checkouts of every store, every minute"},
		{workflows.PurgeScheduleID, time.Hour, workflows.PurgeExpired, workflows.KindPurge, "expired idempotency keys and sessions, old audit entries and webhook rows, every hour"},
	} {
		_, err := c.ScheduleClient().Create(ctx, client.ScheduleOptions{
			ID:      s.id,
			Spec:    client.ScheduleSpec{Intervals: []client.ScheduleIntervalSpec{{Every: s.every}}},
			Overlap: enumspb.SCHEDULE_OVERLAP_POLICY_SKIP,
			Action: &client.ScheduleWorkflowAction{ID: s.id, Workflow: s.workflow, TaskQueue: taskQueue,
				TypedSearchAttributes: workflows.Work{Kind: s.kind}.SearchAttributes(), StaticSummary: s.summary},
		})
		if errors.Is(err, temporal.ErrScheduleAlreadyRunning) {
			err = labelSchedule(ctx, c, s.id, workflows.Work{Kind: s.kind}, s.summary)
		}
		if err != nil {
			return fmt.Errorf("schedule %s: %w", s.id, err)
		}
	}
	return nil
}

// labelSchedule gives a schedule created before workflows carried search
// attributes its WorkKind and summary; one already labelled is left alone.
func labelSchedule(ctx context.Context, c client.Client, id string, work workflows.Work, summary string) error {
	return c.ScheduleClient().GetHandle(ctx, id).Update(ctx, client.ScheduleUpdateOptions{
		DoUpdate: func(in client.ScheduleUpdateInput) (*client.ScheduleUpdate, error) {
			action, ok := in.Description.Schedule.Action.(*client.ScheduleWorkflowAction)
			if !ok || action.StaticSummary == summary {
				return nil, temporal.ErrSkipScheduleUpdate
			}
			action.TypedSearchAttributes, action.StaticSummary = work.SearchAttributes(), summary
			return &client.ScheduleUpdate{Schedule: &in.Description.Schedule}, nil
		},
	})
}
