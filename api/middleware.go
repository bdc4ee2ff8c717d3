package api

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/google/uuid"

	"github.com/merchantsvc/svc/api/request"
	"github.com/merchantsvc/svc/api/wire"
	"github.com/merchantsvc/svc/internal/session"
	"github.com/merchantsvc/svc/storage"
)

type contextKey int

const (
	requestIDKey contextKey = iota
	principalKey
	storeIDKey
	idempotencyKey
	loggerKey
)

// principal is who is calling: a signed-in merchant or a bearer token.
type principal struct {
	kind   string // "session", "pat" or "app"
	userID uuid.UUID
	token  *storage.Token // nil for sessions
	// member is the signed-in user's role in the store the path names, read
	// on every request (a personal token's: its minter's).
	member *storage.Membership
	// memberRead says a session's member was read with the session (nil:
	// not a member), so bindStore need not read it again.
	memberRead bool
}

func (p *principal) isToken() bool { return p.token != nil }

// credentialID identifies the credential for idempotency and rate limits.
func (p *principal) credentialID() uuid.UUID {
	if p.token != nil {
		return p.token.ID
	}
	return p.userID
}

// allows reports whether the principal holds scope; `:write` implies `:read`.
// A token holds its scopes (a personal token only those its minter's role
// still holds); a member's session holds their role's.
func (p *principal) allows(scope string) bool {
	if p.token != nil && !storage.ScopesGrant(p.token.Scopes, scope) {
		return false
	}
	return p.member == nil || p.member.Allows(scope)
}

// role is the principal's built-in role in the store ("" for a custom role
// or a token).
func (p *principal) role() string {
	if p.token != nil || p.member == nil {
		return ""
	}
	return p.member.BuiltIn
}

func principalFrom(ctx context.Context) *principal {
	p, _ := ctx.Value(principalKey).(*principal)
	return p
}

func storeIDFrom(ctx context.Context) uuid.UUID {
	id, _ := ctx.Value(storeIDKey).(uuid.UUID)
	return id
}

func requestID(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey).(string)
	return id
}

// withRequestID accepts a client's X-Request-Id (at most 128 printable
// characters) or makes one, and echoes it on the response.
func withRequestID(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get("X-Request-Id")
		if !printableASCII(id, 128) {
			id = uuid.NewString()
		}
		w.Header().Set("X-Request-Id", id)
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), requestIDKey, id)))
	})
}

func printableASCII(s string, maxLen int) bool {
	if s == "" || len(s) > maxLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

// recoverer turns a panic into a logged 500.
func (s *Server) recoverer(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				writeError(w, r, fmt.Errorf("panic: %v\n%s", v, debug.Stack()))
			}
		}()
		next.ServeHTTP(w, r)
	})
}

const (
	patPrefix = "svc_pat_"
	appPrefix = "svc_app_"
)

// authenticate requires a bearer token or a session cookie; a write with
// the cookie must come from the merchant's own pages (fromOwnPages).
func (s *Server) authenticate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, err := s.identify(r)
		if err == nil && p.kind == "session" && !s.fromOwnPages(r) {
			err = errCrossSiteRequest
		}
		if err != nil {
			writeError(w, r, err)
			return
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), principalKey, p)))
	})
}

func (s *Server) identify(r *http.Request) (*principal, error) {
	ctx := r.Context()
	if header := r.Header.Get("Authorization"); header != "" {
		scheme, secret, _ := strings.Cut(header, " ")
		if !strings.EqualFold(scheme, "Bearer") || secret == "" {
			return nil, errUnauthenticated
		}
		rejected := errUnauthenticated
		if strings.HasPrefix(secret, appPrefix) {
			rejected = errInvalidAppToken
		}
		if !strings.HasPrefix(secret, patPrefix) && !strings.HasPrefix(secret, appPrefix) {
			return nil, rejected
		}
		token, err := s.db.FindTokenBySecret(ctx, secret)
		if errors.Is(err, storage.ErrNotFound) {
			return nil, rejected
		}
		if err != nil {
			return nil, err
		}
		if !token.Usable(time.Now()) {
			return nil, rejected
		}
		if err := s.db.TouchToken(ctx, token); err != nil {
			s.log.WarnContext(ctx, "record token use", slog.Any("error", err))
		}
		p := &principal{kind: string(token.Kind), token: &token}
		if token.UserID != nil {
			p.userID = *token.UserID
		}
		if token.Kind == storage.TokenPAT && token.UserID != nil {
			// A personal token lives with its minter's membership.
			if token.Minter == nil {
				return nil, rejected
			}
			p.member = token.Minter
		}
		return p, nil
	}
	secret := session.Secret(r, s.cfg.SecureCookies)
	if secret == "" {
		return nil, errUnauthenticated
	}
	if storeID, err := request.ParseUUID(chi.URLParam(r, "store_id")); err == nil {
		// A store route: the session and its membership in one query.
		sess, member, err := s.db.FindSessionMember(ctx, secret, storeID)
		if errors.Is(err, storage.ErrNotFound) {
			return nil, errUnauthenticated
		}
		if err != nil {
			return nil, err
		}
		return &principal{kind: "session", userID: sess.UserID, member: member, memberRead: true}, nil
	}
	sess, err := s.db.FindSession(ctx, secret)
	if errors.Is(err, storage.ErrNotFound) {
		return nil, errUnauthenticated
	}
	if err != nil {
		return nil, err
	}
	return &principal{kind: "session", userID: sess.UserID}, nil
}

