package workflows

import (
	"errors"
	"time"

	"github.com/google/uuid"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/merchantsvc/svc/activities"
)

// OrderPlacedInput names a placed order.
type OrderPlacedInput struct {
	StoreID uuid.UUID
	OrderID uuid.UUID
	// Shape is the workflow's shape the dispatcher started it with:
	// OrderPlacedShape since it was introduced, 0 in histories from before,
	// which choose their shape with GetVersion.
	Shape int
}

// OrderPlacedShape is today's shape: one local activity runs the side
// effects side by side after one read for all of them
// (activities.RunOrderSideEffects). Carried in the input, the shape costs
// the history nothing, where the GetVersion calls it replaces cost every
// order three markers and three search-attribute upserts, each a
// visibility write on the server (docs/decisions.md, "The order-placed
// workflow's shape in its input").
const OrderPlacedShape = 2

// orderPlacedShapeThreeLocal is the shape before: the side effects side
// by side as three local activities, each reading the order and the
// settings for itself. Workflows begun in it replay in it.
const orderPlacedShapeThreeLocal = 1

// OrderPlacedResult is what each side effect did, by kind (email, chat,
// shipment; rollup in histories from before analytics, §17): succeeded,
// skipped or failed.
type OrderPlacedResult struct {
	Steps map[string]string
}

// OrderPlacedWorkflowID is the id of an order's side effects; deriving it
// from the order means a repeated start can never run them twice.
func OrderPlacedWorkflowID(orderID uuid.UUID) string { return "order-placed:" + orderID.String() }

// sideEffectOptions retry each side effect a few times before giving up on it.
// The start-to-close timeout is also how late a side effect runs when a
// stopping worker drops a task it had polled but not started (the Go SDK
// does not drain them, temporalio/sdk-go#1197): the mail and chat clients
// give up after 15 s, so 30 s bounds both.
var sideEffectOptions = workflow.ActivityOptions{
	StartToCloseTimeout: 30 * time.Second,
	RetryPolicy:         &temporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2, MaximumAttempts: 5},
}

// localSideEffectOptions are sideEffectOptions for the side effects run as
// local activities: the same attempts and timeouts, and a bound on all of
// them together (five attempts of 30 s and their backoff).
var localSideEffectOptions = workflow.LocalActivityOptions{
	ScheduleToCloseTimeout: 5 * time.Minute,
	StartToCloseTimeout:    sideEffectOptions.StartToCloseTimeout,
	RetryPolicy:            sideEffectOptions.RetryPolicy,
}

// localSideEffects is the GetVersion change id of running the side effects
// as local activities: the worker that runs the workflow task runs them
// and records each as a marker, so an order costs the server one workflow
// task instead of a task-queue round trip and three events per step
// (docs/decisions.md). Histories recorded before it replay with activities.
const localSideEffects = "side-effects-as-local-activities"

// parallelSideEffects is the GetVersion change id of running the side
// effects side by side; histories recorded before it replay one at a time.
const parallelSideEffects = "side-effects-in-parallel"

// rollupInTransaction is the GetVersion change id of dropping the rollup
// step: the order's own transaction writes its analytics figures now
// (§17); histories recorded before it replay with the step.
const rollupInTransaction = "rollup-in-order-transaction"

// OrderPlacedSideEffects ends an order-placed workflow's summary in the
// Temporal UI; it names the steps below.
const OrderPlacedSideEffects = "3 side effects: email, chat, shipment"

// sideEffectStep is one side effect of a placed order and its activity.
type sideEffectStep struct {
	kind string
	fn   any
}

