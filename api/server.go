// Package api is the HTTP surface: routes, middleware, the error map, and one
// file per resource with its request and response shapes. Storage records are
// never serialised directly; the wire format is the specification's.
package api

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/netip"
	"sync"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/google/uuid"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/merchantsvc/svc/api/pages"
	"github.com/merchantsvc/svc/api/site"
	"github.com/merchantsvc/svc/internal/metrics"
	"github.com/merchantsvc/svc/internal/session"
	"github.com/merchantsvc/svc/internal/tracing"
	"github.com/merchantsvc/svc/internal/webhook"
	"github.com/merchantsvc/svc/storage"
	"github.com/merchantsvc/svc/storage/blob"
	"github.com/merchantsvc/svc/workflows"
)

// Config is what the API needs to know beyond its dependencies.
type Config struct {
	// RateLimitPerMinute is the per-token limit in any 60 s window.
	RateLimitPerMinute int
	// SessionRateLimitPerMinute is the per-user limit of session-
	// authenticated API requests in any 60 s window (default 300).
	SessionRateLimitPerMinute int
	// ExportRateLimitPerMinute is the tighter limit of expensive reads (the
	// CSV exports, the waybill print run) per token or signed-in user in
	// any 60 s window (default 10).
	ExportRateLimitPerMinute int
	// StorefrontRateLimitPerMinute is the public storefront's limit per
	// client address (default 120).
	StorefrontRateLimitPerMinute int
	// SecureCookies marks the session cookie Secure (everywhere but local dev).
	SecureCookies bool
	BaseURL       string
	MerchantURL   string
	// StorefrontURL is the buyer-facing shop, with {subdomain} in it; recovery
	// emails link to {StorefrontURL}/cart/{cart_id}?token=… (default
	// {BaseURL}/storefront/{subdomain}).
	StorefrontURL string
	// StorefrontDomain, when set, serves each store's website at
	// https://{subdomain}.{StorefrontDomain} (decisions §23); unset, at
	// {BaseURL}/s/{subdomain}.
	StorefrontDomain string
	TaskQueue        string
	// WebhookGuard validates subscription URLs (decisions §7).
	WebhookGuard webhook.Guard
	// WebhookRetrySchedule is the ladder redeliveries follow after their immediate attempt.
	WebhookRetrySchedule []time.Duration
	// ImageWait and ImportWait bound how long an upload waits for its
	// workflow before answering 202 (decisions §3: 20 s).
	ImageWait  time.Duration
	ImportWait time.Duration
	// ImportEventsInterval is how often an import's event stream reads its
	// progress (default 250 ms).
	ImportEventsInterval time.Duration
	// ImportStreamsPerUser is how many import event streams one user (all
	// their sessions and personal tokens together), or one app token, may
	// hold open at once on this replica (default 5).
	ImportStreamsPerUser int
	// ChatWebhookSecret verifies the chat provider's callbacks; unset, the
	// callback endpoint answers 404.
	ChatWebhookSecret string
	// TrustedProxies are the load balancers whose X-Forwarded-For names the
	// client (for the storefront's per-address limit); none: the connection.
	TrustedProxies []netip.Prefix
	// StorefrontOrdersPerPhone and StorefrontOrdersPerNetwork bound one
	// store's storefront orders per hour (defaults 5 and 10).
	StorefrontOrdersPerPhone   int
	StorefrontOrdersPerNetwork int
	// Passwords throttles sign-ins and signups (defaults in PasswordLimits).
	Passwords PasswordLimits
	// InvitationsPerStorePerHour and InvitationsPerUserPerHour bound the
	// invitation mails (invites and resends) a store sends and a member
	// asks for in any hour (defaults 30 and 20).
	InvitationsPerStorePerHour int
	InvitationsPerUserPerHour  int
	// Tracing, when enabled, gives every request a server span named by its
	// route pattern, continuing the caller's traceparent.
	Tracing *tracing.Tracing
	// Secrets seals and opens stores' gateway secrets (SVC_SECRETS_KEY);
	// nil, no gateway can be connected and card checkout is not offered.
	Secrets *storage.Sealer
	// StripeAPIBase is Stripe's API address (empty: api.stripe.com;
	// stripe-mock in dev and tests).
	StripeAPIBase string
	// WhatsAppAPIBase is the WhatsApp Cloud API's Graph address (empty:
	// Meta's; the local double in dev and tests).
	WhatsAppAPIBase string
	// MetricsToken, when set, lets a scraper read /metrics on the public
	// port with "Authorization: Bearer <token>"; unset, /metrics is 404
	// there and served only by MetricsHandler (svc: on SVC_DEBUG_ADDR).
	MetricsToken string
}