// fromOwnPages reports whether a request carrying the session cookie may
// go on: a read always; a write when it comes from the merchant's own pages
// (Sec-Fetch-Site same-origin, or Origin the merchant URL or the API's own)
// or, saying neither, carries the session's CSRF token in X-CSRF-Token. The
// cookie is SameSite=Lax, but a sibling subdomain is same-site and sends it
// with any form post or bodiless fetch (decisions, "Cookie writes").
func (s *Server) fromOwnPages(r *http.Request) bool {
	return !session.Writes(r.Method) ||
		session.WriteAllowed(r, s.cfg.SecureCookies, s.ownOrigins, r.Header.Get("X-CSRF-Token"))
}

// ownPagesOnly refuses a session-cookie write from anywhere but the
// merchant's own pages (fromOwnPages): 403 CROSS_SITE_REQUEST. It guards
// the page routes that answer JSON, which authenticate does not run on.
func (s *Server) ownPagesOnly(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if session.Secret(r, s.cfg.SecureCookies) != "" && !s.fromOwnPages(r) {
			writeError(w, r, errCrossSiteRequest)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// sessionOnly refuses bearer tokens (decisions §2).
func (s *Server) sessionOnly(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if principalFrom(r.Context()).isToken() {
			writeError(w, r, errTokenNotAllowed)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// requireRole lets through only a session of one of roles (owner, admin):
// anyone else gets 403 ROLE_NOT_ALLOWED, a token 403 TOKEN_NOT_ALLOWED.
func (s *Server) requireRole(roles ...string) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			p := principalFrom(r.Context())
			switch {
			case p.isToken():
				writeError(w, r, errTokenNotAllowed)
			case !slices.Contains(roles, p.role()):
				writeError(w, r, errRoleNotAllowed)
			default:
				next.ServeHTTP(w, r)
			}
		})
	}
}

// rateLimit allows each token RateLimitPerMinute requests in any 60 s, and
// each signed-in user SessionRateLimitPerMinute (all their sessions
// together), and sets the X-RateLimit-* headers on every response.
func (s *Server) rateLimit(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := principalFrom(r.Context())
		if !p.isToken() {
			if s.limit(w, r, s.sessionLimiter, p.userID.String(), s.errSessionRateLimited) {
				next.ServeHTTP(w, r)
			}
			return
		}
		if s.limit(w, r, s.tokenLimiter, p.token.ID.String(), s.errRateLimited) {
			next.ServeHTTP(w, r)
		}
	})
}

var errStorefrontRateLimited = newError(http.StatusTooManyRequests, "RATE_LIMITED",
	"Too many storefront requests from this address; try again shortly",
	"طلبات كثيرة من هذا العنوان إلى واجهة المتجر؛ حاول مجددًا بعد قليل")

// perClientLimit limits a public route per client network with l,
// refusing with refusal.
func (s *Server) perClientLimit(l *slidingLimiter, refusal *apiError) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if s.limit(w, r, l, clientNetwork(r, s.cfg.TrustedProxies), refusal) {
				next.ServeHTTP(w, r)
			}
		})
	}
}

// invitationsPerMinute is how many invitation lookups and accepts one
// client network may make a minute: a person opening a link needs a few;
// a token is 32 random bytes, so this bounds password hashing, not guessing.
const invitationsPerMinute = 30

var errInvitationRateLimited = newError(http.StatusTooManyRequests, "RATE_LIMITED",
	"Too many invitation requests from this address; try again shortly",
	"طلبات دعوة كثيرة من هذا العنوان؛ حاول مجددًا بعد قليل")

