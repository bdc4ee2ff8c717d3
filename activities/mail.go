package activities

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

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
// MIME encoding of Arabic subjects and bodies, STARTTLS and auth). It keeps a
// few connections open between sends, as mail clients of a relay do: a new
// connection costs a TCP handshake (and TLS's), a greeting and EHLO before
// the message, and QUIT after it. A kept connection is checked with NOOP
// before it carries the next message, and one the server has closed is
// replaced by a new one. Use it by pointer; the zero value of the pool is
// ready.
type SMTPMailer struct {
	Host     string
	Port     int
	From     string
	Username string
	Password string
	// PlainText skips TLS (local mail sinks).
	PlainText bool

	mu   sync.Mutex
	idle []idleSMTP // most recently used last
}

// idleSMTP is a connection kept open between sends, and since when.
type idleSMTP struct {
	client *mail.Client
	since  time.Time
}

const (
	// smtpIdleConnections is how many connections stay open between sends.
	smtpIdleConnections = 4
	// smtpIdleTimeout is how long a connection may wait unused before it is
	// closed rather than reused: servers drop idle clients after a few
	// minutes (RFC 5321 asks them to wait at least five).
	smtpIdleTimeout = 30 * time.Second
)

// Send delivers one message, on a kept connection when there is one.
func (m *SMTPMailer) Send(ctx context.Context, to, subject, html string) error {
	msg := mail.NewMsg()
	if err := msg.From(m.From); err != nil {
		return fmt.Errorf("mail from: %w", err)
	}
	if err := msg.To(to); err != nil {
		return fmt.Errorf("mail to: %w", err)
	}
	msg.Subject(subject)
	msg.SetBodyString(mail.TypeTextHTML, html)
	for client := m.takeIdle(); client != nil; client = m.takeIdle() {
		err := client.Send(msg)
		if err == nil {
			m.keep(client)
			return nil
		}
		_ = client.Close()
		if !smtpConnectionGone(err) {
			return fmt.Errorf("send mail: %w", err)
		}
	}
	client, err := mail.NewClient(m.Host, m.options()...)
	if err != nil {
		return fmt.Errorf("mail client: %w", err)
	}
	if err := client.DialWithContext(ctx); err != nil {
		return fmt.Errorf("send mail: %w", err)
	}
	if err := client.Send(msg); err != nil {
		_ = client.Close()
		return fmt.Errorf("send mail: %w", err)
	}
	m.keep(client)
	return nil
}

func (m *SMTPMailer) options() []mail.Option {
	opts := []mail.Option{mail.WithPort(m.Port)}
	if m.PlainText {
		opts = append(opts, mail.WithTLSPolicy(mail.NoTLS))
	}
	if m.Username != "" {
		opts = append(opts, mail.WithSMTPAuth(mail.SMTPAuthPlain), mail.WithUsername(m.Username), mail.WithPassword(m.Password))
	}
	return opts
}

// takeIdle answers the most recently used kept connection, closing the ones
// that waited too long; nil when none is left.
func (m *SMTPMailer) takeIdle() *mail.Client {
	m.mu.Lock()
	defer m.mu.Unlock()
	for len(m.idle) > 0 {
		last := m.idle[len(m.idle)-1]
		m.idle = m.idle[:len(m.idle)-1]
		if time.Since(last.since) < smtpIdleTimeout {
			return last.client
		}
		_ = last.client.Close()
	}
	return nil
}

// keep puts a connection that just carried a message back for the next
// send, or closes it when enough are kept.
func (m *SMTPMailer) keep(client *mail.Client) {
	m.mu.Lock()
	if len(m.idle) < smtpIdleConnections {
		m.idle = append(m.idle, idleSMTP{client: client, since: time.Now()})
		client = nil
	}
	m.mu.Unlock()
	if client != nil {
		_ = client.Close()
	}
}

// Close closes the kept connections.
func (m *SMTPMailer) Close() error {
	m.mu.Lock()
	idle := m.idle
	m.idle = nil
	m.mu.Unlock()
	var errs []error
	for _, c := range idle {
		errs = append(errs, c.client.Close())
	}
	return errors.Join(errs...)
}

// smtpConnectionGone says whether a send on a kept connection failed before
// the server took the message because the connection had ended: NOOP
// failed, or the server said 421 (closing the channel) to MAIL FROM. The
// message then goes on a new connection.
func smtpConnectionGone(err error) bool {
	var sendErr *mail.SendError
	if !errors.As(err, &sendErr) {
		return false
	}
	return sendErr.Reason == mail.ErrConnCheck || (sendErr.Reason == mail.ErrSMTPMailFrom && sendErr.ErrorCode() == 421)
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
