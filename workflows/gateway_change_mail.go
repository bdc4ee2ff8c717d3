package workflows

import (
	"time"

	"github.com/google/uuid"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/merchantsvc/svc/activities"
)

// GatewayChangeMailInput names the owner's mail about a change to a
// payment gateway's keys.
type GatewayChangeMailInput struct {
	StoreID uuid.UUID
	MailID  uuid.UUID
}

// GatewayChangeMailWorkflowID is a gateway change mail's workflow.
func GatewayChangeMailWorkflowID(mailID uuid.UUID) string {
	return "gateway-change-mail:" + mailID.String()
}

// GatewayChangeMail tells the store's owner over SMTP that a payment
// gateway's keys were connected, replaced or disconnected (issue 48 §6),
// retrying the mail server for up to a day, as an invitation does.
func GatewayChangeMail(ctx workflow.Context, in GatewayChangeMailInput) (activities.GatewayChangeMailResult, error) {
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout:    30 * time.Second,
		RetryPolicy:            &temporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2, MaximumInterval: 10 * time.Minute},
		ScheduleToCloseTimeout: 24 * time.Hour,
	})
	var out activities.GatewayChangeMailResult
	err := workflow.ExecuteActivity(actx, a.SendGatewayChangeEmail,
		activities.GatewayChangeMailInput{StoreID: in.StoreID, MailID: in.MailID}).Get(ctx, &out)
	return out, err
}
