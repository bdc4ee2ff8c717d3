package workflows_test

import (
	"errors"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/merchantsvc/svc/activities"
	"github.com/merchantsvc/svc/storage"
	"github.com/merchantsvc/svc/workflows"
)

// The authority being down is retried (with time skipping, hours pass in
// an instant) until it answers.
func TestEInvoiceSyncRetriesUntilTheAuthorityAnswers(t *testing.T) {
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestWorkflowEnvironment()
	var acts *activities.Activities
	env.RegisterActivity(acts)
	env.OnActivity(acts.SyncEInvoice, mock.Anything, mock.Anything).Return(activities.SyncEInvoiceResult{}, errors.New("authority answered 503")).Times(6)
	env.OnActivity(acts.SyncEInvoice, mock.Anything, mock.Anything).Return(activities.SyncEInvoiceResult{Status: string(storage.InvoiceReported)}, nil).Once()
	env.OnActivity(acts.RenderInvoicePDF, mock.Anything, mock.Anything).Return(nil).Once()
	env.ExecuteWorkflow(workflows.EInvoiceSync, workflows.EInvoiceSyncInput{StoreID: uuid.New(), InvoiceID: uuid.New()})
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	var result workflows.EInvoiceSyncResult
	require.NoError(t, env.GetWorkflowResult(&result))
	require.Equal(t, string(storage.InvoiceReported), result.Status)
	env.AssertExpectations(t)
}

// A refusal by the authority is final: one attempt, no retries.
func TestEInvoiceSyncStopsOnARefusal(t *testing.T) {
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestWorkflowEnvironment()
	var acts *activities.Activities
	env.RegisterActivity(acts)
	env.OnActivity(acts.SyncEInvoice, mock.Anything, mock.Anything).
		Return(activities.SyncEInvoiceResult{}, temporal.NewNonRetryableApplicationError("refused", "EINVOICE_REFUSED", nil)).Once()
	env.ExecuteWorkflow(workflows.EInvoiceSync, workflows.EInvoiceSyncInput{StoreID: uuid.New(), InvoiceID: uuid.New()})
	require.True(t, env.IsWorkflowCompleted())
	require.Error(t, env.GetWorkflowError())
	env.AssertExpectations(t)
}

// An unreadable proof image fails the hashing once and for all; a
// transient failure is retried.
func TestPaymentProofHashing(t *testing.T) {
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestWorkflowEnvironment()
	var acts *activities.Activities
	env.RegisterActivity(acts)
	env.OnActivity(acts.HashPaymentProof, mock.Anything, mock.Anything).Return(activities.ProofHash{}, errors.New("object store timeout")).Once()
	env.OnActivity(acts.HashPaymentProof, mock.Anything, mock.Anything).Return(activities.ProofHash{PerceptualHash: 42, DuplicateSuspected: true}, nil).Once()
	env.ExecuteWorkflow(workflows.PaymentProof, workflows.PaymentProofInput{StoreID: uuid.New(), ProofID: uuid.New()})
	require.NoError(t, env.GetWorkflowError())
	var result workflows.PaymentProofResult
	require.NoError(t, env.GetWorkflowResult(&result))
	require.True(t, result.DuplicateSuspected)
	env.AssertExpectations(t)

	env = suite.NewTestWorkflowEnvironment()
	env.RegisterActivity(acts)
	env.OnActivity(acts.HashPaymentProof, mock.Anything, mock.Anything).
		Return(activities.ProofHash{}, temporal.NewNonRetryableApplicationError("cannot decode", "UNREADABLE_IMAGE", nil)).Once()
	env.ExecuteWorkflow(workflows.PaymentProof, workflows.PaymentProofInput{StoreID: uuid.New(), ProofID: uuid.New()})
	require.Error(t, env.GetWorkflowError())
	env.AssertExpectations(t)
}
