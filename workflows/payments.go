package workflows

import (
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/merchantsvc/svc/storage"
)

// PaymentProofWorkflowID is the id of one proof's hashing.
func PaymentProofWorkflowID(in storage.ProofToHash) string {
	return "payment-proof:" + in.ProofID.String()
}

// PaymentProof computes an uploaded proof's perceptual hash and runs the
// duplicate gate (distance ≤ 5 within the store's last 90 days).
func PaymentProof(ctx workflow.Context, in storage.ProofToHash) (bool, error) {
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: time.Minute,
		RetryPolicy:         &temporal.RetryPolicy{InitialInterval: time.Second, MaximumInterval: time.Minute, MaximumAttempts: 10},
	})
	var out struct{ DuplicateSuspected bool }
	err := workflow.ExecuteActivity(actx, a.HashPaymentProof, in).Get(ctx, &out)
	return out.DuplicateSuspected, err
}

// EInvoiceWorkflowID is the id of an e-invoice's sync with the authority.
// One id per invoice: a cancel waits for an issue still in flight.
func EInvoiceWorkflowID(ref storage.EInvoiceRef) string {
	return "e-invoice:" + ref.ID.String()
}

// EInvoiceSync tells the tax authority about an e-invoice's state, retrying
// for up to a day while the authority is unreachable.
func EInvoiceSync(ctx workflow.Context, ref storage.EInvoiceRef) (string, error) {
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout:    time.Minute,
		ScheduleToCloseTimeout: 24 * time.Hour,
		RetryPolicy:            &temporal.RetryPolicy{InitialInterval: 5 * time.Second, BackoffCoefficient: 2, MaximumInterval: 30 * time.Minute},
	})
	var status string
	err := workflow.ExecuteActivity(actx, a.SyncEInvoice, ref).Get(ctx, &status)
	return status, err
}
