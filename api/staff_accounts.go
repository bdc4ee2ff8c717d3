package api

import (
	"errors"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/merchantsvc/svc/api/request"
	"github.com/merchantsvc/svc/api/wire"
	"github.com/merchantsvc/svc/internal/session"
	"github.com/merchantsvc/svc/storage"
)

type userResponse struct {
	ID        uuid.UUID `json:"id"`
	Email     string    `json:"email"`
	Name      string    `json:"name"`
	Locale    string    `json:"locale"`
	CreatedAt time.Time `json:"created_at"`
	// EmailVerified: the address is proven (issue 48 §8).
	EmailVerified bool `json:"email_verified"`
}

func newUserResponse(u storage.User) userResponse {
	return userResponse{ID: u.ID, Email: u.Email, Name: u.Name, Locale: u.Locale, CreatedAt: u.CreatedAt.UTC(), EmailVerified: u.EmailVerified}
}

type storeResponse struct {
	ID              uuid.UUID `json:"id"`
	Name            string    `json:"name"`
	Subdomain       string    `json:"subdomain"`
	Currency        string    `json:"currency"`
	DefaultLanguage string    `json:"default_language"`
	LifecycleState  string    `json:"lifecycle_state"`
	CreatedAt       time.Time `json:"created_at"`
}

func newStoreResponse(s storage.Store) storeResponse {
	return storeResponse{ID: s.ID, Name: s.Name, Subdomain: s.Subdomain, Currency: s.Currency,
		DefaultLanguage: s.DefaultLanguage, LifecycleState: s.LifecycleState, CreatedAt: s.CreatedAt.UTC()}
}

// handleSignup serves POST /auth/signup.
func (s *Server) handleSignup() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		req, err := wire.Decode[request.Signup](r)
		if err != nil {
			return err
		}
		hash, err := s.hashNewPassword(r, req.Password)
		if err != nil {
			return err
		}
		user := storage.User{Email: strings.TrimSpace(req.Email), PasswordHash: hash, Name: strings.TrimSpace(req.Name)}
		store := storage.Store{Name: strings.TrimSpace(req.Store.Name), Subdomain: req.Store.Subdomain,
			Currency: req.Store.Currency, DefaultLanguage: req.Store.DefaultLanguage}
		// The verification mail goes out after commit (account-mail workflow).
		err = s.db.InTx(r.Context(), func(tx *storage.Tx) error {
			if err := tx.CreateUserAndStore(r.Context(), &user, &store); err != nil {
				return err
			}
			_, err := tx.RequestAccountMail(r.Context(), user.ID, storage.MailEmailVerification, storage.EmailVerificationTTL)
			return err
		})
		if err != nil {
			return err
		}
		if err := session.Start(w, r, s.db, user.ID, s.cfg.SecureCookies, s.requestSource(r)); err != nil {
			return err
		}
		respond(w, http.StatusCreated, map[string]any{"user": newUserResponse(user), "store": newStoreResponse(store)})
		return nil
	}
}

// handleLogin serves POST /auth/login.
func (s *Server) handleLogin() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		req, err := wire.Decode[request.Login](r)
		if err != nil {
			return err
		}
		user, err := s.CheckPassword(r, req.Email, req.Password)
		if err != nil {
			return err
		}
		return s.signIn(w, r, user)
	}
}

// signIn starts a session for user and answers as a login does: the user
// and the stores they belong to.
func (s *Server) signIn(w http.ResponseWriter, r *http.Request, user storage.User) error {
	stores, err := s.memberStores(r, user.ID)
	if err != nil {
		return err
	}
	if err := session.Start(w, r, s.db, user.ID, s.cfg.SecureCookies, s.requestSource(r)); err != nil {
		return err
	}
	respond(w, http.StatusOK, map[string]any{"user": newUserResponse(user), "stores": stores})
	return nil
}

