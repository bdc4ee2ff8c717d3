package api

import (
	"crypto/subtle"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/merchantsvc/svc/api/request"
	"github.com/merchantsvc/svc/api/wire"
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
		req, err := wire.Decode[request.Manifest](r)
		if err != nil {
			return err
		}
		if req.Webhooks != nil {
			// The manifest's receiver obeys the subscription URL rules (decisions §7).
			var c request.Checker
			s.checkWebhookURL(r.Context(), &c, req.Webhooks.URL)
			for i := range c.Fields {
				c.Fields[i].Field = "webhooks.url"
			}
			if err := c.Result(); err != nil {
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
		respond(w, http.StatusOK, views(apps, newAppResponse))
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

// handleTokenExchange serves POST /oauth/token: it trades an authorization code for an app token. The
// code is burnt by the first exchange that presents it, whatever happens afterwards.
func (s *Server) handleTokenExchange() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		req, err := wire.Decode[request.Token](r)
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

// handleRevoke serves POST /oauth/revoke: it revokes one of the app's tokens. The answer is the same
// for any token, known or not, and the same statement runs either way.
func (s *Server) handleRevoke() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		req, err := wire.Decode[request.Revoke](r)
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
