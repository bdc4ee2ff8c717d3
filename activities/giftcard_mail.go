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

// TemplateGiftCard is the utility template a gift card's code goes out in
// by WhatsApp: the recipient's name, the balance, the code and the store's
// name as its four body parameters.
const TemplateGiftCard = "gift_card"

// GiftCardWhatsAppResult is the provider's id of the message; Gone when
// the card or its store no longer exists; Refused with the provider's code
// when it would not deliver (an undeliverable number, its ecosystem limit).
type GiftCardWhatsAppResult struct {
	MessageID string
	Gone      bool
	Refused   int
}

// SendGiftCardWhatsApp sends a gift card's code to its recipient's phone
// in the `gift_card` template, from the store's own number once connected
// (else the shared sender), and keeps the provider's message id on the
// send. A send that already has one is not sent again (a retried
// activity), and a provider refusal is kept, not retried. The code is
// unsealed here and only here; it is neither logged nor returned.
func (a *Activities) SendGiftCardWhatsApp(ctx context.Context, in GiftCardMailInput) (GiftCardWhatsAppResult, error) {
	if id, err := a.DB.GiftCardSendMessageID(ctx, in.StoreID, in.SendID); err != nil || id != nil {
		if errors.Is(err, storage.ErrNotFound) {
			return GiftCardWhatsAppResult{Gone: true}, nil
		}
		if id != nil {
			return GiftCardWhatsAppResult{MessageID: *id}, nil
		}
		return GiftCardWhatsAppResult{}, err
	}
	m, err := a.DB.FindGiftCardMail(ctx, a.Secrets, in.StoreID, in.SendID)
	if errors.Is(err, storage.ErrNotFound) {
		return GiftCardWhatsAppResult{Gone: true}, nil
	}
	if errors.Is(err, storage.ErrNoSecretsKey) {
		return GiftCardWhatsAppResult{}, temporal.NewNonRetryableApplicationError("no secrets key to open the gift card code", "NO_SECRETS_KEY", nil)
	}
	if err != nil {
		return GiftCardWhatsAppResult{}, err
	}
	chat, err := a.chatFor(ctx, in.StoreID)
	if err != nil {
		return GiftCardWhatsAppResult{}, err
	}
	balance := storage.FormatPrice(m.Balance, storage.CurrencyExponent(m.Currency)) + " " + m.Currency
	id, err := chat.SendTemplate(ctx, ChatMessage{To: m.To, Template: TemplateGiftCard, Language: m.StoreLanguage,
		Params: []string{m.RecipientName, balance, m.Code, m.StoreName}, Reference: in.SendID.String()})
	var refused *ChatError
	switch {
	case errors.As(err, &refused) && refused.Code != 130429 && refused.Code != 131056: // not the rate limits: those are retried
		return GiftCardWhatsAppResult{Refused: refused.Code}, a.DB.RecordGiftCardSendOutcome(ctx, in.StoreID, in.SendID, nil, &refused.Code)
	case err != nil:
		return GiftCardWhatsAppResult{}, err
	}
	return GiftCardWhatsAppResult{MessageID: id}, a.DB.RecordGiftCardSendOutcome(ctx, in.StoreID, in.SendID, &id, nil)
}