// clientAddress is the address a request came from: the connection's,
// unless that is a trusted proxy, in which case X-Forwarded-For is read from
// the right (each proxy appends the address it heard from) and the first
// address no trusted proxy owns is the client. Entries left of it are the
// client's own say and are never believed.
// clientNetwork is the unit the per-client limits count: an IPv4 address,
// or the /64 an IPv6 address belongs to (one subscriber's whole allocation,
// so rotating through its addresses does not reset a limit).
func clientNetwork(r *http.Request, trusted []netip.Prefix) string {
	host := clientAddress(r, trusted)
	addr, err := netip.ParseAddr(host)
	if err != nil {
		return host
	}
	if addr = addr.Unmap(); addr.Is6() {
		return netip.PrefixFrom(addr, 64).Masked().String()
	}
	return addr.String()
}

func clientAddress(r *http.Request, trusted []netip.Prefix) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	isTrusted := func(s string) bool {
		addr, err := netip.ParseAddr(strings.TrimSpace(s))
		if err != nil {
			return false
		}
		addr = addr.Unmap()
		for _, p := range trusted {
			if p.Contains(addr) {
				return true
			}
		}
		return false
	}
	if !isTrusted(host) {
		return host
	}
	var hops []string
	for _, h := range r.Header.Values("X-Forwarded-For") {
		hops = append(hops, strings.Split(h, ",")...)
	}
	for i := len(hops) - 1; i >= 0; i-- {
		hop := strings.TrimSpace(hops[i])
		if _, err := netip.ParseAddr(hop); err != nil {
			return host // a garbled chain: count it against the proxy
		}
		if !isTrusted(hop) {
			return hop
		}
	}
	return host
}

// bindStore checks the {store_id} path parameter against the credential
// (storeAccess): a token works only on its own store, a merchant only on
// stores they are a member of, and neither on a suspended or closed store.
// Nothing of another store is read.
func (s *Server) bindStore(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		storeID, err := pathUUID(r, "store_id")
		if err != nil {
			writeError(w, r, err)
			return
		}
		p, err := s.storeAccess(r, principalFrom(r.Context()), storeID)
		if err != nil {
			writeError(w, r, err)
			return
		}
		if !p.isToken() {
			if p.member.LastSeenAt == nil || time.Since(*p.member.LastSeenAt) > 5*time.Minute {
				if err := s.db.TouchMember(r.Context(), storeID, p.userID); err != nil {
					s.log.WarnContext(r.Context(), "record member seen", slog.Any("error", err))
				}
			}
			r = r.WithContext(context.WithValue(r.Context(), principalKey, p))
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), storeIDKey, storeID)))
	})
}

// storeAccess is p bound to storeID: a token of that store, or a session
// with its membership there (read on every request, with the session, by
// identify: a role change applies to the next one, a removal ends access at
// once). A token of another store, or a user who is no member, is
// errStoreMismatch; a suspended or closed store errStoreSuspended. The
// import event streams ask it again while they run (streamAccess).
func (s *Server) storeAccess(r *http.Request, p *principal, storeID uuid.UUID) (*principal, error) {
	if p.isToken() {
		if p.token.StoreID != storeID {
			return nil, errStoreMismatch
		}
		if !p.token.StoreOpen() {
			return nil, errStoreSuspended
		}
		return p, nil
	}
	member, err := s.sessionMember(r, p, storeID)
	if errors.Is(err, storage.ErrNotFound) {
		return nil, errStoreMismatch
	}
	if err != nil {
		return nil, err
	}
	if !member.StoreOpen() {
		return nil, errStoreSuspended
	}
	scoped := *p
	scoped.member = &member
	return &scoped, nil
}

// sessionMember is a session's membership of storeID: the one identify
// read with the session, or read now.
func (s *Server) sessionMember(r *http.Request, p *principal, storeID uuid.UUID) (storage.Membership, error) {
	if p.memberRead {
		if p.member == nil || p.member.StoreID != storeID {
			return storage.Membership{}, storage.ErrNotFound
		}
		return *p.member, nil
	}
	return s.db.FindMembership(r.Context(), storeID, p.userID)
}

// requireScope refuses a token without scope with 403 SCOPE_MISSING.
func (s *Server) requireScope(scope string) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if !principalFrom(r.Context()).allows(scope) {
				writeError(w, r, &apiError{Status: http.StatusForbidden, Code: "SCOPE_MISSING",
					Message:   "This credential or role lacks the scope " + scope,
					MessageAr: "بيانات الاعتماد أو الدور لا يملك الصلاحية " + scope})
				return
			}
			next.ServeHTTP(w, r)
		})
	}
}

// pendingKey is a claimed idempotency key on its way through a request.
type pendingKey struct {
	scope     storage.IdempotencyScope
	completed bool // stored inside the change's own transaction
	// provisional: what was stored there is the answer known at commit (202,
	// processing); the request's final answer replaces it when it is not a 5xx.
	provisional bool
	// replay answers a key completed before. It is written by the route's
	// handler (handlerFunc.ServeHTTP), not here, so the route's scope and
	// role checks run first: a replay answers the credential as it is now.
	replay func(http.ResponseWriter)
	// reached: the request got past the route's checks to its handler. A
	// request a check refused leaves its key unspent.
	reached bool
}

