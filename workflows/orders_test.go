package workflows_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/merchantsvc/svc/activities"
	"github.com/merchantsvc/svc/workflows"
)

// A side effect that keeps failing flags the order for a person; the other
// side effects still run and the workflow (and the order) does not fail.
func TestOrderPlacedFlagsAFailingSideEffect(t *testing.T) {
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestWorkflowEnvironment()
	var acts *activities.Activities
	env.RegisterActivity(acts)
	ok := activities.SideEffectResult{Status: "succeeded"}
	env.OnActivity(acts.SendOrderEmail, mock.Anything, mock.Anything).Return(activities.SideEffectResult{}, errors.New("smtp down"))
	env.OnActivity(acts.SendChatConfirmation, mock.Anything, mock.Anything).Return(ok, nil).Once()
	env.OnActivity(acts.CreateOrderShipment, mock.Anything, mock.Anything).Return(activities.SideEffectResult{Status: "skipped"}, nil).Once()
	var flagged []string
	env.OnActivity(acts.FlagSideEffectFailure, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in activities.FlagSideEffectInput) (activities.FlagSideEffectResult, error) {
			flagged = append(flagged, in.Kind)
			return activities.FlagSideEffectResult{}, nil
		})

	env.ExecuteWorkflow(workflows.OrderPlaced, workflows.OrderPlacedInput{StoreID: uuid.New(), OrderID: uuid.New(), Shape: workflows.OrderPlacedShape})
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	var result workflows.OrderPlacedResult
	require.NoError(t, env.GetWorkflowResult(&result))
	require.Equal(t, map[string]string{"email": "failed", "chat": "succeeded", "shipment": "skipped"}, result.Steps)
	require.Equal(t, []string{"email"}, flagged)
	env.AssertExpectations(t)
}

// The side effects run side by side: a slow email holds back none of the
// others, which all run when the workflow starts.
func TestOrderPlacedRunsSideEffectsSideBySide(t *testing.T) {
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestWorkflowEnvironment()
	var acts *activities.Activities
	env.RegisterActivity(acts)
	ok := activities.SideEffectResult{Status: "succeeded"}
	env.OnActivity(acts.SendOrderEmail, mock.Anything, mock.Anything).Return(ok, nil).After(10 * time.Minute).Once()
	started := env.Now()
	ranAt := map[string]time.Duration{}
	record := func(kind string) func(context.Context, activities.OrderInput) (activities.SideEffectResult, error) {
		return func(context.Context, activities.OrderInput) (activities.SideEffectResult, error) {
			ranAt[kind] = env.Now().Sub(started)
			return ok, nil
		}
	}
	env.OnActivity(acts.SendChatConfirmation, mock.Anything, mock.Anything).Return(record("chat")).Once()
	env.OnActivity(acts.CreateOrderShipment, mock.Anything, mock.Anything).Return(record("shipment")).Once()

	env.ExecuteWorkflow(workflows.OrderPlaced, workflows.OrderPlacedInput{StoreID: uuid.New(), OrderID: uuid.New(), Shape: workflows.OrderPlacedShape})
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	require.Equal(t, map[string]time.Duration{"chat": 0, "shipment": 0}, ranAt)
	env.AssertExpectations(t)
}

// A resend whose guard holds ends with the guard's refusal as a
// non-retryable ApplicationError of a declared type, for the API to answer.
func TestOrderMessageRefusalIsATypedError(t *testing.T) {
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestWorkflowEnvironment()
	var acts *activities.Activities
	env.RegisterActivity(acts)
	env.OnActivity(acts.ResendChatConfirmation, mock.Anything, mock.Anything).
		Return(activities.SideEffectResult{Status: activities.StatusRefused, Detail: workflows.RefusalChatOptedOut}, nil).Once()
	env.ExecuteWorkflow(workflows.OrderMessage, workflows.OrderMessageInput{StoreID: uuid.New(), OrderID: uuid.New(), Kind: workflows.OrderMessageChat})
	require.True(t, env.IsWorkflowCompleted())
	var refusal *temporal.ApplicationError
	require.ErrorAs(t, env.GetWorkflowError(), &refusal)
	require.Equal(t, workflows.RefusalChatOptedOut, refusal.Type())
	require.True(t, refusal.NonRetryable())
	env.AssertExpectations(t)
}
