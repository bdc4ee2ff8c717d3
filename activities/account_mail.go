package activities

import (
	"cmp"
	"context"
	"errors"

	"github.com/google/uuid"
	"go.temporal.io/sdk/temporal"

	"github.com/merchantsvc/svc/internal/orderemail"
	"github.com/merchantsvc/svc/storage"
)

// AccountMailInput names one of an account's own mails (a password reset,
// an email verification, a sign-in lock notice).
type AccountMailInput struct {
	MailID uuid.UUID
}

// AccountMailResult is whom the mail went to; Superseded when its link was
// used or expired before it could be sent.
type AccountMailResult struct {
	To         string
	Superseded bool
}

// accountLinkPath is the merchant page each kind's link opens.
var accountLinkPath = map[storage.AccountMailKind]string{
	storage.MailPasswordReset:     "/password-reset",
	storage.MailSignInLock:        "/password-reset",
	storage.MailEmailVerification: "/verify-email",
}

// SendAccountEmail mints the mail's token (only its hash is kept) and mails
// {MerchantURL}/<page>#token=… in the account's language; the token stays in
// the fragment, out of server logs and Referer headers, as an invitation's.
func (a *Activities) SendAccountEmail(ctx context.Context, in AccountMailInput) (AccountMailResult, error) {
	m, token, err := a.DB.MintAccountMailToken(ctx, in.MailID)
	if errors.Is(err, storage.ErrAccountMailSuperseded) {
		return AccountMailResult{Superseded: true}, nil
	}
	if err != nil {
		return AccountMailResult{}, err
	}
	link := cmp.Or(a.MerchantURL, a.BaseURL) + accountLinkPath[m.Kind] + "#token=" + token
	email, err := orderemail.RenderAccountMail(string(m.Kind), m.Locale, m.Email, m.Name, link)
	if err != nil {
		return AccountMailResult{}, temporal.NewNonRetryableApplicationError(err.Error(), "RENDER", err)
	}
	if err := a.Mailer.Send(ctx, email.To, email.Subject, email.HTML); err != nil {
		return AccountMailResult{}, err
	}
	return AccountMailResult{To: email.To}, nil
}
