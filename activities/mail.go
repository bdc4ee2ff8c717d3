package activities

import (
	"cmp"
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"
	"github.com/wneessen/go-mail"
	"go.temporal.io/sdk/temporal"

	"github.com/merchantsvc/svc/internal/orderemail"
	"github.com/merchantsvc/svc/storage"
)

// Mailer sends one HTML email.
type Mailer interface {
	Send(ctx context.Context, to, subject, html string) error
}

// SMTPMailer sends through an SMTP server with go-mail (maintained, handles
// MIME encoding of Arabic subjects and bodies, STARTTLS and auth).
type SMTPMailer struct {
	Host     string
	Port     int
	From     string
	Username string
	Password string
	// PlainText skips TLS (local mail sinks).
	PlainText bool
}

// Send delivers one message.
func (m SMTPMailer) Send(ctx context.Context, to, subject, html string) error {
	msg := mail.NewMsg()
	if err := msg.From(m.From); err != nil {
		return fmt.Errorf("mail from: %w", err)
	}
	if err := msg.To(to); err != nil {
		return fmt.Errorf("mail to: %w", err)
	}
	msg.Subject(subject)
	msg.SetBodyString(mail.TypeTextHTML, html)
	opts := []mail.Option{mail.WithPort(m.Port)}
	if m.PlainText {
		opts = append(opts, mail.WithTLSPolicy(mail.NoTLS))
	}
	if m.Username != "" {
		opts = append(opts, mail.WithSMTPAuth(mail.SMTPAuthPlain), mail.WithUsername(m.Username), mail.WithPassword(m.Password))
	}
	client, err := mail.NewClient(m.Host, opts...)
	if err != nil {
		return fmt.Errorf("mail client: %w", err)
	}
	if err := client.DialAndSendWithContext(ctx, msg); err != nil {
		return fmt.Errorf("send mail: %w", err)
	}
	return nil
}

// InvitationMailInput names one mail of a staff invitation.
type InvitationMailInput struct {
	StoreID      uuid.UUID
	InvitationID uuid.UUID
	Mail         int
}

// InvitationMailResult is whom the mail went to; Superseded when a resend
// or the invitation's end made it pointless.
type InvitationMailResult struct {
	To         string
	Superseded bool
}

// SendInvitationEmail mints the invitation's token for this mail (only its
// hash is kept, so the newest mailed link is the only live one) and mails
// {MerchantURL}/invitations#token=… in the store's language; the token stays
// in the fragment, out of server logs and Referer headers.
func (a *Activities) SendInvitationEmail(ctx context.Context, in InvitationMailInput) (InvitationMailResult, error) {
	inv, token, err := a.DB.MintInvitationToken(ctx, in.StoreID, in.InvitationID, in.Mail)
	if errors.Is(err, storage.ErrInvitationMailSuperseded) {
		return InvitationMailResult{Superseded: true}, nil
	}
	if err != nil {
		return InvitationMailResult{}, err
	}
	email, err := orderemail.RenderInvitation(inv.StoreName, inv.StoreLocale, inv.Email, inv.Role.Name, cmp.Or(a.MerchantURL, a.BaseURL)+"/invitations#token="+token)
	if err != nil {
		return InvitationMailResult{}, temporal.NewNonRetryableApplicationError(err.Error(), "RENDER", err)
	}
	if err := a.Mailer.Send(ctx, email.To, email.Subject, email.HTML); err != nil {
		return InvitationMailResult{}, err
	}
	return InvitationMailResult{To: email.To}, nil
}
