package api

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/google/uuid"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"

	"github.com/merchantsvc/svc/api/request"
	"github.com/merchantsvc/svc/api/wire"
	"github.com/merchantsvc/svc/internal/gateway"
	"github.com/merchantsvc/svc/storage"
	"github.com/merchantsvc/svc/workflows"
)

// Card payments through the store's gateway (decisions §18).
var (
	errSecretsKeyMissing = newError(http.StatusServiceUnavailable, "SECRETS_KEY_MISSING",
		"This deployment has no secrets key (SVC_SECRETS_KEY), so no gateway can be connected",
		"لا يوجد مفتاح أسرار لهذا النشر (SVC_SECRETS_KEY)، فلا يمكن ربط بوابة دفع")
	errGatewayUnavailable = newError(http.StatusServiceUnavailable, "GATEWAY_UNAVAILABLE",
		"The payment gateway did not answer in time; try again shortly",
		"لم تستجب بوابة الدفع في الوقت المحدد؛ أعد المحاولة بعد قليل")
	errNotCardOrder = newError(http.StatusConflict, "NOT_A_CARD_ORDER",
		"This order is not paid by card through the store's gateway", "هذا الطلب لا يُدفع بالبطاقة عبر بوابة دفع المتجر")
	errSignatureInvalid = newError(http.StatusBadRequest, "SIGNATURE_INVALID",
		"The event's signature does not verify with this store's webhook secret, or it is older than 300 seconds",
		"توقيع الحدث لا يتطابق مع سر الويب هوك لهذا المتجر، أو مضى عليه أكثر من 300 ثانية")
	errEventUnreadable = newError(http.StatusBadRequest, "INVALID_EVENT",
		"The event is signed but cannot be read", "الحدث موقّع لكن لا يمكن قراءته")
	// errPaymentNotRecorded answers an event that came before the order's
	// PaymentIntent was recorded: any non-2xx makes Stripe redeliver it
	// (backing off, for up to three days), and nothing is taken meanwhile.
	errPaymentNotRecorded = newError(http.StatusConflict, "PAYMENT_NOT_RECORDED",
		"The order's gateway payment is not recorded yet; the event is not taken and will be accepted when redelivered",
		"لم يُسجَّل دفع الطلب لدى البوابة بعد؛ لم يُقبل الحدث وسيُقبل عند إعادة إرساله")
)

// gatewayProviders are the gateways a store can connect.
var gatewayProviders = []string{storage.GatewayStripe}

// maxGatewayEvent bounds a gateway event's body.
const maxGatewayEvent = 256 << 10

type gatewayResponse struct {
	Provider    string    `json:"provider"`
	Connected   bool      `json:"connected"`
	AccountHint string    `json:"account_hint"`
	WebhookURL  string    `json:"webhook_url"`
	UpdatedAt   time.Time `json:"updated_at"`
}

func (s *Server) newGatewayResponse(storeID uuid.UUID, c storage.GatewayConnection) gatewayResponse {
	return gatewayResponse{Provider: c.Provider, Connected: true, AccountHint: c.AccountHint,
		WebhookURL: s.cfg.BaseURL + "/api/v1/gateway-webhooks/" + c.Provider + "/" + storeID.String(), UpdatedAt: c.UpdatedAt.UTC()}
}

