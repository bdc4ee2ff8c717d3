package api

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"time"

	"github.com/google/uuid"
	enumspb "go.temporal.io/api/enums/v1"

	"github.com/merchantsvc/svc/api/request"
	"github.com/merchantsvc/svc/api/wire"
	"github.com/merchantsvc/svc/internal/webhook"
	"github.com/merchantsvc/svc/storage"
	"github.com/merchantsvc/svc/workflows"
)

const webhookSecretPrefix = "svc_whsec_"

type subscriptionResponse struct {
	ID             uuid.UUID  `json:"id"`
	URL            string     `json:"url"`
	Events         []string   `json:"events"`
	Description    string     `json:"description"`
	IsActive       bool       `json:"is_active"`
	DisabledAt     *time.Time `json:"disabled_at"`
	DisabledReason *string    `json:"disabled_reason"`
	CreatedAt      time.Time  `json:"created_at"`
	UpdatedAt      time.Time  `json:"updated_at"`
}

// subscriptionWithSecret is how a create or a rotation answers: the signing
// secret once, and null on an idempotent replay (it is never stored).
type subscriptionWithSecret struct {
	subscriptionResponse
	Secret *string `json:"secret"`
}

// showSecretOnce answers sub with secret, and stores its replay without it.
func showSecretOnce(sub storage.Subscription, secret string) secretAnswer {
	resp := newSubscriptionResponse(sub)
	return secretAnswer{answer: ok(subscriptionWithSecret{resp, &secret}), replay: ok(subscriptionWithSecret{resp, nil})}
}

func newSubscriptionResponse(s storage.Subscription) subscriptionResponse {
	return subscriptionResponse{ID: s.ID, URL: s.URL, Events: s.Events, Description: s.Description, IsActive: s.IsActive,
		DisabledAt: utcPtr(s.DisabledAt), DisabledReason: s.DisabledReason, CreatedAt: s.CreatedAt.UTC(), UpdatedAt: s.UpdatedAt.UTC()}
}

// checkWebhookURL applies the https and public-address rule (422 when broken).
func (s *Server) checkWebhookURL(ctx context.Context, c *request.Checker, raw string) {
	if len(raw) > 2048 {
		c.Add("url", "too_long", "must be at most 2048 characters")
		return
	}
	var urlErr *webhook.URLError
	if err := s.cfg.WebhookGuard.CheckURL(ctx, raw); errors.As(err, &urlErr) {
		c.Fields = append(c.Fields, wire.FieldError{Field: "url", Code: "invalid_url", Message: urlErr.Reason,
			MessageAr: "يجب أن يكون الرابط HTTPS عامًا ولا يشير إلى عنوان داخلي أو خاص"})
	}
}

// checkEventsReadable refuses (422, the event's field) an event the
// credential could not read itself: a subscription is a standing read, so
// order events need orders:read and product events catalog:read, the rule
// app grants follow (storage.EventReadScope).
func checkEventsReadable(ctx context.Context, c *request.Checker, events []string) {
	p := principalFrom(ctx)
	for i, e := range events {
		if scope := storage.EventReadScope(e); scope != "" && !p.allows(scope) {
			c.Add(fmt.Sprintf("events[%d]", i), "scope_required", "needs "+scope+" to receive "+e)
		}
	}
}

// handleCreateWebhook serves POST /stores/{store_id}/webhooks.
func (s *Server) handleCreateWebhook() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		req, err := wire.Decode[request.CreateSubscription](r)
		if err != nil {
			return err
		}
		var c request.Checker
		s.checkWebhookURL(r.Context(), &c, req.URL)
		checkEventsReadable(r.Context(), &c, req.Events)
		if len(c.Fields) > 0 {
			return validationError(c.Fields)
		}
		sub := storage.Subscription{StoreID: storeIDFrom(r.Context()), URL: req.URL, Events: dedupe(req.Events),
			Description: req.Description, IsActive: req.IsActive == nil || *req.IsActive, Secret: storage.NewSecret(webhookSecretPrefix)}
		return s.writeTx(w, r, http.StatusCreated, func(tx *storage.Tx) (any, error) {
			if err := tx.CreateSubscription(r.Context(), &sub); err != nil {
				return nil, err
			}
			return showSecretOnce(sub, sub.Secret), nil
		})
	}
}

