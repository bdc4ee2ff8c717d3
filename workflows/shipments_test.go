package workflows_test

import (
	"errors"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/testsuite"

	"github.com/merchantsvc/svc/activities"
	"github.com/merchantsvc/svc/workflows"
)

// A waybill render that keeps failing is tried five times, then the
// waybill is failed (with the last error as its reason); one that recovers
// is never failed.
func TestShipmentWaybillRetriesThenFails(t *testing.T) {
	in := workflows.ShipmentWaybillInput{StoreID: uuid.New(), ShipmentID: uuid.New(), Generation: 2}
	render := activities.RenderWaybillInput{StoreID: in.StoreID, ShipmentID: in.ShipmentID, Generation: 2}

	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestWorkflowEnvironment()
	var acts *activities.Activities
	env.RegisterActivity(acts)
	env.OnActivity(acts.RenderWaybill, mock.Anything, render).Return(errors.New("chromium crashed")).Times(5)
	env.OnActivity(acts.FailWaybill, mock.Anything, mock.MatchedBy(func(f activities.FailWaybillInput) bool {
		return f.RenderWaybillInput == render && f.Reason != ""
	})).Return(nil).Once()
	env.ExecuteWorkflow(workflows.ShipmentWaybill, in)
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	env.AssertExpectations(t)

	env = suite.NewTestWorkflowEnvironment()
	env.RegisterActivity(acts)
	env.OnActivity(acts.RenderWaybill, mock.Anything, render).Return(errors.New("object store timeout")).Twice()
	env.OnActivity(acts.RenderWaybill, mock.Anything, render).Return(nil).Once()
	env.ExecuteWorkflow(workflows.ShipmentWaybill, in)
	require.NoError(t, env.GetWorkflowError())
	env.AssertExpectations(t)
	env.AssertNotCalled(t, "FailWaybill", mock.Anything, mock.Anything)
}