// handleConnectGateway serves PUT /stores/{store_id}/payment-gateways/{provider}: it checks the key
// at the gateway and keeps both secrets sealed (settings:write). The answer never holds a secret.
// The store's owner is mailed who connected or replaced the keys (issue 48 §6).
func (s *Server) handleConnectGateway() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		provider, err := gatewayProvider(r)
		if err != nil {
			return err
		}
		req, err := wire.Decode[request.ConnectGateway](r)
		if err != nil {
			return err
		}
		if s.cfg.Secrets == nil {
			return errSecretsKeyMissing
		}
		g, err := gateway.Open(gateway.Account{Provider: provider, SecretKey: req.SecretKey, APIBase: s.cfg.StripeAPIBase})
		if err != nil {
			return err
		}
		var refused *gateway.RefusedError
		// The gateway's own words are never repeated or logged: they may
		// quote the key (stripe-mock does).
		if err := g.Check(r.Context()); errors.As(err, &refused) {
			return validationError([]wire.FieldError{{Field: "secret_key", Code: "rejected",
				Message: fmt.Sprintf("the gateway refused this key (HTTP %d)", refused.Status), MessageAr: "رفضت بوابة الدفع هذا المفتاح"}})
		} else if err != nil {
			loggerFrom(r.Context()).WarnContext(r.Context(), "check gateway key: the gateway did not answer", slog.String("provider", provider))
			return errGatewayUnavailable
		}
		storeID := storeIDFrom(r.Context())
		var conn storage.GatewayConnection
		err = s.db.InTx(r.Context(), func(tx *storage.Tx) error {
			change := s.gatewayChange(r, storage.GatewayConnected)
			before, err := tx.LockGatewayConnection(r.Context(), storeID, provider)
			switch {
			case err == nil:
				change.Kind, change.PreviousHint = storage.GatewayReplaced, before.AccountHint
			case !errors.Is(err, storage.ErrNotFound):
				return err
			}
			if err := tx.ConnectGateway(r.Context(), s.cfg.Secrets, storage.GatewayAccount{StoreID: storeID, Provider: provider,
				SecretKey: req.SecretKey, WebhookSecret: req.WebhookSecret, StatementDescriptor: req.StatementDescriptor}); err != nil {
				return err
			}
			if conn, err = tx.FindGatewayConnection(r.Context(), storeID, provider); err != nil {
				return err
			}
			change.AccountHint = conn.AccountHint
			_, err = tx.RecordGatewayChange(r.Context(), change)
			return err
		})
		if err != nil {
			return err
		}
		respond(w, http.StatusOK, s.newGatewayResponse(storeID, conn))
		return nil
	}
}

// handleListGateways serves GET /stores/{store_id}/payment-gateways (settings:read).
func (s *Server) handleListGateways() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		storeID := storeIDFrom(r.Context())
		conns, err := s.db.FindGatewayConnections(r.Context(), storeID)
		if err != nil {
			return err
		}
		out := make([]gatewayResponse, 0, len(conns))
		for _, c := range conns {
			out = append(out, s.newGatewayResponse(storeID, c))
		}
		respond(w, http.StatusOK, out)
		return nil
	}
}

// handleDisconnectGateway serves DELETE /stores/{store_id}/payment-gateways/{provider}: card
// checkout is refused from then on (settings:write), and the store's owner is mailed who did it.
func (s *Server) handleDisconnectGateway() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		provider, err := gatewayProvider(r)
		if err != nil {
			return err
		}
		if err := s.db.InTx(r.Context(), func(tx *storage.Tx) error {
			change := s.gatewayChange(r, storage.GatewayDisconnected)
			before, err := tx.LockGatewayConnection(r.Context(), change.StoreID, provider)
			if err != nil {
				return err
			}
			change.PreviousHint = before.AccountHint
			if err := tx.DisconnectGateway(r.Context(), change.StoreID, provider); err != nil {
				return err
			}
			_, err = tx.RecordGatewayChange(r.Context(), change)
			return err
		}); err != nil {
			return err
		}
		w.WriteHeader(http.StatusNoContent)
		return nil
	}
}

// gatewayChange is the owner's notice of a change to the keys of the
// request's gateway, in the request's name: its member (the routes are
// owner or admin, session only) and its source as the audit entry has it.
func (s *Server) gatewayChange(r *http.Request, kind storage.GatewayChangeKind) storage.GatewayChange {
	return storage.GatewayChange{StoreID: storeIDFrom(r.Context()), Provider: chi.URLParam(r, "provider"), Kind: kind,
		ActorUserID: principalFrom(r.Context()).userID, From: s.requestSource(r)}
}

