package workflows

import (
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/merchantsvc/svc/activities"
)

// AbandonmentScheduleID names the Temporal schedule that sweeps every 60 s;
// each scheduled run's workflow id starts with it.
const AbandonmentScheduleID = "abandonment-sweep"

// AbandonmentSweepResult counts the carts one sweep marked.
type AbandonmentSweepResult struct {
	Marked int
}

// AbandonmentSweep marks the inactive carts of every store abandoned (the
// schedule's action; the list endpoint also marks lazily). It takes no
// input: schedules created before this shape start it without arguments.
func AbandonmentSweep(ctx workflow.Context) (AbandonmentSweepResult, error) {
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: time.Minute,
		RetryPolicy:         &temporal.RetryPolicy{InitialInterval: time.Second, MaximumAttempts: 3},
	})
	var out activities.SweepAbandonedCartsResult
	err := workflow.ExecuteActivity(actx, a.SweepAbandonedCarts, activities.SweepAbandonedCartsInput{}).Get(ctx, &out)
	return AbandonmentSweepResult{Marked: out.Marked}, err
}