// OrderPlaced runs what follows a placed order: the status email, the chat
// confirmation and an automatic shipment when the store wants one. Each is
// an activity, retried and recorded once; one that keeps failing flags an
// autopilot exception and never fails the order.
func OrderPlaced(ctx workflow.Context, in OrderPlacedInput) (OrderPlacedResult, error) {
	if in.Shape == OrderPlacedShape {
		return orderPlacedInOneActivity(ctx, in)
	}
	actx := workflow.WithActivityOptions(ctx, sideEffectOptions)
	order := activities.OrderInput{StoreID: in.StoreID, OrderID: in.OrderID}
	steps := []sideEffectStep{
		{"email", a.SendOrderEmail},
		{"chat", a.SendChatConfirmation},
		{"shipment", a.CreateOrderShipment},
	}
	// The steps do not depend on each other, so they run side by side: one
	// workflow task schedules all of them rather than one per step, which
	// is what bounds orders per second on a busy Temporal
	// (docs/benchmarks.md). They run as local activities, in the worker
	// that runs the workflow task. Histories from before OrderPlacedShape
	// say through their version markers which of these changes they had.
	lctx := workflow.WithLocalActivityOptions(ctx, localSideEffectOptions)
	local := func(i int) workflow.Future { return workflow.ExecuteLocalActivity(lctx, steps[i].fn, order) }
	start, parallel := local, true
	if in.Shape != orderPlacedShapeThreeLocal {
		if workflow.GetVersion(ctx, rollupInTransaction, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
			steps = append(steps, sideEffectStep{"rollup", a.RecordOrderRollup})
		}
		start = func(i int) workflow.Future { return workflow.ExecuteActivity(actx, steps[i].fn, order) }
		parallel = workflow.GetVersion(ctx, parallelSideEffects, workflow.DefaultVersion, 1) == 1
		if parallel && workflow.GetVersion(ctx, localSideEffects, workflow.DefaultVersion, 1) == 1 {
			start = local
		}
	}
	futures := make([]workflow.Future, len(steps))
	if parallel {
		for i := range steps {
			futures[i] = start(i)
		}
	}
	result := OrderPlacedResult{Steps: map[string]string{}}
	for i, step := range steps {
		if futures[i] == nil {
			futures[i] = start(i)
		}
		var out activities.SideEffectResult
		err := futures[i].Get(ctx, &out)
		if err == nil {
			result.Steps[step.kind] = out.Status
			continue
		}
		result.Steps[step.kind] = "failed"
		flag := activities.FlagSideEffectInput{StoreID: in.StoreID, OrderID: in.OrderID, Kind: step.kind, Reason: err.Error()}
		if err := workflow.ExecuteActivity(actx, a.FlagSideEffectFailure, flag).Get(ctx, nil); err != nil {
			return result, err
		}
	}
	return result, nil
}

// orderPlacedInOneActivity is OrderPlaced in today's shape: one local
// activity for the three side effects, so an order's workflow task records
// one marker, and its worker reads the order, its lines and the settings
// once instead of once per side effect. A side effect that still fails
// after the retries is flagged on its own, as in the shapes before.
func orderPlacedInOneActivity(ctx workflow.Context, in OrderPlacedInput) (OrderPlacedResult, error) {
	lctx := workflow.WithLocalActivityOptions(ctx, localSideEffectOptions)
	order := activities.OrderInput{StoreID: in.StoreID, OrderID: in.OrderID}
	var out activities.OrderSideEffectsResult
	err := workflow.ExecuteLocalActivity(lctx, a.RunOrderSideEffects, order).Get(ctx, &out)
	if err != nil {
		// A failed side effect names itself in the error's details; an
		// error without them (the read before any ran) fails all three.
		var appErr *temporal.ApplicationError
		if !errors.As(err, &appErr) || appErr.Type() != activities.ErrSideEffectsFailed || appErr.Details(&out) != nil {
			out = activities.OrderSideEffectsResult{Steps: map[string]activities.SideEffectResult{}}
			for _, kind := range activities.OrderSideEffectKinds {
				out.Steps[kind] = activities.SideEffectResult{Status: "failed", Detail: err.Error()}
			}
		}
	}
	actx := workflow.WithActivityOptions(ctx, sideEffectOptions)
	result := OrderPlacedResult{Steps: map[string]string{}}
	for _, kind := range activities.OrderSideEffectKinds {
		step := out.Steps[kind]
		result.Steps[kind] = step.Status
		if step.Status != "failed" {
			continue
		}
		flag := activities.FlagSideEffectInput{StoreID: in.StoreID, OrderID: in.OrderID, Kind: kind, Reason: step.Detail}
		if err := workflow.ExecuteActivity(actx, a.FlagSideEffectFailure, flag).Get(ctx, nil); err != nil {
			return result, err
		}
	}
	return result, nil
}
