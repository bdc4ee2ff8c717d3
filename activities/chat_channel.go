package activities

import (
	"context"

	"github.com/google/uuid"

	"github.com/merchantsvc/svc/internal/whatsapp"
)

// chatFor is the sender of a store's WhatsApp messages (decisions §25):
// the store's own Cloud API number once connected, the process-wide
// sender until then.
func (a *Activities) chatFor(ctx context.Context, storeID uuid.UUID) (ChatProvider, error) {
	ch, err := a.DB.FindWhatsAppSender(ctx, a.Secrets, storeID)
	if err != nil {
		return nil, err
	}
	if ch == nil {
		return a.Chat, nil
	}
	return HTTPChatProvider{BaseURL: whatsapp.Base(a.WhatsAppAPIBase) + "/" + ch.PhoneNumberID, Token: ch.AccessToken}, nil
}
