package workflows

import (
	"time"

	"github.com/google/uuid"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/merchantsvc/svc/activities"
)

// GiftCardMailInput names one email send of a gift card's code.
type GiftCardMailInput struct {
	StoreID uuid.UUID
	SendID  uuid.UUID
}

// GiftCardMailWorkflowID is a gift card send's workflow.
func GiftCardMailWorkflowID(sendID uuid.UUID) string {
	return "gift-card-mail:" + sendID.String()
}

// GiftCardMail mails a gift card's code to its recipient over SMTP
// (decisions §19), retrying the mail server for up to a day, as an
// invitation does.
func GiftCardMail(ctx workflow.Context, in GiftCardMailInput) (activities.GiftCardMailResult, error) {
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout:    30 * time.Second,
		RetryPolicy:            &temporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2, MaximumInterval: 10 * time.Minute},
		ScheduleToCloseTimeout: 24 * time.Hour,
	})
	var out activities.GiftCardMailResult
	err := workflow.ExecuteActivity(actx, a.SendGiftCardEmail, activities.GiftCardMailInput{StoreID: in.StoreID, SendID: in.SendID}).Get(ctx, &out)
	return out, err
}

// GiftCardWhatsAppWorkflowID is a gift card WhatsApp send's workflow.
func GiftCardWhatsAppWorkflowID(sendID uuid.UUID) string {
	return "gift-card-whatsapp:" + sendID.String()
}

// GiftCardWhatsApp sends a gift card's code to its recipient's phone
// through the store's WhatsApp channel (decisions §19, §25), retrying a
// provider that does not answer for up to a day; a refusal is kept by the
// activity and ends the workflow.
func GiftCardWhatsApp(ctx workflow.Context, in GiftCardMailInput) (activities.GiftCardWhatsAppResult, error) {
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout:    30 * time.Second,
		RetryPolicy:            &temporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2, MaximumInterval: 10 * time.Minute},
		ScheduleToCloseTimeout: 24 * time.Hour,
	})
	var out activities.GiftCardWhatsAppResult
	err := workflow.ExecuteActivity(actx, a.SendGiftCardWhatsApp, activities.GiftCardMailInput{StoreID: in.StoreID, SendID: in.SendID}).Get(ctx, &out)
	return out, err
}
