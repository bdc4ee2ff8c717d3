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

// A collection's rebuild runs under an id derived from the collection and
// retries its one activity until the members follow the rules.
func TestCollectionRebuildRetriesUntilApplied(t *testing.T) {
	in := workflows.CollectionRebuildInput{StoreID: uuid.New(), CollectionID: uuid.New(), Version: 3}
	require.Equal(t, "collection-rebuild:"+in.CollectionID.String(), workflows.CollectionRebuildWorkflowID(in.CollectionID))

	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestWorkflowEnvironment()
	var acts *activities.Activities
	env.RegisterActivity(acts)
	rebuild := activities.RebuildCollectionInput{StoreID: in.StoreID, CollectionID: in.CollectionID}
	env.OnActivity(acts.RebuildCollection, mock.Anything, rebuild).Return(errors.New("deadlock detected")).Times(3)
	env.OnActivity(acts.RebuildCollection, mock.Anything, rebuild).Return(nil).Once()
	env.ExecuteWorkflow(workflows.CollectionRebuild, in)
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	env.AssertExpectations(t)
}
