package activities

import (
	"context"
	"fmt"

	"github.com/wneessen/go-mail"
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
