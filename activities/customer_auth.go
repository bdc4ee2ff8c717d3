package activities

import (
	"context"
	"errors"
	"fmt"
	"html"
	"time"

	"github.com/google/uuid"
	"go.temporal.io/sdk/temporal"

	"github.com/merchantsvc/svc/storage"
)

// TemplateSignInCode is the authentication template a sign-in code goes
// out in by WhatsApp, the code its one body parameter (decisions §24).
const TemplateSignInCode = "sign_in_code"

// SignInCodeInput names one challenge whose code is to be sent.
type SignInCodeInput struct {
	StoreID     uuid.UUID
	ChallengeID uuid.UUID
}

// SignInCodeResult says how the code went: its channel, or Skipped when
// the challenge is gone or expired before it could be sent.
type SignInCodeResult struct {
	Channel string
	Skipped bool
}

// SendSignInCode sends a challenge's code by WhatsApp (the store's number
// once connected, the shared sender until then) or email, in the buyer's
// language. The code is derived here from the challenge's id and never
// logged or returned; a send already recorded is not sent again.
func (a *Activities) SendSignInCode(ctx context.Context, in SignInCodeInput) (SignInCodeResult, error) {
	s, err := a.DB.FindSignInSend(ctx, in.StoreID, in.ChallengeID)
	if errors.Is(err, storage.ErrNotFound) {
		return SignInCodeResult{Skipped: true}, nil
	}
	if err != nil {
		return SignInCodeResult{}, err
	}
	if s.ProviderMessageID != nil || time.Now().After(s.ExpiresAt) {
		return SignInCodeResult{Channel: s.Channel, Skipped: s.ProviderMessageID == nil}, nil
	}
	code, err := storage.SignInCode(a.Secrets, in.ChallengeID)
	if errors.Is(err, storage.ErrNoSecretsKey) {
		return SignInCodeResult{}, temporal.NewNonRetryableApplicationError("no secrets key to derive the code", "NO_SECRETS_KEY", nil)
	}
	if err != nil {
		return SignInCodeResult{}, err
	}
	var sent string
	if s.Channel == storage.ChannelWhatsApp {
		chat, err := a.chatFor(ctx, in.StoreID)
		if err != nil {
			return SignInCodeResult{}, err
		}
		if sent, err = chat.SendTemplate(ctx, ChatMessage{To: s.To, Template: TemplateSignInCode, Language: s.Language, Params: []string{code},
			Reference: in.ChallengeID.String()}); err != nil {
			var refused *ChatError
			if errors.As(err, &refused) {
				return SignInCodeResult{}, temporal.NewNonRetryableApplicationError(refused.Error(), "PROVIDER_REFUSED", nil)
			}
			return SignInCodeResult{}, err
		}
	} else {
		subject, body := signInMail(s.Language, s.StoreName, code)
		if err := a.Mailer.Send(ctx, s.To, subject, body); err != nil {
			return SignInCodeResult{}, err
		}
		sent = "email"
	}
	return SignInCodeResult{Channel: s.Channel}, a.DB.RecordSignInSent(ctx, in.StoreID, in.ChallengeID, sent)
}

// signInMail is the code's email, in the buyer's language.
func signInMail(language, store, code string) (subject, body string) {
	store = html.EscapeString(store)
	if language == "en" {
		return fmt.Sprintf("Your %s sign-in code: %s", store, code),
			fmt.Sprintf(`<!doctype html><html lang="en" dir="ltr"><body><p>Your sign-in code for %s is</p><p style="font-size:28px;letter-spacing:4px"><b>%s</b></p><p>It works once, for 5 minutes. If you did not ask for it, ignore this email.</p></body></html>`, store, code)
	}
	return fmt.Sprintf("رمز الدخول إلى %s: %s", store, code),
		fmt.Sprintf(`<!doctype html><html lang="ar" dir="rtl"><body><p>رمز الدخول إلى %s هو</p><p style="font-size:28px;letter-spacing:4px" dir="ltr"><b>%s</b></p><p>يصلح مرة واحدة خلال 5 دقائق. إن لم تطلبه فتجاهل هذه الرسالة.</p></body></html>`, store, code)
}
