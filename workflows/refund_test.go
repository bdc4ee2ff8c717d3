package workflows_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/testsuite"

	"github.com/merchantsvc/svc/activities"
	"github.com/merchantsvc/svc/workflows"
)

// A gateway that stays down is retried for a day (time skipped), then the
// refund is failed as unreachable; one that recovers is not failed.
func TestRefundRetriesForADayThenFails(t *testing.T) {
	in := workflows.RefundInput{StoreID: uuid.New(), RefundID: uuid.New()}
	ask := activities.RefundAtGatewayInput{StoreID: in.StoreID, RefundID: in.RefundID}

	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestWorkflowEnvironment()
	var acts *activities.Activities
	env.RegisterActivity(acts)
	calls := 0
	env.OnActivity(acts.RefundAtGateway, mock.Anything, ask).Return(func(context.Context, activities.RefundAtGatewayInput) (activities.RefundAtGatewayResult, error) {
		calls++
		return activities.RefundAtGatewayResult{}, errors.New("the gateway answered 503")
	})
	env.OnActivity(acts.FailGatewayRefund, mock.Anything, mock.MatchedBy(func(f activities.FailGatewayRefundInput) bool {
		return f.RefundAtGatewayInput == ask && strings.HasPrefix(f.Reason, "gateway_unreachable")
	})).Return(activities.RefundAtGatewayResult{Status: "failed"}, nil).Once()
	start := env.Now()
	env.ExecuteWorkflow(workflows.Refund, in)
	require.NoError(t, env.GetWorkflowError())
	var out workflows.RefundResult
	require.NoError(t, env.GetWorkflowResult(&out))
	require.Equal(t, "failed", out.Status)
	require.Greater(t, calls, 20, "retried with backoff")
	require.GreaterOrEqual(t, env.Now().Sub(start), 23*time.Hour, "for about a day")
	env.AssertExpectations(t)

	env = suite.NewTestWorkflowEnvironment()
	env.RegisterActivity(acts)
	env.OnActivity(acts.RefundAtGateway, mock.Anything, ask).Return(activities.RefundAtGatewayResult{}, errors.New("connection reset")).Twice()
	env.OnActivity(acts.RefundAtGateway, mock.Anything, ask).Return(activities.RefundAtGatewayResult{Status: "succeeded"}, nil).Once()
	env.ExecuteWorkflow(workflows.Refund, in)
	require.NoError(t, env.GetWorkflowResult(&out))
	require.Equal(t, "succeeded", out.Status)
	env.AssertExpectations(t)
}
