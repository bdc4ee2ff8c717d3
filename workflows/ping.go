package workflows

import (
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/merchantsvc/svc/activities"
)

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
	var out activities.CheckDatabaseResult
	if err := workflow.ExecuteActivity(ctx, a.CheckDatabase, activities.CheckDatabaseInput{}).Get(ctx, &out); err != nil {
		return PingResult{}, err
	}
	return PingResult{Greeting: "pong to " + in.From, DatabaseTime: out.Now}, nil
}