// handleLogout serves POST /auth/logout.
func (s *Server) handleLogout() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		if err := session.End(w, r, s.db, s.cfg.SecureCookies); err != nil {
			return err
		}
		w.WriteHeader(http.StatusNoContent)
		return nil
	}
}

// memberStoreResponse is a store a user belongs to, with the role there.
type memberStoreResponse struct {
	Store  storeResponse `json:"store"`
	Role   memberRole    `json:"role"`
	Scopes []string      `json:"scopes"`
	store  storage.Store
}

type memberRole struct {
	ID      uuid.UUID `json:"id"`
	Name    string    `json:"name"`
	BuiltIn *string   `json:"built_in"`
}

// memberStores lists the stores a user belongs to (decisions §16).
func (s *Server) memberStores(r *http.Request, userID uuid.UUID) ([]memberStoreResponse, error) {
	list, err := s.db.FindMemberStores(r.Context(), userID)
	if err != nil {
		return nil, err
	}
	out := make([]memberStoreResponse, 0, len(list))
	for _, m := range list {
		role := memberRole{ID: m.Membership.RoleID, Name: m.Membership.RoleName}
		if m.Membership.Everything() {
			role.BuiltIn = &m.Membership.BuiltIn
		}
		out = append(out, memberStoreResponse{Store: newStoreResponse(m.Store), Role: role,
			Scopes: roleScopes(m.Membership.Everything(), m.Membership.Scopes), store: m.Store})
	}
	return out, nil
}

type tenantResponse struct {
	StoreID        uuid.UUID `json:"store_id"`
	LifecycleState string    `json:"lifecycle_state"`
}

// handleMe serves GET /auth/me.
func (s *Server) handleMe() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		ctx := r.Context()
		p := principalFrom(ctx)
		var (
			user   *userResponse
			tenant *tenantResponse
		)
		if p.userID != uuid.Nil {
			u, err := s.db.FindUserByID(ctx, p.userID)
			if err != nil && !errors.Is(err, storage.ErrNotFound) {
				return err
			}
			if err == nil {
				resp := newUserResponse(u)
				user = &resp
			}
		}
		var store *storage.Store
		stores := []memberStoreResponse{}
		if p.isToken() {
			st, err := s.db.FindStoreByID(ctx, p.token.StoreID)
			if err != nil {
				return err
			}
			store = &st
		} else {
			var err error
			if stores, err = s.memberStores(r, p.userID); err != nil {
				return err
			}
			if len(stores) > 0 {
				store = &stores[0].store
			}
		}
		if store != nil {
			tenant = &tenantResponse{StoreID: store.ID, LifecycleState: store.LifecycleState}
		}
		respond(w, http.StatusOK, map[string]any{"user": user, "tenant": tenant, "stores": stores})
		return nil
	}
}

type tokenInfoResponse struct {
	TokenType       string     `json:"token_type"`
	AppSlug         *string    `json:"app_slug"`
	Name            string     `json:"name,omitempty"`
	StoreID         uuid.UUID  `json:"store_id"`
	StoreName       string     `json:"store_name"`
	Subdomain       string     `json:"subdomain"`
	Currency        string     `json:"currency"`
	DefaultLanguage string     `json:"default_language"`
	Scopes          []string   `json:"scopes"`
	ExpiresAt       *time.Time `json:"expires_at"`
}

var errTokenRequired = newError(http.StatusForbidden, "TOKEN_REQUIRED",
	"This endpoint describes the bearer token used; call it with a token", "هذه العملية تصف رمز الوصول المستخدم؛ استدعها باستخدام رمز")

