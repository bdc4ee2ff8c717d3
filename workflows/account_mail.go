package workflows

import (
	"time"

	"github.com/google/uuid"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/merchantsvc/svc/activities"
)

// AccountMailInput names one of an account's own mails.
type AccountMailInput struct {
	MailID uuid.UUID
}

// AccountMailWorkflowID is an account mail's workflow.
func AccountMailWorkflowID(mailID uuid.UUID) string { return "account-mail:" + mailID.String() }

// AccountMail mails an account's password reset, email verification or
// sign-in lock link over SMTP (issue 48 §8), retrying the mail server for
// up to half an hour: a reset link lives thirty minutes, so a later mail
// would carry a dead link.
func AccountMail(ctx workflow.Context, in AccountMailInput) (activities.AccountMailResult, error) {
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout:    30 * time.Second,
		RetryPolicy:            &temporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2, MaximumInterval: 5 * time.Minute},
		ScheduleToCloseTimeout: 30 * time.Minute,
	})
	var out activities.AccountMailResult
	err := workflow.ExecuteActivity(actx, a.SendAccountEmail, activities.AccountMailInput{MailID: in.MailID}).Get(ctx, &out)
	return out, err
}