func dedupe(events []string) []string {
	var out []string
	for _, e := range events {
		if !slices.Contains(out, e) {
			out = append(out, e)
		}
	}
	return out
}

// handleListWebhooks serves GET /stores/{store_id}/webhooks.
func (s *Server) handleListWebhooks() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		subs, err := s.db.FindSubscriptions(r.Context(), storeIDFrom(r.Context()))
		if err != nil {
			return err
		}
		list := make([]subscriptionResponse, 0, len(subs))
		for _, sub := range subs {
			list = append(list, newSubscriptionResponse(sub))
		}
		respond(w, http.StatusOK, list)
		return nil
	}
}

// handleGetWebhook serves GET /stores/{store_id}/webhooks/{webhook_id}.
func (s *Server) handleGetWebhook() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		id, err := pathUUID(r, "webhook_id")
		if err != nil {
			return err
		}
		sub, err := s.db.FindSubscriptionByID(r.Context(), storeIDFrom(r.Context()), id)
		if err != nil {
			return err
		}
		respond(w, http.StatusOK, newSubscriptionResponse(sub))
		return nil
	}
}

// handleUpdateWebhook serves PATCH /stores/{store_id}/webhooks/{webhook_id}.
func (s *Server) handleUpdateWebhook() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		id, err := pathUUID(r, "webhook_id")
		if err != nil {
			return err
		}
		req, err := wire.Decode[request.UpdateSubscription](r)
		if err != nil {
			return err
		}
		var upd storage.SubscriptionUpdate
		if req.URL.Set {
			var c request.Checker
			s.checkWebhookURL(r.Context(), &c, req.URL.Value)
			if len(c.Fields) > 0 {
				return validationError(c.Fields)
			}
			upd.URL = &req.URL.Value
		}
		if req.Events.Set {
			var c request.Checker
			checkEventsReadable(r.Context(), &c, req.Events.Value)
			if len(c.Fields) > 0 {
				return validationError(c.Fields)
			}
			upd.Events = dedupe(req.Events.Value)
		}
		if req.Description.Set {
			upd.Description = &req.Description.Value
		}
		if req.IsActive.Set {
			upd.IsActive = &req.IsActive.Value
		}
		return writeView(s, w, r, http.StatusOK, newSubscriptionResponse, func(tx *storage.Tx) (storage.Subscription, error) {
			return tx.UpdateSubscription(r.Context(), storeIDFrom(r.Context()), id, upd)
		})
	}
}

// handleDeleteWebhook serves DELETE /stores/{store_id}/webhooks/{webhook_id}.
func (s *Server) handleDeleteWebhook() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		id, err := pathUUID(r, "webhook_id")
		if err != nil {
			return err
		}
		return s.writeTx(w, r, http.StatusNoContent, func(tx *storage.Tx) (any, error) {
			return nil, tx.DeleteSubscription(r.Context(), storeIDFrom(r.Context()), id)
		})
	}
}

// handleRotateWebhookSecret serves POST /stores/{store_id}/webhooks/{webhook_id}/rotate-secret.
func (s *Server) handleRotateWebhookSecret() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		id, err := pathUUID(r, "webhook_id")
		if err != nil {
			return err
		}
		secret := storage.NewSecret(webhookSecretPrefix)
		return s.writeTx(w, r, http.StatusOK, func(tx *storage.Tx) (any, error) {
			sub, err := tx.RotateSubscriptionSecret(r.Context(), storeIDFrom(r.Context()), id, secret)
			if err != nil {
				return nil, err
			}
			return showSecretOnce(sub, secret), nil
		})
	}
}

type testResult struct {
	DeliveryID   uuid.UUID `json:"delivery_id"`
	StatusCode   *int      `json:"status_code"`
	ResponseBody string    `json:"response_body"`
	DurationMS   int64     `json:"duration_ms"`
	Error        *string   `json:"error"`
}

