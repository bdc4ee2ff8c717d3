package workflows_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/testsuite"

	"github.com/merchantsvc/svc/activities"
	"github.com/merchantsvc/svc/storage"
	"github.com/merchantsvc/svc/workflows"
)

// ladder runs the Delivery workflow with AttemptDelivery answering from
// outcomes, and returns the virtual time of each attempt and its input.
func ladder(t *testing.T, schedule []time.Duration, outcomes ...storage.DeliveryStatus) ([]time.Duration, []activities.AttemptInput, workflows.DeliveryResult) {
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestWorkflowEnvironment()
	var acts *activities.Activities
	env.RegisterActivity(acts)
	start := env.Now()
	var (
		at     []time.Duration
		inputs []activities.AttemptInput
	)
	env.OnActivity(acts.AttemptDelivery, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in activities.AttemptInput) (activities.AttemptOutcome, error) {
			at = append(at, env.Now().Sub(start))
			inputs = append(inputs, in)
			return activities.AttemptOutcome{Status: string(outcomes[min(len(inputs), len(outcomes))-1])}, nil
		})
	env.ExecuteWorkflow(workflows.Delivery, workflows.DeliveryInput{StoreID: uuid.New(), DeliveryID: uuid.New(),
		Schedule: schedule, NextAttempt: 2})
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	var result workflows.DeliveryResult
	require.NoError(t, env.GetWorkflowResult(&result))
	return at, inputs, result
}

// The default ladder waits exactly 10 s, 30 s, 2 min, 10 min and 30 min
// between attempts, on durable timers, and the fifth retry is final.
func TestDeliveryLadderDefaultSchedule(t *testing.T) {
	at, inputs, result := ladder(t, workflows.DefaultRetrySchedule, storage.DeliveryRetrying, storage.DeliveryRetrying,
		storage.DeliveryRetrying, storage.DeliveryRetrying, storage.DeliveryExhausted)
	require.Equal(t, []time.Duration{
		10 * time.Second,
		10*time.Second + 30*time.Second,
		10*time.Second + 30*time.Second + 2*time.Minute,
		10*time.Second + 30*time.Second + 2*time.Minute + 10*time.Minute,
		10*time.Second + 30*time.Second + 2*time.Minute + 10*time.Minute + 30*time.Minute,
	}, at)
	for i, in := range inputs {
		require.Equal(t, i+2, in.Attempt, "attempt numbers follow the first attempt")
		require.Equal(t, i == 4, in.Final, "only the fifth retry is final")
	}
	require.Equal(t, workflows.DeliveryResult{Status: string(storage.DeliveryExhausted), Attempts: 6}, result)
}

func TestDeliveryLadderStopsOnSuccessOrGone(t *testing.T) {
	for _, stop := range []storage.DeliveryStatus{storage.DeliverySucceeded, storage.DeliveryGone, storage.DeliverySkipped} {
		at, _, result := ladder(t, workflows.DefaultRetrySchedule, storage.DeliveryRetrying, stop)
		require.Equal(t, []time.Duration{10 * time.Second, 40 * time.Second}, at, stop)
		require.Equal(t, workflows.DeliveryResult{Status: string(stop), Attempts: 3}, result)
	}
}
