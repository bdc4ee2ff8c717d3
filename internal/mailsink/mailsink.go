// Package mailsink is an SMTP server that keeps every message it receives:
// in memory for tests, and as .eml files for `svc dev`. It accepts mail for
// anyone and relays nothing.
package mailsink

import (
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/emersion/go-smtp"
)

// Message is one received mail.
type Message struct {
	From     string
	To       []string
	Data     []byte
	Received time.Time // when the message's data was accepted
}

// Sink is a running SMTP server.
type Sink struct {
	Addr   string // host:port
	dir    string
	server *smtp.Server
	mu     sync.Mutex
	msgs   []Message
}

// Start listens on a free loopback port; dir, when set, also receives a
// .eml file per message.
func Start(dir string) (*Sink, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("mail sink listen: %w", err)
	}
	s := &Sink{Addr: l.Addr().String(), dir: dir}
	if dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
	}
	s.server = smtp.NewServer(backend{s})
	s.server.Domain = "localhost"
	s.server.AllowInsecureAuth = true
	s.server.ReadTimeout, s.server.WriteTimeout = 30*time.Second, 30*time.Second
	go func() { _ = s.server.Serve(l) }()
	return s, nil
}

// Messages returns what arrived so far.
func (s *Sink) Messages() []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Message(nil), s.msgs...)
}

// Stop closes the server.
func (s *Sink) Stop() error { return s.server.Close() }

func (s *Sink) keep(m Message) error {
	m.Received = time.Now()
	s.mu.Lock()
	s.msgs = append(s.msgs, m)
	n := len(s.msgs)
	s.mu.Unlock()
	if s.dir == "" {
		return nil
	}
	name := fmt.Sprintf("%s-%04d.eml", time.Now().UTC().Format("20060102T150405"), n)
	return os.WriteFile(filepath.Join(s.dir, name), m.Data, 0o644)
}

type backend struct{ sink *Sink }

func (b backend) NewSession(*smtp.Conn) (smtp.Session, error) { return &session{sink: b.sink}, nil }

type session struct {
	sink *Sink
	msg  Message
}

func (s *session) Mail(from string, _ *smtp.MailOptions) error { s.msg.From = from; return nil }
func (s *session) Rcpt(to string, _ *smtp.RcptOptions) error {
	s.msg.To = append(s.msg.To, to)
	return nil
}
func (s *session) Data(r io.Reader) error {
	data, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	s.msg.Data = data
	return s.sink.keep(s.msg)
}
func (s *session) Reset()        { s.msg = Message{} }
func (s *session) Logout() error { return nil }