// handleTestWebhook serves POST /stores/{store_id}/webhooks/{webhook_id}/test: it delivers a signed
// webhook.ping at once (through a short workflow on the worker) and answers what the endpoint
// answered.
func (s *Server) handleTestWebhook() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		id, err := pathUUID(r, "webhook_id")
		if err != nil {
			return err
		}
		storeID := storeIDFrom(r.Context())
		var delivery storage.Delivery
		err = s.db.InTx(r.Context(), func(tx *storage.Tx) error {
			if _, err := tx.FindSubscriptionByID(r.Context(), storeID, id); err != nil {
				return err
			}
			delivery, err = tx.CreatePingDelivery(r.Context(), storeID, id)
			return err
		})
		if err != nil {
			return err
		}
		ctx, cancel := context.WithTimeout(r.Context(), 40*time.Second)
		defer cancel()
		work := workflows.Work{Kind: workflows.KindWebhookTest, StoreID: storeID, ResourceID: delivery.ID,
			Summary: "test ping of webhook " + id.String()[:8] + " · " + s.storeLabel(ctx, storeID)}
		run, err := s.temporal.ExecuteWorkflow(ctx, work.StartOptions(workflows.WebhookTestWorkflowID(delivery.ID), workflows.WebhookTaskQueue(s.cfg.TaskQueue)),
			workflows.WebhookTest, workflows.WebhookTestInput{StoreID: storeID, DeliveryID: delivery.ID})
		if err != nil {
			return fmt.Errorf("start webhook test: %w", err)
		}
		var out workflows.WebhookTestResult
		if err := run.Get(ctx, &out); err != nil {
			return fmt.Errorf("webhook test: %w", err)
		}
		res := testResult{DeliveryID: delivery.ID, ResponseBody: out.ResponseBody, DurationMS: out.DurationMS}
		if out.StatusCode != 0 {
			res.StatusCode = &out.StatusCode
		}
		if out.Error != "" {
			res.Error = &out.Error
		}
		respond(w, http.StatusOK, res)
		return nil
	}
}

type attemptResponse struct {
	DeliveryID   uuid.UUID `json:"delivery_id"`
	Event        string    `json:"event"`
	Attempt      int       `json:"attempt"`
	Status       string    `json:"status"`
	ResponseCode *int      `json:"response_code"`
	ResponseBody string    `json:"response_body"`
	Error        *string   `json:"error"`
	DurationMS   int64     `json:"duration_ms"`
	AttemptedAt  time.Time `json:"attempted_at"`
}

// handleWebhookLogs serves GET /stores/{store_id}/webhooks/{webhook_id}/logs.
func (s *Server) handleWebhookLogs() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		id, err := pathUUID(r, "webhook_id")
		if err != nil {
			return err
		}
		q := newQueryParser(r)
		page, limit := q.page(20)
		if err := q.err(); err != nil {
			return err
		}
		storeID := storeIDFrom(r.Context())
		if _, err := s.db.FindSubscriptionByID(r.Context(), storeID, id); err != nil {
			return err
		}
		attempts, total, err := s.db.FindAttempts(r.Context(), storeID, id, storage.Page{Page: page, Limit: limit})
		if err != nil {
			return err
		}
		items := make([]attemptResponse, 0, len(attempts))
		for _, a := range attempts {
			item := attemptResponse{DeliveryID: a.DeliveryID, Event: a.Event, Attempt: a.Attempt, Status: string(a.Status),
				ResponseCode: a.ResponseCode, ResponseBody: a.ResponseBody, DurationMS: a.Duration.Milliseconds(),
				AttemptedAt: a.AttemptedAt.UTC()}
			if a.Error != "" {
				item.Error = &a.Error
			}
			items = append(items, item)
		}
		respond(w, http.StatusOK, newList(items, page, limit, total))
		return nil
	}
}

// startLadders starts an immediate attempt followed by the usual retry
// ladder for each requeued delivery. A start Temporal does not take is left
// to the dispatcher's lost-start sweep: the delivery stays requeued in the
// database, and the answer is 202 either way.
func (s *Server) startLadders(ctx context.Context, deliveries []storage.Delivery) {
	if len(deliveries) == 0 {
		return
	}
	label := s.storeLabel(ctx, deliveries[0].StoreID) // one store's deliveries
	for _, d := range deliveries {
		next := d.Attempts + 1
		opts := workflows.DeliveryWork(d.StoreID, d.ID, d.Event, next, label).StartOptions(workflows.RedeliveryWorkflowID(d.ID, next),
			workflows.WebhookTaskQueue(s.cfg.TaskQueue))
		opts.WorkflowIDReusePolicy = enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE
		_, err := s.temporal.ExecuteWorkflow(ctx, opts, workflows.Delivery, workflows.DeliveryInput{StoreID: d.StoreID, DeliveryID: d.ID,
			Schedule: workflows.RedeliverySchedule(s.cfg.WebhookRetrySchedule), NextAttempt: next})
		if err != nil {
			loggerFrom(ctx).WarnContext(ctx, "start redelivery; the dispatcher will", slog.String("delivery_id", d.ID.String()), slog.Any("error", err))
			return
		}
		if err := s.db.MarkLadderStarted(context.WithoutCancel(ctx), d.StoreID, d.ID, next); err != nil {
			loggerFrom(ctx).WarnContext(ctx, "mark redelivery started", slog.Any("error", err))
		}
	}
}

