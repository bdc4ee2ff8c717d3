package api

import (
	"crypto/subtle"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/merchantsvc/svc/storage"
)

// Partner apps (spec §5.2, decisions §8).

const (
	clientIDPrefix     = "svc_ci_"
	clientSecretPrefix = "svc_cs_"
)

var (
	errInvalidClient = newError(http.StatusUnauthorized, "INVALID_CLIENT",
		"Invalid client credentials", "بيانات اعتماد التطبيق غير صالحة")
	errUnsupportedGrant = newError(http.StatusBadRequest, "UNSUPPORTED_GRANT_TYPE",
		"grant_type must be authorization_code", "يجب أن تكون قيمة grant_type هي authorization_code")
	errCodeInvalid = newError(http.StatusBadRequest, "INVALID_GRANT",
		"The authorization code is invalid", "رمز التفويض غير صالح")
	errCodeExpired = newError(http.StatusBadRequest, "INVALID_GRANT",
		"The authorization code has expired", "انتهت صلاحية رمز التفويض")
	errCodeUsed = newError(http.StatusBadRequest, "INVALID_GRANT",
		"The authorization code was already used", "تم استخدام رمز التفويض من قبل")
)

var slugPattern = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{1,48}[a-z0-9]$`)

type manifestRequest struct {
	Name   string `json:"name"`
	Slug   string `json:"slug"`
	AppURL string `json:"app_url"`
	OAuth  *struct {
		Scopes         []string `json:"scopes"`
		OptionalScopes []string `json:"optional_scopes"`
		RedirectURLs   []string `json:"redirect_urls"`
	} `json:"oauth"`
	Webhooks *struct {
		URL    string   `json:"url"`
		Events []string `json:"events"`
	} `json:"webhooks"`
}

// checkAppURL allows absolute https URLs without a query string or fragment,
// so that the signed strings stay predictable (spec §5.2 rule 7).
func checkAppURL(c *checker, field, raw string) {
	u, err := url.Parse(raw)
	switch {
	case err != nil || u.Host == "" || !u.IsAbs():
		c.add(field, "invalid", "must be an absolute https URL")
	case u.Scheme != "https":
		c.add(field, "https_required", "must use https")
	case u.RawQuery != "" || u.ForceQuery || u.Fragment != "" || strings.Contains(raw, "#"):
		c.add(field, "query_not_allowed", "must not have a query string or fragment")
	}
}

func (req manifestRequest) Valid() []fieldError {
	var c checker
	c.text("name", req.Name, 1, 100)
	if !slugPattern.MatchString(req.Slug) {
		c.add("slug", "invalid", "must be 3-50 lowercase letters, digits and dashes")
	}
	checkAppURL(&c, "app_url", req.AppURL)
	if req.OAuth == nil {
		c.add("oauth", "required", "is required")
		return c.result()
	}
	if len(req.OAuth.Scopes) == 0 {
		c.add("oauth.scopes", "required", "list at least one scope")
	}
	for i, s := range req.OAuth.Scopes {
		if !slices.Contains(allScopes, s) {
			c.add(fmt.Sprintf("oauth.scopes[%d]", i), "one_of", "must be one of the 18 scopes")
		}
	}
	for i, s := range req.OAuth.OptionalScopes {
		switch {
		case !slices.Contains(allScopes, s):
			c.add(fmt.Sprintf("oauth.optional_scopes[%d]", i), "one_of", "must be one of the 18 scopes")
		case slices.Contains(req.OAuth.Scopes, s):
			c.add(fmt.Sprintf("oauth.optional_scopes[%d]", i), "duplicate", "is already a required scope")
		}
	}
	if len(req.OAuth.RedirectURLs) == 0 || len(req.OAuth.RedirectURLs) > 10 {
		c.add("oauth.redirect_urls", "out_of_range", "list 1 to 10 redirect URLs")
	}
	for i, u := range req.OAuth.RedirectURLs {
		checkAppURL(&c, fmt.Sprintf("oauth.redirect_urls[%d]", i), u)
	}
	if req.Webhooks != nil {
		// The receiver's URL rules (https, public address) are checked by the
		// handler with the webhook guard.
		if len(req.Webhooks.Events) == 0 {
			c.add("webhooks.events", "required", "list at least one event")
		}
		for i, e := range req.Webhooks.Events {
			if !slices.Contains(storage.WebhookEvents, e) {
				c.add(fmt.Sprintf("webhooks.events[%d]", i), "one_of", "must be one of "+strings.Join(storage.WebhookEvents, ", "))
			}
		}
	}
	return c.result()
}

type appResponse struct {
	ID       uuid.UUID `json:"id"`
	Name     string    `json:"name"`
	Slug     string    `json:"slug"`
	AppURL   string    `json:"app_url"`
	ClientID string    `json:"client_id"`
	OAuth    struct {
		Scopes         []string `json:"scopes"`
		OptionalScopes []string `json:"optional_scopes"`
		RedirectURLs   []string `json:"redirect_urls"`
	} `json:"oauth"`
	Webhooks *struct {
		URL    string   `json:"url"`
		Events []string `json:"events"`
	} `json:"webhooks"`
	CreatedAt time.Time `json:"created_at"`
}

func newAppResponse(a storage.App) appResponse {
	resp := appResponse{ID: a.ID, Name: a.Name, Slug: a.Slug, AppURL: a.AppURL, ClientID: a.ClientID, CreatedAt: a.CreatedAt.UTC()}
	resp.OAuth.Scopes, resp.OAuth.OptionalScopes, resp.OAuth.RedirectURLs = a.Scopes, orEmpty(a.OptionalScopes), a.RedirectURLs
	if a.WebhookURL != nil {
		resp.Webhooks = &struct {
			URL    string   `json:"url"`
			Events []string `json:"events"`
		}{*a.WebhookURL, a.WebhookEvents}
	}
	return resp
}

// handleRegisterApp serves POST /apps: it registers a partner app from its manifest (session); the
// client secret appears only in this answer and at rotation.
func (s *Server) handleRegisterApp() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		req, err := decode[manifestRequest](r)
		if err != nil {
			return err
		}
		if req.Webhooks != nil {
			// The manifest's receiver obeys the subscription URL rules (decisions §7).
			var c checker
			s.checkWebhookURL(r.Context(), &c, req.Webhooks.URL)
			for i := range c.fields {
				c.fields[i].Field = "webhooks.url"
			}
			if err := c.result(); err != nil {
				return validationError(err)
			}
		}
		secret := storage.NewSecret(clientSecretPrefix)
		a := storage.App{OwnerUserID: principalFrom(r.Context()).userID, Name: strings.TrimSpace(req.Name), Slug: req.Slug, AppURL: req.AppURL,
			Scopes: dedupe(req.OAuth.Scopes), OptionalScopes: dedupe(orEmpty(req.OAuth.OptionalScopes)), RedirectURLs: req.OAuth.RedirectURLs,
			WebhookEvents: []string{}, ClientID: storage.NewSecret(clientIDPrefix)[:len(clientIDPrefix)+24], ClientSecret: secret}
		if req.Webhooks != nil {
			a.WebhookURL, a.WebhookEvents = &req.Webhooks.URL, dedupe(req.Webhooks.Events)
		}
		if a.OptionalScopes == nil {
			a.OptionalScopes = []string{}
		}
		if err := s.db.InTx(r.Context(), func(tx *storage.Tx) error { return tx.CreateApp(r.Context(), &a) }); err != nil {
			return err
		}
		respond(w, http.StatusCreated, map[string]any{"app": newAppResponse(a), "client_id": a.ClientID, "client_secret": secret})
		return nil
	}
}

// handleListApps serves GET /apps.
func (s *Server) handleListApps() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		apps, err := s.db.FindAppsByOwner(r.Context(), principalFrom(r.Context()).userID)
		if err != nil {
			return err
		}
		items := make([]appResponse, 0, len(apps))
		for _, a := range apps {
			items = append(items, newAppResponse(a))
		}
		respond(w, http.StatusOK, items)
		return nil
	}
}

// handleRotateAppSecret serves POST /apps/{app_id}/rotate-secret: it issues a new client secret; the
// old one is dead at once (token exchange, revoke, and every signature).
func (s *Server) handleRotateAppSecret() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		id, err := pathUUID(r, "app_id")
		if err != nil {
			return err
		}
		secret := storage.NewSecret(clientSecretPrefix)
		var a storage.App
		err = s.db.InTx(r.Context(), func(tx *storage.Tx) error {
			a, err = tx.RotateAppSecret(r.Context(), principalFrom(r.Context()).userID, id, secret)
			return err
		})
		if err != nil {
			return err
		}
		respond(w, http.StatusOK, map[string]any{"app": newAppResponse(a), "client_id": a.ClientID, "client_secret": secret})
		return nil
	}
}

// clientApp checks client credentials in constant time against the app's
// current secret.
func (s *Server) clientApp(r *http.Request, clientID, secret string) (storage.App, error) {
	a, err := s.db.FindAppByClientID(r.Context(), clientID)
	if errors.Is(err, storage.ErrNotFound) {
		// Compare anyway, so an unknown client takes as long as a wrong secret.
		subtle.ConstantTimeCompare([]byte(secret), []byte(clientSecretPrefix+strings.Repeat("x", 43)))
		return storage.App{}, errInvalidClient
	}
	if err != nil {
		return storage.App{}, err
	}
	if subtle.ConstantTimeCompare([]byte(secret), []byte(a.ClientSecret)) != 1 {
		return storage.App{}, errInvalidClient
	}
	return a, nil
}

type tokenRequest struct {
	ClientID     string  `json:"client_id"`
	ClientSecret string  `json:"client_secret"`
	Code         string  `json:"code"`
	GrantType    *string `json:"grant_type"`
}

func (req tokenRequest) Valid() []fieldError {
	var c checker
	c.text("client_id", req.ClientID, 1, 200)
	c.text("client_secret", req.ClientSecret, 1, 200)
	c.text("code", req.Code, 1, 200)
	return c.result()
}

// handleTokenExchange serves POST /oauth/token: it trades an authorization code for an app token. The
// code is burnt by the first exchange that presents it, whatever happens afterwards.
func (s *Server) handleTokenExchange() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		req, err := decode[tokenRequest](r)
		if err != nil {
			return err
		}
		if req.GrantType != nil && *req.GrantType != "authorization_code" {
			return errUnsupportedGrant
		}
		grant, burnErr := s.db.BurnAuthCode(r.Context(), req.Code)
		a, err := s.clientApp(r, req.ClientID, req.ClientSecret)
		if err != nil {
			return err
		}
		switch {
		case burnErr != nil:
			return burnErr
		case grant.AppID != a.ID:
			return storage.ErrCodeInvalid // another app's code
		}
		secret := storage.NewSecret(appPrefix)
		var token storage.Token
		err = s.db.InTx(r.Context(), func(tx *storage.Tx) error {
			token, err = tx.InstallApp(r.Context(), a, grant, secret, s.requestSource(r))
			return err
		})
		if err != nil {
			return err
		}
		respond(w, http.StatusOK, map[string]any{"access_token": secret, "scopes": token.Scopes, "store_id": token.StoreID})
		return nil
	}
}

type revokeRequest struct {
	ClientID     string `json:"client_id"`
	ClientSecret string `json:"client_secret"`
	Token        string `json:"token"`
}

func (req revokeRequest) Valid() []fieldError {
	var c checker
	c.text("client_id", req.ClientID, 1, 200)
	c.text("client_secret", req.ClientSecret, 1, 200)
	c.text("token", req.Token, 1, 500)
	return c.result()
}

// handleRevoke serves POST /oauth/revoke: it revokes one of the app's tokens. The answer is the same
// for any token, known or not, and the same statement runs either way.
func (s *Server) handleRevoke() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		req, err := decode[revokeRequest](r)
		if err != nil {
			return err
		}
		a, err := s.clientApp(r, req.ClientID, req.ClientSecret)
		if err != nil {
			return err
		}
		if err := s.db.RevokeAppToken(r.Context(), a.ID, req.Token); err != nil {
			return err
		}
		respond(w, http.StatusOK, map[string]any{"revoked": true})
		return nil
	}
}

// handleUninstallApp serves DELETE /stores/{store_id}/apps/{app_id}: it removes an app from a store
// (session): its tokens answer 401 INVALID_TOKEN from then on and its webhooks stop.
func (s *Server) handleUninstallApp() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		id, err := pathUUID(r, "app_id")
		if err != nil {
			return err
		}
		return s.writeTx(w, r, http.StatusNoContent, func(tx *storage.Tx) (any, error) {
			return nil, tx.UninstallApp(r.Context(), storeIDFrom(r.Context()), id)
		})
	}
}