// Server is the HTTP API.
type Server struct {
	cfg          Config
	db           *storage.DB
	temporal     client.Client
	blob         *blob.Store
	log          *slog.Logger
	tokenLimiter *slidingLimiter
	// sessionLimiter limits session-authenticated API requests per user.
	sessionLimiter *slidingLimiter
	// exportLimiter limits expensive reads per token or signed-in user.
	exportLimiter *slidingLimiter
	buyerLimiter  *slidingLimiter
	// invitationLimiter limits the public invitation lookup and accept
	// per client network (each accept hashes a password).
	invitationLimiter *slidingLimiter
	// recoveryLimiter limits the public password reset, its confirmation
	// and the email verification per client network.
	recoveryLimiter *slidingLimiter
	// giftCardMisses counts the storefront's gift card codes that reach no
	// usable card, per cart and per client network, an hour long.
	giftCardMisses        *slidingLimiter
	passwords             *passwordGuard
	buyerOrders           *buyerOrderLimits
	invitationMails       invitationMails
	errRateLimited        *apiError
	errSessionRateLimited *apiError
	errExportRateLimited  *apiError
	errImportStreamsBusy  *apiError
	router                *chi.Mux
	handler               http.Handler // the router, inside the tracing span when on
	metrics               *metrics.API
	outbox                outboxGauges
	pages                 *pages.Pages
	site                  *site.Site
	ownOrigins            []string      // the merchant URL's and the API's origins (fromOwnPages)
	streamsEnd            chan struct{} // closed by EndStreams
	importStreams         *streamSlots  // the open import event streams per user
	endStreamsOnce        sync.Once
	ready                 readyCache
}