func gatewayProvider(r *http.Request) (string, error) {
	p := chi.URLParam(r, "provider")
	for _, known := range gatewayProviders {
		if p == known {
			return p, nil
		}
	}
	return "", errNotFound
}

// cardCheckout is what a card checkout needs: the store's gateway; a store
// without one (or a deployment without a secrets key) does not offer card.
func (s *Server) cardCheckout(ctx context.Context, storeID uuid.UUID) error {
	_, err := s.db.FindGatewayConnection(ctx, storeID, storage.GatewayStripe)
	if errors.Is(err, storage.ErrNotFound) || (err == nil && s.cfg.Secrets == nil) {
		return validationError([]wire.FieldError{{Field: "payment_method", Code: "not_offered",
			Message: "this store does not take card payments", MessageAr: "هذا المتجر لا يقبل الدفع بالبطاقة"}})
	}
	return err
}

// cardPaymentWait bounds how long a request waits for the gateway to open
// a payment.
const cardPaymentWait = 10 * time.Second

// openedCardPayment is the order's card payment once the gateway has
// opened it. One call to Temporal starts the order's card-payment workflow
// unless it runs (update-with-start: the checkout's start, or a start the
// API lost) and waits on its payment-ready update, which returns when the
// payment is open (or cannot be); then the stored payment is read.
func (s *Server) openedCardPayment(ctx context.Context, store storage.Store, o storage.Order) (storage.CardPayment, error) {
	p, err := s.db.FindCardPayment(ctx, s.cfg.Secrets, store.ID, o.ID)
	if err != nil || p.ClientSecret != "" || p.Status != storage.CardPaymentOpen {
		return p, err
	}
	wctx, cancel := context.WithTimeout(ctx, cardPaymentWait)
	defer cancel()
	id := workflows.CardPaymentWorkflowID(o.ID)
	opts := workflows.CardPaymentWork(store.ID, o.ID, o.OrderNumber, workflows.StoreLabel(store.Subdomain, store.ID)).StartOptions(id, s.cfg.TaskQueue)
	opts.WorkflowIDConflictPolicy = enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING
	opts.WorkflowIDReusePolicy = enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE
	start := s.temporal.NewWithStartWorkflowOperation(opts, workflows.CardPayment, workflows.CardPaymentInput{StoreID: store.ID, OrderID: o.ID})
	handle, err := s.temporal.UpdateWithStartWorkflow(wctx, client.UpdateWithStartWorkflowOptions{StartWorkflowOperation: start,
		UpdateOptions: client.UpdateWorkflowOptions{WorkflowID: id, UpdateName: workflows.PaymentReadyUpdate, WaitForStage: client.WorkflowUpdateStageCompleted}})
	if err == nil {
		if _, serr := start.Get(wctx); serr == nil {
			if merr := s.db.MarkCardPaymentStarted(context.WithoutCancel(ctx), store.ID, o.ID); merr != nil {
				loggerFrom(ctx).WarnContext(ctx, "mark card payment started", slog.Any("error", merr))
			}
		}
		err = handle.Get(wctx, nil)
	}
	if err != nil { // the dispatcher's lost-start sweep starts a workflow this did not
		loggerFrom(ctx).InfoContext(ctx, "card payment not ready", slog.String("order_id", o.ID.String()), slog.Any("error", err))
	}
	return s.db.FindCardPayment(ctx, s.cfg.Secrets, store.ID, o.ID)
}

// checkoutPayment is a card checkout's payment: the client secret, or
// null when the gateway did not open the payment in time (the buyer asks
// the card-payment route again).
type checkoutPayment struct {
	Provider     string    `json:"provider"`
	ClientSecret *string   `json:"client_secret"`
	ExpiresAt    time.Time `json:"expires_at"`
}

