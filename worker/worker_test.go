package worker_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"

	"github.com/merchantsvc/svc/activities"
	"github.com/merchantsvc/svc/internal/testenv"
	"github.com/merchantsvc/svc/worker"
	"github.com/merchantsvc/svc/workflows"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// The smoke workflow runs on the real in-process Temporal server through a
// worker built by worker.New and reaches the real database.
func TestPingWorkflowRunsOnWorker(t *testing.T) {
	db := testenv.DB(t)
	c := testenv.Temporal(t)
	queue := testenv.TaskQueue(t)
	w := worker.New(c, queue, &activities.Activities{DB: db})
	require.NoError(t, w.Start())
	t.Cleanup(w.Stop)

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: workflows.PingWorkflowID(t.Name()), TaskQueue: queue},
		workflows.Ping, workflows.PingInput{From: "test"})
	require.NoError(t, err)
	var result workflows.PingResult
	require.NoError(t, run.Get(ctx, &result))
	require.Equal(t, "pong to test", result.Greeting)
	require.WithinDuration(t, time.Now(), result.DatabaseTime, time.Minute)
}