// NewServer wires the API over its dependencies.
func NewServer(cfg Config, db *storage.DB, temporal client.Client, blobStore *blob.Store, log *slog.Logger) *Server {
	if cfg.RateLimitPerMinute <= 0 {
		cfg.RateLimitPerMinute = 300
	}
	if cfg.SessionRateLimitPerMinute <= 0 {
		cfg.SessionRateLimitPerMinute = 300
	}
	if cfg.ExportRateLimitPerMinute <= 0 {
		cfg.ExportRateLimitPerMinute = 10
	}
	if cfg.StorefrontRateLimitPerMinute <= 0 {
		cfg.StorefrontRateLimitPerMinute = 120
	}
	if cfg.TaskQueue == "" {
		cfg.TaskQueue = "svc"
	}
	if cfg.StorefrontURL == "" {
		cfg.StorefrontURL = cfg.BaseURL + "/storefront/{subdomain}"
	}
	if cfg.Secrets != nil {
		db.UseSealer(cfg.Secrets) // a paid order issues its sold gift cards' codes (§19)
	}
	if cfg.ImageWait == 0 {
		cfg.ImageWait = 20 * time.Second
	}
	if cfg.ImportEventsInterval == 0 {
		cfg.ImportEventsInterval = 250 * time.Millisecond
	}
	if cfg.ImportStreamsPerUser <= 0 {
		cfg.ImportStreamsPerUser = 5
	}
	if cfg.ImportWait == 0 {
		cfg.ImportWait = 20 * time.Second
	}
	if cfg.WebhookRetrySchedule == nil {
		cfg.WebhookRetrySchedule = workflows.DefaultRetrySchedule
	}
	s := &Server{streamsEnd: make(chan struct{}),
		cfg:      cfg,
		db:       db,
		temporal: temporal,
		blob:     blobStore,
		log:      log,
		// The counts are shared by every replica once SyncRateLimits runs.
		tokenLimiter:      newSlidingLimiter("token", cfg.RateLimitPerMinute, time.Minute),
		sessionLimiter:    newSlidingLimiter("session", cfg.SessionRateLimitPerMinute, time.Minute),
		exportLimiter:     newSlidingLimiter("export", cfg.ExportRateLimitPerMinute, time.Minute),
		buyerLimiter:      newSlidingLimiter("storefront", cfg.StorefrontRateLimitPerMinute, time.Minute),
		invitationLimiter: newSlidingLimiter("invitation", invitationsPerMinute, time.Minute),
		recoveryLimiter:   newSlidingLimiter("recovery", recoveriesPerMinute, time.Minute),
		giftCardMisses:    newSlidingLimiter("gift_card_misses", giftCardMissesPerHour, time.Hour),
		passwords:         newPasswordGuard(cfg.Passwords),
		invitationMails:   newInvitationMails(cfg.InvitationsPerStorePerHour, cfg.InvitationsPerUserPerHour),
		errRateLimited: newError(http.StatusTooManyRequests, "RATE_LIMITED",
			fmt.Sprintf("Rate limit exceeded: at most %d requests per minute per token", cfg.RateLimitPerMinute),
			fmt.Sprintf("تم تجاوز حد الطلبات: %d طلب في الدقيقة لكل رمز كحد أقصى", cfg.RateLimitPerMinute)),
		errSessionRateLimited: newError(http.StatusTooManyRequests, "RATE_LIMITED",
			fmt.Sprintf("Rate limit exceeded: at most %d requests per minute per signed-in user", cfg.SessionRateLimitPerMinute),
			fmt.Sprintf("تم تجاوز حد الطلبات: %d طلب في الدقيقة لكل مستخدم مسجّل الدخول كحد أقصى", cfg.SessionRateLimitPerMinute)),
		errExportRateLimited: newError(http.StatusTooManyRequests, "RATE_LIMITED",
			fmt.Sprintf("Rate limit exceeded: at most %d exports per minute per token or signed-in user", cfg.ExportRateLimitPerMinute),
			fmt.Sprintf("تم تجاوز حد الطلبات: %d عمليات تصدير في الدقيقة لكل رمز أو مستخدم كحد أقصى", cfg.ExportRateLimitPerMinute)),
	}
	s.importStreams = newStreamSlots(cfg.ImportStreamsPerUser)
	s.errImportStreamsBusy = importStreamsBusy(cfg.ImportStreamsPerUser)
	s.buyerOrders = newBuyerOrderLimits(cfg.StorefrontOrdersPerPhone, cfg.StorefrontOrdersPerNetwork,
		func(r *http.Request) string { return clientNetwork(r, cfg.TrustedProxies) })
	s.ownOrigins = originsOf(cfg.BaseURL, cfg.MerchantURL)
	s.pages = pages.New(pages.Config{SecureCookies: cfg.SecureCookies, OwnOrigins: s.ownOrigins, CheckPassword: s.CheckPassword,
		WebhookRetrySchedule: cfg.WebhookRetrySchedule, Source: s.requestSource, ExpensiveRead: s.pageExportAllowed}, db, log)
	s.site = site.New(site.Config{BaseURL: cfg.BaseURL, StorefrontDomain: cfg.StorefrontDomain}, db, log)
	s.pages.UseSite(s.site)
	s.metrics = metrics.NewAPI()
	s.outbox = newOutboxGauges(s.metrics.Registry)
	s.router = s.routes()
	s.handler = cfg.Tracing.Handler(s.router)
	return s
}