func (s *Server) checkoutCardPayment(ctx context.Context, store storage.Store, o storage.Order) checkoutPayment {
	p, err := s.openedCardPayment(ctx, store, o)
	if err != nil {
		loggerFrom(ctx).WarnContext(ctx, "read card payment", slog.Any("error", err))
	}
	out := checkoutPayment{Provider: storage.GatewayStripe, ExpiresAt: p.ExpiresAt.UTC()}
	if p.ClientSecret != "" {
		out.ClientSecret = &p.ClientSecret
	}
	return out
}

type cardPaymentResponse struct {
	ClientSecret string    `json:"client_secret"`
	Amount       int64     `json:"amount"`
	Currency     string    `json:"currency"`
	ExpiresAt    time.Time `json:"expires_at"`
}

// handleStorefrontCardPayment serves POST /storefront/{subdomain}/orders/{order_id}/card-payment:
// the buyer's client secret for the order's payment, the same on every call while it is payable.
func (s *Server) handleStorefrontCardPayment() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		orderID, err := pathUUID(r, "order_id")
		if err != nil {
			return err
		}
		store, err := s.storefrontStore(r)
		if err != nil {
			return err
		}
		if err := s.checkOrderToken(r, store.ID, orderID); err != nil {
			return err
		}
		o, err := s.db.FindOrderByRef(r.Context(), store.ID, orderID.String())
		if err != nil {
			return err
		}
		if o.PaymentMethod != "card" {
			return errNotCardOrder
		}
		p, err := s.openedCardPayment(r.Context(), store, o)
		if errors.Is(err, storage.ErrNotFound) {
			return errNotCardOrder // a card order the merchant created: paid by hand
		}
		if err != nil {
			return err
		}
		switch {
		case p.Status == storage.CardPaymentSucceeded || o.PaymentStatus == storage.PaymentPaid:
			return errOrderAlreadyPaid
		case p.Status != storage.CardPaymentOpen || o.Status == storage.OrderCancelled:
			return errOrderClosedForPayment
		case p.ClientSecret == "":
			return errGatewayUnavailable
		}
		respond(w, http.StatusOK, cardPaymentResponse{ClientSecret: p.ClientSecret, Amount: p.Amount, Currency: p.Currency, ExpiresAt: p.ExpiresAt.UTC()})
		return nil
	}
}

// handleGatewayWebhook serves POST /gateway-webhooks/{provider}/{store_id}: the gateway's events,
// verified with the store's webhook secret and taken once by event id.
func (s *Server) handleGatewayWebhook() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		provider, err := gatewayProvider(r)
		if err != nil {
			return err
		}
		storeID, err := pathUUID(r, "store_id")
		if err != nil {
			return errNotFound
		}
		account, err := s.db.FindGatewayAccount(r.Context(), s.cfg.Secrets, storeID, provider)
		if errors.Is(err, storage.ErrNoSecretsKey) {
			return errNotFound
		}
		if err != nil {
			return err
		}
		payload, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxGatewayEvent))
		if err != nil {
			return wire.ErrPayloadTooLarge
		}
		g, err := gateway.Open(gateway.Account{Provider: provider, WebhookSecret: account.WebhookSecret})
		if err != nil {
			return err
		}
		ev, err := g.Event(payload, r.Header.Get("Stripe-Signature"))
		if errors.Is(err, gateway.ErrBadSignature) {
			return errSignatureInvalid
		}
		if err != nil {
			return errEventUnreadable
		}
		duplicate := false
		err = s.db.InTx(r.Context(), func(tx *storage.Tx) error {
			fresh, err := tx.RecordGatewayEvent(r.Context(), storeID, provider, ev.ID, ev.Type)
			if err != nil || !fresh {
				duplicate = !fresh
				return err
			}
			return s.takeGatewayEvent(r.Context(), tx, storeID, ev)
		})
		if err != nil {
			return err
		}
		respond(w, http.StatusOK, map[string]any{"received": true, "duplicate": duplicate})
		return nil
	}
}

