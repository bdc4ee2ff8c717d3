package workflows

import (
	"time"

	"github.com/google/uuid"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/merchantsvc/svc/activities"
)

// SignInCodeInput names one sign-in challenge whose code is to be sent.
type SignInCodeInput struct {
	StoreID     uuid.UUID
	ChallengeID uuid.UUID
}

// SignInCodeWorkflowID is a challenge's send.
func SignInCodeWorkflowID(challengeID uuid.UUID) string {
	return "customer-auth-code:" + challengeID.String()
}

// SignInCode sends a buyer's sign-in code (decisions §24). The code lives
// five minutes, so the send is retried for five minutes only.
func SignInCode(ctx workflow.Context, in SignInCodeInput) (activities.SignInCodeResult, error) {
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout:    20 * time.Second,
		RetryPolicy:            &temporal.RetryPolicy{InitialInterval: 500 * time.Millisecond, BackoffCoefficient: 2, MaximumInterval: 30 * time.Second},
		ScheduleToCloseTimeout: 5 * time.Minute,
	})
	var out activities.SignInCodeResult
	err := workflow.ExecuteActivity(actx, a.SendSignInCode, activities.SignInCodeInput{StoreID: in.StoreID, ChallengeID: in.ChallengeID}).Get(ctx, &out)
	return out, err
}