// originsOf is the origin (scheme://host[:port]) of each URL that has one.
func originsOf(urls ...string) []string {
	var origins []string
	for _, raw := range urls {
		if origin := session.OriginOf(raw); origin != "" {
			origins = append(origins, origin)
		}
	}
	return origins
}

// ServeHTTP makes the server an http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.handler.ServeHTTP(w, r)
}

// Routes lists every method and route pattern served, for the OpenAPI check.
func (s *Server) Routes() ([][2]string, error) {
	var routes [][2]string
	err := chi.Walk(s.router, func(method, route string, _ http.Handler, _ ...func(http.Handler) http.Handler) error {
		routes = append(routes, [2]string{method, route})
		return nil
	})
	return routes, err
}

// withStatus is an answer whose status the change decides: a content
// delete answers 200 with the menu items it removed, else 204.
type withStatus struct {
	status int
	body   any
}

// writeTx runs fn in one transaction and answers with what it returns. When
// the request carries an Idempotency-Key the response is stored in that same
// transaction, so the key commits with the change it guards.
// fn returns the whole response body (nil for none). An error means nothing
// committed and nothing was written: the handler returns it.
func (s *Server) writeTx(w http.ResponseWriter, r *http.Request, status int, fn func(tx *storage.Tx) (any, error)) error {
	var body []byte
	pending, _ := r.Context().Value(idempotencyKey).(*pendingKey)
	err := s.db.InTx(r.Context(), func(tx *storage.Tx) error {
		tx.ActAs(stockActor(principalFrom(r.Context())))
		tx.ServeFilesAt(s.cfg.BaseURL)
		result, err := fn(tx)
		if err != nil {
			return err
		}
		if decided, ok := result.(withStatus); ok {
			status, result = decided.status, decided.body
		}
		stored := result
		once, secret := result.(secretAnswer)
		if secret {
			result, stored = once.answer, once.replay
		}
		if body, err = encodeBody(result); err != nil {
			return err
		}
		// The audit entry notes the answer without its secret (a token, a
		// gift card's code): the log never holds one.
		audited := body
		if secret {
			if audited, err = encodeBody(stored); err != nil {
				return err
			}
		}
		noteAnswer(r.Context(), audited)
		if pending != nil {
			storedBody, err := encodeBody(stored)
			if err != nil {
				return err
			}
			resp := storage.StoredResponse{StatusCode: status, Body: storedBody}
			if storedBody != nil {
				resp.ContentType = "application/json; charset=utf-8"
			}
			if err := tx.CompleteIdempotencyKey(r.Context(), pending.scope, resp); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	if pending != nil {
		pending.completed = true
	}
	if body != nil {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
	}
	w.WriteHeader(status)
	_, _ = w.Write(body)
	return nil
}

// removeObject deletes an object a failed request stored, as far as the
// object store lets it; what is left is unreferenced and harmless.
func (s *Server) removeObject(ctx context.Context, key string) {
	if err := s.blob.RemovePrefix(context.WithoutCancel(ctx), key); err != nil {
		loggerFrom(ctx).WarnContext(ctx, "remove stored upload", slog.String("key", key), slog.Any("error", err))
	}
}

// completeKeyIn stores answer as the request's Idempotency-Key response
// inside tx, the change's own transaction, so a retry after a crash replays
// it instead of making the change again. The answer is provisional (the one
// known at commit, such as 202 processing); the request's final answer
// replaces it afterwards. Without a key it does nothing.
func completeKeyIn(r *http.Request, tx *storage.Tx, status int, answer any) error {
	pending, _ := r.Context().Value(idempotencyKey).(*pendingKey)
	if pending == nil {
		return nil
	}
	body, err := encodeBody(ok(answer))
	if err != nil {
		return err
	}
	if err := tx.CompleteIdempotencyKey(r.Context(), pending.scope, storage.StoredResponse{StatusCode: status,
		ContentType: "application/json; charset=utf-8", Body: body}); err != nil {
		return err
	}
	pending.completed, pending.provisional = true, true
	return nil
}

func jsonUnmarshal(raw []byte, v any) error { return json.Unmarshal(raw, v) }

// secretAnswer is the answer of a write that shows a secret once (a token,
// a signing secret). An idempotent replay answers replay instead, the same
// resource without the secret: a secret is never stored beside its key.
type secretAnswer struct {
	answer, replay any
}

// encodeBody is a response body as writeTx sends and stores it (nil for none).
func encodeBody(v any) ([]byte, error) {
	if v == nil {
		return nil, nil
	}
	var buf bytes.Buffer
	if err := json.NewEncoder(&buf).Encode(v); err != nil {
		return nil, fmt.Errorf("encode response: %w", err)
	}
	return buf.Bytes(), nil
}

// ok wraps data in the success envelope.
func ok(data any) envelope { return envelope{Success: true, Data: data} }

// readiness checks every dependency and names those that do not answer.
func (s *Server) readiness(ctx context.Context) map[string]string {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	status := map[string]string{"postgres": "ok", "temporal": "ok", "object_store": "ok"}
	if err := s.db.Ping(ctx); err != nil {
		status["postgres"] = "unreachable"
	}
	if s.temporal == nil {
		status["temporal"] = "not configured"
	} else if _, err := s.temporal.CheckHealth(ctx, &client.CheckHealthRequest{}); err != nil {
		status["temporal"] = "unreachable"
	}
	if s.blob == nil {
		status["object_store"] = "not configured"
	} else if err := s.blob.Ping(ctx); err != nil {
		status["object_store"] = "unreachable"
	}
	return status
}

// writeView is writeTx for the common change: it runs change, and answers
// its result shaped by view in the success envelope.
func writeView[T, R any](s *Server, w http.ResponseWriter, r *http.Request, status int, view func(T) R, change func(tx *storage.Tx) (T, error)) error {
	return s.writeTx(w, r, status, func(tx *storage.Tx) (any, error) {
		v, err := change(tx)
		if err != nil {
			return nil, err
		}
		return ok(view(v)), nil
	})
}

// storeLabel names a store in workflow summaries (the Temporal UI's list).
// A store that cannot be read is named by its id: a summary never fails a
// request.
func (s *Server) storeLabel(ctx context.Context, storeID uuid.UUID) string {
	store, err := s.db.FindStoreByID(ctx, storeID)
	if err != nil {
		return workflows.StoreLabel("", storeID)
	}
	return workflows.StoreLabel(store.Subdomain, storeID)
}

// startWork starts the workflow of a row the request just committed, under
// an id derived from the row, and records the start with marked. A start
// Temporal does not take is logged and returned: the row stays unstarted,
// and the dispatcher's lost-start sweep starts it (docs/guide/conventions.md,
// "When a dependency fails"). If the sweep got there first, the run is the same.
func (s *Server) startWork(ctx context.Context, id string, work workflows.Work, workflow, input any, marked func(context.Context) error) (client.WorkflowRun, error) {
	opts := work.StartOptions(id, s.cfg.TaskQueue)
	opts.WorkflowIDReusePolicy = enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE
	run, err := s.temporal.ExecuteWorkflow(ctx, opts, workflow, input)
	if err != nil {
		loggerFrom(ctx).WarnContext(ctx, "start workflow; the dispatcher will", slog.String("workflow_id", id), slog.Any("error", err))
		return nil, err
	}
	if err := marked(context.WithoutCancel(ctx)); err != nil {
		loggerFrom(ctx).WarnContext(ctx, "mark workflow started", slog.String("workflow_id", id), slog.Any("error", err))
	}
	return run, nil
}
