package workflows

import (
	"time"

	"github.com/google/uuid"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/merchantsvc/svc/activities"
)

// The refusals of an OrderMessage: non-retryable ApplicationErrors of these
// types, for the API to answer 409.
const (
	RefusalChatDisabled    = "CHAT_DISABLED"
	RefusalChatOptedOut    = "CHAT_OPTED_OUT"
	RefusalChatNotApproved = "CHAT_TEMPLATE_NOT_APPROVED"
	RefusalChatNoPhone     = "CHAT_NO_PHONE"
)

// The kinds of message OrderMessage resends.
const (
	OrderMessageEmail = "email"
	OrderMessageChat  = "chat"
)

// OrderMessageInput asks for one message about an order now.
type OrderMessageInput struct {
	StoreID uuid.UUID
	OrderID uuid.UUID
	Kind    string // OrderMessageEmail or OrderMessageChat
}

// OrderMessageResult is what the send did: the status and its detail (the
// template of a chat message).
type OrderMessageResult struct {
	Status string
	Detail string
}

// OrderMessageWorkflowID names one resend request.
func OrderMessageWorkflowID(orderID uuid.UUID, kind, request string) string {
	return "order-message:" + orderID.String() + ":" + kind + ":" + request
}

// OrderMessage resends the status email or the chat confirmation (the
// resend endpoints); the send-once record is bypassed, every guard is not. A
// guard that holds ends the workflow with its refusal.
func OrderMessage(ctx workflow.Context, in OrderMessageInput) (OrderMessageResult, error) {
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: 30 * time.Second,
		RetryPolicy:         &temporal.RetryPolicy{InitialInterval: time.Second, MaximumAttempts: 2},
	})
	fn := any(a.ResendOrderEmail)
	if in.Kind == OrderMessageChat {
		fn = a.ResendChatConfirmation
	}
	var out activities.SideEffectResult
	if err := workflow.ExecuteActivity(actx, fn, activities.OrderInput{StoreID: in.StoreID, OrderID: in.OrderID}).Get(ctx, &out); err != nil {
		return OrderMessageResult{}, err
	}
	if out.Status == activities.StatusRefused {
		return OrderMessageResult{}, temporal.NewNonRetryableApplicationError("the message was refused: "+out.Detail, out.Detail, nil)
	}
	return OrderMessageResult{Status: out.Status, Detail: out.Detail}, nil
}
