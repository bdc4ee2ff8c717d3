package activities

import (
	"context"
	"fmt"
	"io"
	"net"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-smtp"
	"github.com/stretchr/testify/require"
)

// countingSMTP is an SMTP server that counts its connections and the
// messages it accepts, and drops a client idle for longer than idle.
type countingSMTP struct {
	mu                 sync.Mutex
	sessions, messages int
}

func (c *countingSMTP) NewSession(*smtp.Conn) (smtp.Session, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sessions++
	return &countingSession{server: c}, nil
}

func (c *countingSMTP) counts() (sessions, messages int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.sessions, c.messages
}

type countingSession struct{ server *countingSMTP }

func (s *countingSession) Mail(string, *smtp.MailOptions) error { return nil }
func (s *countingSession) Rcpt(string, *smtp.RcptOptions) error { return nil }
func (s *countingSession) Data(r io.Reader) error {
	if _, err := io.Copy(io.Discard, r); err != nil {
		return err
	}
	s.server.mu.Lock()
	defer s.server.mu.Unlock()
	s.server.messages++
	return nil
}
func (s *countingSession) Reset()        {}
func (s *countingSession) Logout() error { return nil }

func startCountingSMTP(t *testing.T, idle time.Duration) (*countingSMTP, *SMTPMailer) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	counter := &countingSMTP{}
	srv := smtp.NewServer(counter)
	srv.Domain = "localhost"
	srv.ReadTimeout, srv.WriteTimeout = idle, idle
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close() })
	host, port, _ := net.SplitHostPort(l.Addr().String())
	p, _ := strconv.Atoi(port)
	m := &SMTPMailer{Host: host, Port: p, From: "shop@example.com", PlainText: true}
	t.Cleanup(func() { _ = m.Close() })
	return counter, m
}

// Messages one after another share one connection; a connection the server
// has dropped is replaced without failing the send; concurrent sends each
// get a connection, and at most smtpIdleConnections stay open after.
func TestSMTPMailerKeepsConnectionsAndReplacesADroppedOne(t *testing.T) {
	ctx := context.Background()
	server, m := startCountingSMTP(t, 300*time.Millisecond)
	for i := range 3 {
		require.NoError(t, m.Send(ctx, fmt.Sprintf("buyer%d@example.com", i), "طلبك", "<p>شكرا</p>"))
	}
	sessions, messages := server.counts()
	require.Equal(t, 3, messages)
	require.Equal(t, 1, sessions, "three sends in a row share one connection")

	time.Sleep(700 * time.Millisecond) // the server drops the idle client
	require.NoError(t, m.Send(ctx, "late@example.com", "subject", "<p>hi</p>"))
	sessions, messages = server.counts()
	require.Equal(t, 4, messages)
	require.Equal(t, 2, sessions, "the dropped connection is replaced by a new one")

	var sends sync.WaitGroup
	errs := make(chan error, 12)
	for i := range 12 {
		sends.Go(func() { errs <- m.Send(ctx, fmt.Sprintf("many%d@example.com", i), "subject", "<p>hi</p>") })
	}
	sends.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	_, messages = server.counts()
	require.Equal(t, 16, messages)
	m.mu.Lock()
	kept := len(m.idle)
	m.mu.Unlock()
	require.LessOrEqual(t, kept, smtpIdleConnections)
	require.Positive(t, kept)
}

// A connection kept longer than smtpIdleTimeout is closed, not reused.
func TestSMTPMailerClosesConnectionsKeptTooLong(t *testing.T) {
	ctx := context.Background()
	server, m := startCountingSMTP(t, time.Minute)
	require.NoError(t, m.Send(ctx, "first@example.com", "subject", "<p>hi</p>"))
	m.mu.Lock()
	kept := len(m.idle)
	if kept == 1 {
		m.idle[0].since = time.Now().Add(-smtpIdleTimeout - time.Second)
	}
	m.mu.Unlock()
	require.Equal(t, 1, kept)
	require.NoError(t, m.Send(ctx, "second@example.com", "subject", "<p>hi</p>"))
	sessions, messages := server.counts()
	require.Equal(t, 2, messages)
	require.Equal(t, 2, sessions)
}
