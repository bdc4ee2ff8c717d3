package api

import (
	"context"
	"log/slog"
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
//
// An account that has used up its failures is locked for new networks
// only: a network the account signed in from within 30 days
// (storage.KnownNetworkAge) still gets its password checked, up to the
// same number of failures of its own (known), so a stranger's guesses do
// not lock the owner out, and the owner is mailed a notice whose link
// signs in from anywhere.
type passwordGuard struct {
	accounts  *slidingLimiter // failed sign-ins per account email
	known     *slidingLimiter // failed sign-ins per locked account and known network
	addresses *slidingLimiter // failed sign-ins per client network
	signups   *slidingLimiter // signups per client network
	slots     chan struct{}
	wait      time.Duration // how long a check waits for a slot
	window    time.Duration // the failure window, also one lock notice's
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
		known:     newSlidingLimiter("login-known-network", l.FailuresPerAccount, l.Window),
		addresses: newSlidingLimiter("login-address", l.FailuresPerAddress, l.Window),
		signups:   newSlidingLimiter("signup-address", l.SignupsPerAddress, time.Hour),
		slots:     make(chan struct{}, l.Concurrent),
		wait:      l.Wait,
		window:    l.Window,
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

// CheckPassword checks a sign-in under the throttles. Every attempt is
// counted against its client network and its account when it is admitted
// (a burst of parallel guesses cannot all reach bcrypt), and anything but
// a failure gives the counts back. A network out of failures is refused
// before any hashing. An account out of failures is locked: its owner is
// sent one notice a window (storage.NoteSignInLock), a network it signed
// in from before is checked as usual (under a limit of its own), and any
// other network is refused before any hashing, whatever the password, so
// the refusal tells nothing; that refusal counts as a failure of the
// network.
func (s *Server) CheckPassword(r *http.Request, email, password string) (storage.User, error) {
	g := s.passwords
	folded := strings.ToLower(strings.TrimSpace(email))
	account := limitKey(uuid.Nil, folded) // no email in the shared counts
	network := clientNetwork(r, s.cfg.TrustedProxies)
	heldNetwork, v := g.addresses.reserve(network)
	if heldNetwork == nil {
		return storage.User{}, &session.Throttled{RetryAfter: g.addresses.wait(v)}
	}
	heldAccount, av := g.accounts.reserve(account)
	if heldAccount == nil {
		return s.checkLockedPassword(r, folded, password, network, heldNetwork, g.accounts.wait(av))
	}
	user, err := s.comparePassword(r, email, password)
	if err != session.ErrBadLogin {
		heldAccount.giveBack()
		heldNetwork.giveBack()
		return user, err
	}
	if av.remaining == 0 {
		// This failure locked the account: its owner hears of it now,
		// even if no one tries again.
		if _, err := s.db.NoteSignInLock(r.Context(), folded, storage.SignInNetwork(clientAddress(r, s.cfg.TrustedProxies)), g.window); err != nil {
			s.log.Warn("note sign-in lock", slog.Any("error", err), slog.String("request_id", requestID(r.Context())))
		}
	}
	return storage.User{}, err
}

// checkLockedPassword is CheckPassword for an account out of failures: the
// password is checked only from a network the account signed in from
// before, and only while that network has failures left for it; unlock is
// how long until the account has room again.
func (s *Server) checkLockedPassword(r *http.Request, folded, password, network string, heldNetwork *reservation, unlock time.Duration) (storage.User, error) {
	g := s.passwords
	known, err := s.db.NoteSignInLock(r.Context(), folded, storage.SignInNetwork(clientAddress(r, s.cfg.TrustedProxies)), g.window)
	if err != nil {
		heldNetwork.giveBack()
		return storage.User{}, err
	}
	if !known {
		return storage.User{}, &session.Throttled{RetryAfter: unlock}
	}
	held, v := g.known.reserve(limitKey(uuid.Nil, folded+"|"+network))
	if held == nil {
		return storage.User{}, &session.Throttled{RetryAfter: min(unlock, g.known.wait(v))}
	}
	user, err := s.comparePassword(r, folded, password)
	if err != session.ErrBadLogin {
		held.giveBack()
		heldNetwork.giveBack()
	}
	return user, err
}

// comparePassword runs the password check itself in a hashing slot.
func (s *Server) comparePassword(r *http.Request, email, password string) (storage.User, error) {
	var user storage.User
	err := s.passwords.hashing(r.Context(), func() (err error) {
		user, err = session.CheckPassword(r.Context(), s.db, email, password)
		return err
	})
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