// handleTokenInfo serves GET /auth/api-key/me.
func (s *Server) handleTokenInfo() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		p := principalFrom(r.Context())
		if !p.isToken() {
			return errTokenRequired
		}
		store, err := s.db.FindStoreByID(r.Context(), p.token.StoreID)
		if err != nil {
			return err
		}
		var slug *string // null for a personal access token
		if p.token.Kind == storage.TokenApp {
			appSlug, err := s.db.AppSlugOfToken(r.Context(), p.token.ID)
			if err != nil {
				return err
			}
			slug = &appSlug
		}
		respond(w, http.StatusOK, tokenInfoResponse{TokenType: string(p.token.Kind), AppSlug: slug, Name: p.token.Name, StoreID: store.ID,
			StoreName: store.Name, Subdomain: store.Subdomain, Currency: store.Currency,
			DefaultLanguage: store.DefaultLanguage, Scopes: p.token.Scopes, ExpiresAt: utcPtr(p.token.ExpiresAt)})
		return nil
	}
}

func utcPtr(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}

// mintedToken is how a mint answers: the token once, and null on an
// idempotent replay (it is never stored).
type mintedToken struct {
	tokenResponse
	Token *string `json:"token"`
}

type tokenResponse struct {
	ID         uuid.UUID  `json:"id"`
	Name       string     `json:"name"`
	TokenHint  string     `json:"token_hint"`
	Scopes     []string   `json:"scopes"`
	StoreID    uuid.UUID  `json:"store_id"`
	ExpiresAt  *time.Time `json:"expires_at"`
	RevokedAt  *time.Time `json:"revoked_at"`
	LastUsedAt *time.Time `json:"last_used_at"`
	CreatedAt  time.Time  `json:"created_at"`
}

func newTokenResponse(t storage.Token) tokenResponse {
	return tokenResponse{ID: t.ID, Name: t.Name, TokenHint: t.Hint, Scopes: t.Scopes, StoreID: t.StoreID,
		ExpiresAt: utcPtr(t.ExpiresAt), RevokedAt: utcPtr(t.RevokedAt), LastUsedAt: utcPtr(t.LastUsedAt), CreatedAt: t.CreatedAt.UTC()}
}

// handleCreateAccessToken serves POST /stores/{store_id}/access-tokens.
func (s *Server) handleCreateAccessToken() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		req, err := wire.Decode[request.CreateToken](r)
		if err != nil {
			return err
		}
		p := principalFrom(r.Context())
		scopes := slices.Compact(slices.Sorted(slices.Values(req.Scopes)))
		secret := storage.NewSecret(patPrefix)
		token := storage.Token{Kind: storage.TokenPAT, StoreID: storeIDFrom(r.Context()), UserID: &p.userID,
			Name: strings.TrimSpace(req.Name), Scopes: scopes, Hint: secret[len(secret)-4:]}
		if req.ExpiresInDays != nil {
			expires := storage.Now().Add(time.Duration(*req.ExpiresInDays) * 24 * time.Hour)
			token.ExpiresAt = &expires
		}
		return s.writeTx(w, r, http.StatusCreated, func(tx *storage.Tx) (any, error) {
			if err := tx.CreateToken(r.Context(), &token, secret); err != nil {
				return nil, err
			}
			resp := newTokenResponse(token)
			return secretAnswer{answer: ok(mintedToken{resp, &secret}), replay: ok(mintedToken{resp, nil})}, nil
		})
	}
}

// handleListAccessTokens serves GET /stores/{store_id}/access-tokens.
func (s *Server) handleListAccessTokens() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		tokens, err := s.db.FindTokens(r.Context(), storeIDFrom(r.Context()), storage.TokenPAT)
		if err != nil {
			return err
		}
		items := views(tokens, newTokenResponse)
		respond(w, http.StatusOK, newList(items, 1, max(len(items), 1), len(items)))
		return nil
	}
}

// handleRevokeAccessToken serves DELETE /stores/{store_id}/access-tokens/{token_id}.
func (s *Server) handleRevokeAccessToken() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		id, err := pathUUID(r, "token_id")
		if err != nil {
			return err
		}
		return s.writeTx(w, r, http.StatusNoContent, func(tx *storage.Tx) (any, error) {
			return nil, tx.RevokeToken(r.Context(), storeIDFrom(r.Context()), id, storage.TokenPAT)
		})
	}
}
