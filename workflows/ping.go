// Package workflows holds deterministic orchestration only: no I/O, no
// time.Now, no goroutines, no map iteration. Side effects are activities.
package workflows

import (
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/merchantsvc/svc/activities"
)

// a is the typed reference used to name activities.
var a *activities.Activities

// PingInput names the caller of a smoke run.
type PingInput struct {
	From string
}

// PingResult proves a worker ran an activity against Postgres.
type PingResult struct {
	Greeting     string
	DatabaseTime time.Time
}

// PingWorkflowID is the id of the smoke workflow for a run.
func PingWorkflowID(run string) string { return "ping:" + run }

// Ping is the smoke workflow: one activity that reaches the database.
func Ping(ctx workflow.Context, in PingInput) (PingResult, error) {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: 10 * time.Second,
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 3},
	})
	var dbTime time.Time
	if err := workflow.ExecuteActivity(ctx, a.CheckDatabase).Get(ctx, &dbTime); err != nil {
		return PingResult{}, err
	}
	return PingResult{Greeting: "pong to " + in.From, DatabaseTime: dbTime}, nil
}
