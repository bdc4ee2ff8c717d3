package activities

import (
	"context"
	"errors"

	"github.com/google/uuid"
	"go.temporal.io/sdk/temporal"

	"github.com/merchantsvc/svc/internal/orderemail"
	"github.com/merchantsvc/svc/storage"
)

// GiftCardMailInput names one email send of a gift card's code.
type GiftCardMailInput struct {
	StoreID uuid.UUID
	SendID  uuid.UUID
}

// GiftCardMailResult is whom the mail went to; Gone when the card or its
// store no longer exists.
type GiftCardMailResult struct {
	To   string
	Gone bool
}

// SendGiftCardEmail mails a gift card's code to its recipient, in the
// store's language (decisions §19). The code is unsealed here and only
// here; it is neither logged nor returned.
func (a *Activities) SendGiftCardEmail(ctx context.Context, in GiftCardMailInput) (GiftCardMailResult, error) {
	m, err := a.DB.FindGiftCardMail(ctx, a.Secrets, in.StoreID, in.SendID)
	if errors.Is(err, storage.ErrNotFound) {
		return GiftCardMailResult{Gone: true}, nil
	}
	if errors.Is(err, storage.ErrNoSecretsKey) {
		return GiftCardMailResult{}, temporal.NewNonRetryableApplicationError("no secrets key to open the gift card code", "NO_SECRETS_KEY", nil)
	}
	if err != nil {
		return GiftCardMailResult{}, err
	}
	email, err := orderemail.RenderGiftCard(orderemail.GiftCard{To: m.To, RecipientName: m.RecipientName, StoreName: m.StoreName,
		Language: m.StoreLanguage, Numerals: m.StoreNumerals, Message: m.Message, Code: m.Code, Balance: m.Balance, Currency: m.Currency, ExpiresOn: m.ExpiresOn})
	if err != nil {
		return GiftCardMailResult{}, temporal.NewNonRetryableApplicationError(err.Error(), "RENDER", nil)
	}
	if err := a.Mailer.Send(ctx, email.To, email.Subject, email.HTML); err != nil {
		return GiftCardMailResult{}, err
	}
	return GiftCardMailResult{To: email.To}, nil
}
