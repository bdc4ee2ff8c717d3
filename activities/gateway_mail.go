package activities

import (
	"context"
	"errors"

	"github.com/google/uuid"
	"go.temporal.io/sdk/temporal"

	"github.com/merchantsvc/svc/internal/orderemail"
	"github.com/merchantsvc/svc/storage"
)

// GatewayChangeMailInput names the owner's mail about one change to a
// payment gateway's keys.
type GatewayChangeMailInput struct {
	StoreID uuid.UUID
	MailID  uuid.UUID
}

// GatewayChangeMailResult is whom the mail went to; Gone when the store
// (and with it the row) no longer exists.
type GatewayChangeMailResult struct {
	To   string
	Gone bool
}

// SendGatewayChangeEmail mails the store's owner, in the store's language,
// that a payment gateway's keys were connected, replaced or disconnected,
// by whom, when and from where (issue 48 §6). It names the keys only by the
// masked hint the API shows.
func (a *Activities) SendGatewayChangeEmail(ctx context.Context, in GatewayChangeMailInput) (GatewayChangeMailResult, error) {
	m, err := a.DB.FindGatewayChangeMail(ctx, in.StoreID, in.MailID)
	if errors.Is(err, storage.ErrNotFound) {
		return GatewayChangeMailResult{Gone: true}, nil
	}
	if err != nil {
		return GatewayChangeMailResult{}, err
	}
	email, err := orderemail.RenderGatewayChange(orderemail.GatewayChange{To: m.OwnerEmail, OwnerName: m.OwnerName,
		StoreName: m.StoreName, Language: m.StoreLocale, Provider: m.Provider, Kind: string(m.Kind), AccountHint: m.AccountHint,
		PreviousHint: m.PreviousHint, ActorName: m.ActorName, ActorEmail: m.ActorEmail, IP: m.From.IP, UserAgent: m.From.UserAgent,
		RequestID: m.From.RequestID, At: m.OccurredAt})
	if err != nil {
		return GatewayChangeMailResult{}, temporal.NewNonRetryableApplicationError(err.Error(), "RENDER", err)
	}
	if err := a.Mailer.Send(ctx, email.To, email.Subject, email.HTML); err != nil {
		return GatewayChangeMailResult{}, err
	}
	return GatewayChangeMailResult{To: email.To}, nil
}
