package workflows

import (
	"time"

	"github.com/google/uuid"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/merchantsvc/svc/activities"
)

// RecoveryEmailInput names the cart and the link back to it.
type RecoveryEmailInput struct {
	StoreID uuid.UUID
	CartID  uuid.UUID
	Link    string
}

// RecoveryEmailResult is whom the email went to, and when.
type RecoveryEmailResult struct {
	To     string
	SentAt time.Time
}

// RecoveryEmailWorkflowID is one send of a cart's recovery email.
func RecoveryEmailWorkflowID(cartID uuid.UUID, sendID string) string {
	return "recovery-email:" + cartID.String() + ":" + sendID
}

// RecoveryEmail sends an abandoned cart's recovery email over SMTP.
func RecoveryEmail(ctx workflow.Context, in RecoveryEmailInput) (RecoveryEmailResult, error) {
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: 30 * time.Second,
		RetryPolicy:         &temporal.RetryPolicy{InitialInterval: time.Second, MaximumAttempts: 4},
	})
	var out activities.RecoveryEmailResult
	err := workflow.ExecuteActivity(actx, a.SendRecoveryEmail,
		activities.RecoveryEmailInput{StoreID: in.StoreID, CartID: in.CartID, Link: in.Link}).Get(ctx, &out)
	return RecoveryEmailResult{To: out.To, SentAt: out.SentAt}, err
}