// handleRedeliver serves POST
// /stores/{store_id}/webhooks/{webhook_id}/deliveries/{delivery_id}/redeliver.
func (s *Server) handleRedeliver() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		id, err := pathUUID(r, "webhook_id")
		if err != nil {
			return err
		}
		deliveryID, err := pathUUID(r, "delivery_id")
		if err != nil {
			return err
		}
		return s.requeue(w, r, id, &deliveryID, time.Time{})
	}
}

// handleRecover serves POST /stores/{store_id}/webhooks/{webhook_id}/recover.
func (s *Server) handleRecover() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		id, err := pathUUID(r, "webhook_id")
		if err != nil {
			return err
		}
		req, err := wire.Decode[request.Recover](r)
		if err != nil {
			return err
		}
		return s.requeue(w, r, id, nil, *req.Since)
	}
}

var errSubscriptionInactive = newError(http.StatusConflict, "WEBHOOK_INACTIVE",
	"The subscription is switched off; re-enable it with PATCH is_active=true first",
	"الاشتراك متوقف؛ أعد تفعيله أولًا عبر PATCH بقيمة is_active=true")

func (s *Server) requeue(w http.ResponseWriter, r *http.Request, subID uuid.UUID, deliveryID *uuid.UUID, since time.Time) error {
	storeID := storeIDFrom(r.Context())
	var (
		deliveries []storage.Delivery
		answer     map[string]any
	)
	err := s.db.InTx(r.Context(), func(tx *storage.Tx) error {
		sub, err := tx.FindSubscriptionByID(r.Context(), storeID, subID)
		if err != nil {
			return err
		}
		if !sub.IsActive {
			return errSubscriptionInactive
		}
		deliveries, err = tx.RequeueDeliveries(r.Context(), storeID, subID, deliveryID, since)
		if err != nil {
			return err
		}
		if deliveryID != nil && len(deliveries) == 0 {
			return fmt.Errorf("delivery %s: %w", deliveryID, storage.ErrNotFound)
		}
		ids := make([]uuid.UUID, 0, len(deliveries))
		for _, d := range deliveries {
			ids = append(ids, d.ID)
		}
		answer = map[string]any{"queued": len(ids), "delivery_ids": ids}
		return completeKeyIn(r, tx, http.StatusAccepted, answer)
	})
	if err != nil {
		return err
	}
	s.startLadders(r.Context(), deliveries)
	respond(w, http.StatusAccepted, answer)
	return nil
}

type notificationResponse struct {
	ID        uuid.UUID  `json:"id"`
	Kind      string     `json:"kind"`
	Title     string     `json:"title"`
	TitleAr   string     `json:"title_ar"`
	Body      string     `json:"body"`
	BodyAr    string     `json:"body_ar"`
	Data      any        `json:"data"`
	CreatedAt time.Time  `json:"created_at"`
	ReadAt    *time.Time `json:"read_at"`
}

// handleListNotifications serves GET /stores/{store_id}/notifications.
func (s *Server) handleListNotifications() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		q := newQueryParser(r)
		page, limit := q.page(20)
		if err := q.err(); err != nil {
			return err
		}
		list, total, err := s.db.FindNotifications(r.Context(), storeIDFrom(r.Context()), storage.Page{Page: page, Limit: limit})
		if err != nil {
			return err
		}
		items := make([]notificationResponse, 0, len(list))
		for _, n := range list {
			items = append(items, notificationResponse{ID: n.ID, Kind: string(n.Kind), Title: n.Title, TitleAr: n.TitleAr, Body: n.Body,
				BodyAr: n.BodyAr, Data: n.Data, CreatedAt: n.CreatedAt.UTC(), ReadAt: utcPtr(n.ReadAt)})
		}
		respond(w, http.StatusOK, newList(items, page, limit, total))
		return nil
	}
}