// takeGatewayEvent acts on a verified event inside the transaction that
// records it. A success signals the order's card-payment workflow (a new
// run when it has ended: a late payment goes back) before the commit: if
// Temporal does not take it the event is not recorded, and the gateway's
// retry brings it again.
func (s *Server) takeGatewayEvent(ctx context.Context, tx *storage.Tx, storeID uuid.UUID, ev gateway.Event) error {
	switch ev.Kind {
	case gateway.EventPaymentSucceeded, gateway.EventPaymentFailed:
		orderID, err := uuid.Parse(ev.Metadata["order_id"])
		if err != nil || ev.Metadata["store_id"] != storeID.String() {
			return nil // not one of ours
		}
		p, err := tx.FindCardPayment(ctx, nil, storeID, orderID)
		if errors.Is(err, storage.ErrNotFound) || (err == nil && p.IntentID != "" && p.IntentID != ev.Payment) {
			loggerFrom(ctx).WarnContext(ctx, "gateway event for no payment of ours", slog.String("event_id", ev.ID))
			return nil
		}
		if err != nil {
			return err
		}
		if p.IntentID == "" {
			// Refused, not taken: the transaction that would record the
			// event rolls back, so the gateway's redelivery is new.
			return errPaymentNotRecorded
		}
		if ev.Kind == gateway.EventPaymentFailed {
			return tx.RecordCardPaymentFailed(ctx, storeID, orderID, ev.Payment, ev.FailureMessage)
		}
		o, err := tx.FindOrderByRef(ctx, storeID, orderID.String())
		if err != nil {
			return err
		}
		opts := workflows.CardPaymentWork(storeID, orderID, o.OrderNumber, s.storeLabel(ctx, storeID)).
			StartOptions(workflows.CardPaymentWorkflowID(orderID), s.cfg.TaskQueue)
		opts.WorkflowIDReusePolicy = enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE
		if _, err := s.temporal.SignalWithStartWorkflow(ctx, opts.ID, workflows.GatewayPaymentSignal,
			workflows.GatewayPayment{EventID: ev.ID, IntentID: ev.Payment, Amount: ev.Amount, Currency: ev.Currency}, opts,
			workflows.CardPayment, workflows.CardPaymentInput{StoreID: storeID, OrderID: orderID}); err != nil {
			return err
		}
		return tx.MarkCardPaymentStarted(ctx, storeID, orderID)
	case gateway.EventRefundUpdated:
		for _, u := range ev.Refunds {
			if u.Status == gateway.StatusPending {
				continue
			}
			refundID, err := uuid.Parse(u.Metadata["refund_id"])
			if err != nil {
				if refundID, err = tx.FindGatewayRefund(ctx, storeID, u.Reference); errors.Is(err, storage.ErrNotFound) {
					continue
				}
			}
			if err != nil {
				return err
			}
			if _, err := tx.RecordGatewayRefund(ctx, storeID, refundID, u.Status, u.Reference, u.FailureReason); err != nil &&
				!errors.Is(err, storage.ErrNotFound) {
				return err
			}
		}
	}
	return nil
}

// closeCardPayment tells the card-payment workflow of an order the merchant
// just cancelled, unpaid, that its payment is to close now: the gateway's
// intent is cancelled at once rather than at the store's timeout, so a
// buyer still on the payment page cannot pay a cancelled order. It runs
// after the cancel commits and never fails the request: a signal that does
// not arrive leaves the close to the timeout, and an order with no such
// workflow (another method, or a card order the merchant created and is
// paid by hand) has nothing to close.
func (s *Server) closeCardPayment(ctx context.Context, o storage.Order) {
	if o.Status != storage.OrderCancelled || o.PaymentMethod != "card" || o.PaidTotal > 0 || s.temporal == nil {
		return
	}
	err := s.temporal.SignalWorkflow(ctx, workflows.CardPaymentWorkflowID(o.ID), "", workflows.OrderCancelledSignal, nil)
	var notFound *serviceerror.NotFound
	if err != nil && !errors.As(err, &notFound) {
		loggerFrom(ctx).WarnContext(ctx, "signal the card payment of a cancelled order", slog.String("order_id", o.ID.String()),
			slog.Any("error", err))
	}
}
