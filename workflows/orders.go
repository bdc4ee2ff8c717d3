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

// OrderInput names an order.
type OrderInput = activities.OrderInput

// OrderPlacedWorkflowID is the id of an order's side effects; deriving it
// from the order means a repeated start can never run them twice.
func OrderPlacedWorkflowID(orderID uuid.UUID) string { return "order-placed:" + orderID.String() }

// DraftConversionWorkflowID is the id of a draft's conversion.
func DraftConversionWorkflowID(orderID uuid.UUID) string {
	return "draft-conversion:" + orderID.String()
}

// sideEffectOptions retry each side effect a few times before giving up on it.
// The start-to-close timeout is also how late a side effect runs when a
// stopping worker drops a task it had polled but not started (the Go SDK
// does not drain them, temporalio/sdk-go#1197): the mail and chat clients
// give up after 15 s, so 30 s bounds both.
var sideEffectOptions = workflow.ActivityOptions{
	StartToCloseTimeout: 30 * time.Second,
	RetryPolicy:         &temporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2, MaximumAttempts: 5},
}

// OrderPlacedResult is what each side effect did.
type OrderPlacedResult struct {
	Steps map[string]string
}

// OrderPlaced runs what follows a placed order: the status email, the chat
// confirmation, an automatic shipment when the store wants one, and the
// analytics rollup. Each is an activity, retried and recorded once; one that
// keeps failing flags an autopilot exception and never fails the order.
func OrderPlaced(ctx workflow.Context, in OrderInput) (OrderPlacedResult, error) {
	actx := workflow.WithActivityOptions(ctx, sideEffectOptions)
	steps := []struct {
		kind string
		fn   any
	}{
		{"email", a.SendOrderEmail},
		{"chat", a.SendChatConfirmation},
		{"shipment", a.CreateOrderShipment},
		{"rollup", a.RecordOrderRollup},
	}
	// The steps do not depend on each other, so they run side by side: one
	// workflow task schedules all four rather than one per step, which is
	// what bounds orders per second on a busy Temporal (docs/benchmarks.md).
	// Workflows begun before this change replay one step at a time.
	futures := make([]workflow.Future, len(steps))
	start := func(i int) { futures[i] = workflow.ExecuteActivity(actx, steps[i].fn, in) }
	if workflow.GetVersion(ctx, "side-effects-in-parallel", workflow.DefaultVersion, 1) == 1 {
		for i := range steps {
			start(i)
		}
	}
	result := OrderPlacedResult{Steps: map[string]string{}}
	for i, step := range steps {
		if futures[i] == nil {
			start(i)
		}
		var out activities.SideEffectResult
		err := futures[i].Get(ctx, &out)
		if err == nil {
			result.Steps[step.kind] = out.Status
			continue
		}
		result.Steps[step.kind] = "failed"
		if err := workflow.ExecuteActivity(actx, a.FlagSideEffectFailure, in, step.kind, err.Error()).Get(ctx, nil); err != nil {
			return result, err
		}
	}
	return result, nil
}

// ConversionState is what the draft-conversion query reports: done, and
// when the conversion was refused, the API error code and message.
type ConversionState struct {
	Done    bool
	Code    string
	Message string
}

// ConversionQuery is the query the API polls to learn that a draft moved.
const ConversionQuery = "conversion"

// DraftConversion moves a draft to PENDING and then runs the same side
// effects as a new order, in an order-placed workflow of its own.
func DraftConversion(ctx workflow.Context, in OrderInput) (OrderPlacedResult, error) {
	state := ConversionState{}
	if err := workflow.SetQueryHandler(ctx, ConversionQuery, func() (ConversionState, error) { return state, nil }); err != nil {
		return OrderPlacedResult{}, err
	}
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: 30 * time.Second,
		RetryPolicy:         &temporal.RetryPolicy{InitialInterval: time.Second, MaximumAttempts: 3},
	})
	if err := workflow.ExecuteActivity(actx, a.ConvertDraftOrder, in).Get(ctx, nil); err != nil {
		// A refusal ends the conversion; the query still answers on the closed workflow.
		state = ConversionState{Done: true, Code: "INTERNAL", Message: "the conversion failed"}
		var refused *temporal.ApplicationError
		if errors.As(err, &refused) && refused.NonRetryable() {
			state.Code, state.Message = refused.Type(), refused.Message()
		}
		return OrderPlacedResult{}, nil
	}
	state.Done = true
	child := workflow.ExecuteChildWorkflow(workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{
		WorkflowID:        OrderPlacedWorkflowID(in.OrderID),
		ParentClosePolicy: enumspb.PARENT_CLOSE_POLICY_ABANDON,
	}), OrderPlaced, in)
	var result OrderPlacedResult
	return result, child.Get(ctx, &result)
}

// OrderMessageInput asks for one message about an order now.
type OrderMessageInput struct {
	OrderInput
	Kind string // "email" or "chat"
}

// OrderMessageResult is what the send did.
type OrderMessageResult = activities.SideEffectResult

// OrderMessageWorkflowID names one resend request.
func OrderMessageWorkflowID(in OrderMessageInput, request string) string {
	return "order-message:" + in.OrderID.String() + ":" + in.Kind + ":" + request
}

// OrderMessage resends the status email or the chat confirmation (the
// resend endpoints); the send-once record is bypassed, every guard is not.
func OrderMessage(ctx workflow.Context, in OrderMessageInput) (OrderMessageResult, error) {
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: 30 * time.Second,
		RetryPolicy:         &temporal.RetryPolicy{InitialInterval: time.Second, MaximumAttempts: 2},
	})
	fn := any(a.ResendOrderEmail)
	if in.Kind == "chat" {
		fn = a.ResendChatConfirmation
	}
	var out OrderMessageResult
	err := workflow.ExecuteActivity(actx, fn, in.OrderInput).Get(ctx, &out)
	return out, err
}
