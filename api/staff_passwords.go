package api

import (
	"context"
	"net/http"
	"runtime"
	"strings"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/google/uuid"
	"github.com/merchantsvc/svc/internal/session"
	"github.com/merchantsvc/svc/storage"
)

// passwordGuard stands between the open internet and bcrypt. A password
// check costs tens of milliseconds of CPU, so an account takes a limited
// number of failures in any window, so does a client network (an IPv4
// address or an IPv6 /64), signups are limited per client network, and at
// most `slots` hashes run at once: a flood waits briefly for a slot and is
// then shed with 503 instead of starving every other tenant's requests.
type passwordGuard struct {
	accounts  *slidingLimiter // failed sign-ins per account email
	addresses *slidingLimiter // failed sign-ins per client network
	signups   *slidingLimiter // signups per client network
	slots     chan struct{}
	wait      time.Duration // how long a check waits for a slot
}

// PasswordLimits are the throttles on the password endpoints (README,
// "Limits"); zero fields take the defaults.
type PasswordLimits struct {
	// FailuresPerAccount failed sign-ins per account in Window (10).
	FailuresPerAccount int
	// FailuresPerAddress failed sign-ins per client network in Window (50).
	FailuresPerAddress int
	// SignupsPerAddress signups per client network per hour (10).
	SignupsPerAddress int
	// Window is the failure window (15 minutes).
	Window time.Duration
	// Concurrent password hashes at once (the number of CPUs).
	Concurrent int
	// Wait for a free hashing slot before answering 503 (2 s).
	Wait time.Duration
}

func newPasswordGuard(l PasswordLimits) *passwordGuard {
	if l.FailuresPerAccount <= 0 {
		l.FailuresPerAccount = 10
	}
	if l.FailuresPerAddress <= 0 {
		l.FailuresPerAddress = 50
	}
	if l.SignupsPerAddress <= 0 {
		l.SignupsPerAddress = 10
	}
	if l.Window <= 0 {
		l.Window = 15 * time.Minute
	}
	if l.Concurrent <= 0 {
		l.Concurrent = runtime.GOMAXPROCS(0)
	}
	if l.Wait <= 0 {
		l.Wait = 2 * time.Second
	}
	return &passwordGuard{
		accounts:  newSlidingLimiter("login-account", l.FailuresPerAccount, l.Window),
		addresses: newSlidingLimiter("login-address", l.FailuresPerAddress, l.Window),
		signups:   newSlidingLimiter("signup-address", l.SignupsPerAddress, time.Hour),
		slots:     make(chan struct{}, l.Concurrent),
		wait:      l.Wait,
	}
}

// hashing runs fn in a hashing slot, or answers session.ErrBusy when none
// frees up in time.
func (g *passwordGuard) hashing(ctx context.Context, fn func() error) error {
	timer := time.NewTimer(g.wait)
	defer timer.Stop()
	select {
	case g.slots <- struct{}{}:
	case <-timer.C:
		return session.ErrBusy
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-g.slots }()
	return fn()
}

// throttled is the refusal when a limiter has no room left for key.
func throttled(l *slidingLimiter, key string) error {
	v := l.room(key)
	if v.allowed {
		return nil
	}
	return &session.Throttled{RetryAfter: l.wait(v)}
}

// CheckPassword checks a sign-in under the throttles: a locked account or
// client network is refused before any hashing, and only failures count
// (the network's from admission on).
func (s *Server) CheckPassword(r *http.Request, email, password string) (storage.User, error) {
	g := s.passwords
	account := limitKey(uuid.Nil, strings.ToLower(strings.TrimSpace(email))) // no email in the shared counts
	network := clientNetwork(r, s.cfg.TrustedProxies)
	if err := throttled(g.accounts, account); err != nil {
		return storage.User{}, err
	}
	// The network's count is reserved before the check, so a burst of
	// parallel guesses cannot all reach bcrypt; anything but a failure gives
	// it back.
	held, v := g.addresses.reserve(network)
	if held == nil {
		return storage.User{}, &session.Throttled{RetryAfter: g.addresses.wait(v)}
	}
	var user storage.User
	err := g.hashing(r.Context(), func() (err error) {
		user, err = session.CheckPassword(r.Context(), s.db, email, password)
		return err
	})
	if err == session.ErrBadLogin {
		g.accounts.record(account)
	} else {
		held.giveBack()
	}
	return user, err
}

// hashNewPassword hashes a signup's password under the signup limit and a
// hashing slot.
func (s *Server) hashNewPassword(r *http.Request, password string) (string, error) {
	g := s.passwords
	if v := g.signups.allow(clientNetwork(r, s.cfg.TrustedProxies)); !v.allowed {
		return "", &session.Throttled{RetryAfter: g.signups.wait(v)}
	}
	return s.hashPassword(r, password)
}

// hashPassword hashes a new password in a hashing slot: a signup's after
// the signup limit (hashNewPassword), a reset's or a change's as it is.
func (s *Server) hashPassword(r *http.Request, password string) (string, error) {
	var hash []byte
	err := s.passwords.hashing(r.Context(), func() (err error) {
		hash, err = bcrypt.GenerateFromPassword([]byte(password), bcrypt.DefaultCost)
		return err
	})
	return string(hash), err
}
