package workflows

import (
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/merchantsvc/svc/activities"
)

// AbandonmentScheduleID names the Temporal schedule that sweeps every 60 s.
const AbandonmentScheduleID = "abandonment-sweep"

// AbandonmentSweep marks the inactive carts of every store abandoned (the
// schedule's action; the list endpoint also marks lazily).
func AbandonmentSweep(ctx workflow.Context) (int, error) {
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: time.Minute,
		RetryPolicy:         &temporal.RetryPolicy{InitialInterval: time.Second, MaximumAttempts: 3},
	})
	var marked int
	err := workflow.ExecuteActivity(actx, a.SweepAbandonedCarts).Get(ctx, &marked)
	return marked, err
}

// RecoveryEmailWorkflowID is one send of a cart's recovery email.
func RecoveryEmailWorkflowID(in activities.RecoveryEmailInput, sendID string) string {
	return "recovery-email:" + in.CartID.String() + ":" + sendID
}

// RecoveryEmail sends an abandoned cart's recovery email over SMTP.
func RecoveryEmail(ctx workflow.Context, in activities.RecoveryEmailInput) (activities.RecoveryEmailResult, error) {
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: 30 * time.Second,
		RetryPolicy:         &temporal.RetryPolicy{InitialInterval: time.Second, MaximumAttempts: 4},
	})
	var out activities.RecoveryEmailResult
	err := workflow.ExecuteActivity(actx, a.SendRecoveryEmail, in).Get(ctx, &out)
	return out, err
}
