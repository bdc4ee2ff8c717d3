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

// threeLocalActivities is the order-placed shape before
// RunOrderSideEffects, which workflows begun in it still run.
const threeLocalActivities = 1

// A side effect that keeps failing flags the order for a person; the other
// side effects still run and the workflow (and the order) does not fail.
func TestOrderPlacedFlagsAFailingSideEffectInThreeLocalActivities(t *testing.T) {
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

	env.ExecuteWorkflow(workflows.OrderPlaced, workflows.OrderPlacedInput{StoreID: uuid.New(), OrderID: uuid.New(), Shape: threeLocalActivities})
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
func TestOrderPlacedRunsSideEffectsSideBySideInThreeLocalActivities(t *testing.T) {
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

	env.ExecuteWorkflow(workflows.OrderPlaced, workflows.OrderPlacedInput{StoreID: uuid.New(), OrderID: uuid.New(), Shape: threeLocalActivities})
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	require.Equal(t, map[string]time.Duration{"chat": 0, "shipment": 0}, ranAt)
	env.AssertExpectations(t)
}

// Today's shape runs the side effects in one local activity; each one's
// outcome becomes a step of the result, and only a side effect that failed
// is flagged, with its own error, however the others ended.
func TestOrderPlacedFlagsOnlyTheFailedSideEffect(t *testing.T) {
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestWorkflowEnvironment()
	var acts *activities.Activities
	env.RegisterActivity(acts)
	attempts := 0
	env.OnActivity(acts.RunOrderSideEffects, mock.Anything, mock.Anything).Return(
		func(context.Context, activities.OrderInput) (activities.OrderSideEffectsResult, error) {
			attempts++
			return activities.OrderSideEffectsResult{}, temporal.NewApplicationError("chat: provider down", activities.ErrSideEffectsFailed,
				activities.OrderSideEffectsResult{Steps: map[string]activities.SideEffectResult{
					"email":    {Status: "succeeded", Detail: "mona@example.com"},
					"chat":     {Status: "failed", Detail: "provider down"},
					"shipment": {Status: "skipped", Detail: "automatic shipments are off"},
				}})
		})
	flagged := map[string]string{}
	env.OnActivity(acts.FlagSideEffectFailure, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in activities.FlagSideEffectInput) (activities.FlagSideEffectResult, error) {
			flagged[in.Kind] = in.Reason
			return activities.FlagSideEffectResult{}, nil
		})

	env.ExecuteWorkflow(workflows.OrderPlaced, workflows.OrderPlacedInput{StoreID: uuid.New(), OrderID: uuid.New(), Shape: workflows.OrderPlacedShape})
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	var result workflows.OrderPlacedResult
	require.NoError(t, env.GetWorkflowResult(&result))
	require.Equal(t, map[string]string{"email": "succeeded", "chat": "failed", "shipment": "skipped"}, result.Steps)
	require.Equal(t, map[string]string{"chat": "provider down"}, flagged)
	require.Equal(t, 5, attempts, "retried as the side effects' policy says")
}

// An error that names no side effect (the read before any ran, still
// failing after the retries) flags all three; a success flags none.
func TestOrderPlacedInOneActivityOutcomes(t *testing.T) {
	for name, tc := range map[string]struct {
		err     error
		steps   map[string]string
		flagged []string
	}{
		"the read fails": {errors.New("database down"),
			map[string]string{"email": "failed", "chat": "failed", "shipment": "failed"}, []string{"email", "chat", "shipment"}},
		"all succeed": {nil, map[string]string{"email": "succeeded", "chat": "succeeded", "shipment": "skipped"}, nil},
	} {
		t.Run(name, func(t *testing.T) {
			var suite testsuite.WorkflowTestSuite
			env := suite.NewTestWorkflowEnvironment()
			var acts *activities.Activities
			env.RegisterActivity(acts)
			ok := activities.OrderSideEffectsResult{Steps: map[string]activities.SideEffectResult{
				"email": {Status: "succeeded"}, "chat": {Status: "succeeded"}, "shipment": {Status: "skipped"}}}
			env.OnActivity(acts.RunOrderSideEffects, mock.Anything, mock.Anything).Return(ok, tc.err)
			var flagged []string
			env.OnActivity(acts.FlagSideEffectFailure, mock.Anything, mock.Anything).Return(
				func(_ context.Context, in activities.FlagSideEffectInput) (activities.FlagSideEffectResult, error) {
					flagged = append(flagged, in.Kind)
					return activities.FlagSideEffectResult{}, nil
				}).Maybe()

			env.ExecuteWorkflow(workflows.OrderPlaced, workflows.OrderPlacedInput{StoreID: uuid.New(), OrderID: uuid.New(), Shape: workflows.OrderPlacedShape})
			require.True(t, env.IsWorkflowCompleted())
			require.NoError(t, env.GetWorkflowError())
			var result workflows.OrderPlacedResult
			require.NoError(t, env.GetWorkflowResult(&result))
			require.Equal(t, tc.steps, result.Steps)
			require.Equal(t, tc.flagged, flagged)
		})
	}
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
