package workflows

import (
	"fmt"
	"time"

	"github.com/google/uuid"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/merchantsvc/svc/activities"
)

// InvitationMailInput names one mail of a staff invitation.
type InvitationMailInput struct {
	StoreID      uuid.UUID
	InvitationID uuid.UUID
	Mail         int
}

// InvitationMailWorkflowID is mail number n of an invitation.
func InvitationMailWorkflowID(invitationID uuid.UUID, n int) string {
	return fmt.Sprintf("invitation-mail:%s:%d", invitationID, n)
}

// InvitationMail mails a staff invitation's link over SMTP (decisions §16),
// retrying the mail server for up to a day.
func InvitationMail(ctx workflow.Context, in InvitationMailInput) (activities.InvitationMailResult, error) {
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout:    30 * time.Second,
		RetryPolicy:            &temporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2, MaximumInterval: 10 * time.Minute},
		ScheduleToCloseTimeout: 24 * time.Hour,
	})
	var out activities.InvitationMailResult
	err := workflow.ExecuteActivity(actx, a.SendInvitationEmail,
		activities.InvitationMailInput{StoreID: in.StoreID, InvitationID: in.InvitationID, Mail: in.Mail}).Get(ctx, &out)
	return out, err
}
