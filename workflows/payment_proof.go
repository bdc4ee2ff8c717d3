package workflows

import (
	"time"

	"github.com/google/uuid"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/merchantsvc/svc/activities"
)

// PaymentProofInput names an uploaded proof and where its image is.
type PaymentProofInput struct {
	StoreID  uuid.UUID
	ProofID  uuid.UUID
	ImageKey string
}

// PaymentProofResult is the duplicate gate's verdict.
type PaymentProofResult struct {
	DuplicateSuspected bool
}

// PaymentProofWorkflowID is the id of one proof's hashing.
func PaymentProofWorkflowID(proofID uuid.UUID) string {
	return "payment-proof:" + proofID.String()
}

// PaymentProof computes an uploaded proof's perceptual hash and runs the
// duplicate gate (distance ≤ 5 within the store's last 90 days).
func PaymentProof(ctx workflow.Context, in PaymentProofInput) (PaymentProofResult, error) {
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: time.Minute,
		RetryPolicy:         &temporal.RetryPolicy{InitialInterval: time.Second, MaximumInterval: time.Minute, MaximumAttempts: 10},
	})
	var out activities.ProofHash
	err := workflow.ExecuteActivity(actx, a.HashPaymentProof,
		activities.HashProofInput{StoreID: in.StoreID, ProofID: in.ProofID, ImageKey: in.ImageKey}).Get(ctx, &out)
	return PaymentProofResult{DuplicateSuspected: out.DuplicateSuspected}, err
}