// idempotentHandler is the route handler's side of an Idempotency-Key: it
// writes the replay of a completed key, or marks the key as reached by a
// request that passed the route's checks. It reports whether the handler
// is done (a replay was written).
func idempotentHandler(w http.ResponseWriter, r *http.Request) bool {
	pending, _ := r.Context().Value(idempotencyKey).(*pendingKey)
	switch {
	case pending == nil:
		return false
	case pending.replay != nil:
		pending.replay(w)
		return true
	default:
		pending.reached = true
		return false
	}
}

var writeMethods = []string{http.MethodPost, http.MethodPatch, http.MethodPut, http.MethodDelete}

// maxIdempotentBody bounds what is read to fingerprint a request; uploads
// are 5 MB, a media library PDF 10 MB (and the multipart framing).
const maxIdempotentBody = 11 << 20

// idempotency implements the Idempotency-Key of decisions §1. It claims the
// key before the route's own checks (chi runs them after the store router's
// middleware), so a replay is written by the handler (idempotentHandler)
// once they have passed.
func (s *Server) idempotency(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key, has := r.Header.Get("Idempotency-Key"), r.Header.Values("Idempotency-Key") != nil
		if !has || !slices.Contains(writeMethods, r.Method) {
			next.ServeHTTP(w, r)
			return
		}
		if !printableASCII(key, 255) {
			writeError(w, r, validationError([]wire.FieldError{{Field: "Idempotency-Key", Code: "invalid",
				Message: "must be 1 to 255 printable ASCII characters", MessageAr: "يجب أن يكون من 1 إلى 255 حرفًا مطبوعًا"}}))
			return
		}
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxIdempotentBody))
		if err != nil {
			writeError(w, r, wire.ErrPayloadTooLarge)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		route := s.router.Find(chi.NewRouteContext(), r.Method, r.URL.Path)
		p := principalFrom(r.Context())
		scope := storage.IdempotencyScope{StoreID: storeIDFrom(r.Context()), CredentialID: p.credentialID(),
			Method: r.Method, Route: route, Key: key}
		stored, err := s.db.ClaimIdempotencyKey(r.Context(), scope, wire.Fingerprint(r, body))
		if err != nil {
			writeError(w, r, err)
			return
		}
		if stored != nil {
			replay := &pendingKey{scope: scope, replay: func(w http.ResponseWriter) {
				if stored.ContentType != "" {
					w.Header().Set("Content-Type", stored.ContentType)
				}
				w.Header().Set("Idempotent-Replayed", "true")
				s.metrics.IdempotentReplays.Inc()
				w.WriteHeader(stored.StatusCode)
				_, _ = w.Write(stored.Body)
			}}
			next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), idempotencyKey, replay)))
			return
		}
		pending := &pendingKey{scope: scope}
		rec := &recorder{ResponseWriter: w, status: http.StatusOK}
		// The key must be settled even if the request's context is cancelled.
		settle := context.WithoutCancel(r.Context())
		release := func() {
			if err := s.db.ReleaseIdempotencyKey(settle, scope); err != nil {
				s.log.ErrorContext(settle, "release idempotency key", slog.Any("error", err))
			}
		}
		defer func() {
			if v := recover(); v != nil {
				release()
				panic(v)
			}
			if !pending.reached && !pending.completed {
				release() // refused before its handler (scope, role): the key is not spent
				return
			}
			if rec.status >= 500 {
				if !pending.completed {
					release()
				} // else the change committed with its provisional answer, which stays
				return
			}
			if !pending.completed || pending.provisional {
				err := s.db.CompleteIdempotencyKey(settle, scope, storage.StoredResponse{
					StatusCode: rec.status, ContentType: rec.Header().Get("Content-Type"), Body: rec.body.Bytes()})
				if err != nil {
					s.log.ErrorContext(settle, "store idempotent response", slog.Any("error", err))
				}
			}
		}()
		next.ServeHTTP(rec, r.WithContext(context.WithValue(r.Context(), idempotencyKey, pending)))
	})
}

// recorder keeps the status and body written through it.
type recorder struct {
	http.ResponseWriter
	status int
	body   bytes.Buffer
	wrote  bool
}

func (rec *recorder) WriteHeader(status int) {
	if !rec.wrote {
		rec.status, rec.wrote = status, true
	}
	rec.ResponseWriter.WriteHeader(status)
}

func (rec *recorder) Write(b []byte) (int, error) {
	rec.wrote = true
	rec.body.Write(b)
	return rec.ResponseWriter.Write(b)
}
