package api

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/merchantsvc/svc/api/request"
	"github.com/merchantsvc/svc/api/wire"
	"github.com/merchantsvc/svc/storage"
	"github.com/merchantsvc/svc/workflows"
)

var (
	errCheckoutNotAbandoned = newError(http.StatusConflict, "CHECKOUT_NOT_ABANDONED",
		"Only an abandoned checkout can be marked recovered", "يمكن وضع علامة الاسترداد على سلة متروكة فقط")
	errCheckoutCompleted = newError(http.StatusConflict, "CHECKOUT_COMPLETED",
		"This checkout was already completed or recovered", "تم إتمام هذه السلة أو استردادها بالفعل")
	errRecoveryEmailFailed = newError(http.StatusBadGateway, "EMAIL_NOT_SENT",
		"The recovery email could not be sent; try again later", "تعذّر إرسال بريد الاسترداد؛ حاول لاحقًا")
)

// checkoutResponse is an abandoned checkout (a cart) as the merchant sees it.
type checkoutResponse struct {
	cartResponse
	Value               int64      `json:"value"`
	HasContact          bool       `json:"has_contact"`
	LastActivityAt      time.Time  `json:"last_activity_at"`
	AbandonedAt         *time.Time `json:"abandoned_at"`
	RecoveredAt         *time.Time `json:"recovered_at"`
	RecoverySource      *string    `json:"recovery_source"`
	RecoveryNote        *string    `json:"recovery_note"`
	RecoveryEmailSentAt *time.Time `json:"recovery_email_sent_at"`
	CheckedOutAt        *time.Time `json:"checked_out_at"`
}

func utc(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}

func newCheckoutResponse(c storage.Cart) checkoutResponse {
	resp := checkoutResponse{cartResponse: newCartResponse(c), Value: c.Subtotal, HasContact: c.Email != nil || c.Phone != nil,
		LastActivityAt: c.LastActivityAt.UTC(), AbandonedAt: utc(c.AbandonedAt), RecoveredAt: utc(c.RecoveredAt),
		RecoverySource: c.RecoverySource, RecoveryNote: c.RecoveryNote, RecoveryEmailSentAt: utc(c.RecoveryEmailSentAt),
		CheckedOutAt: utc(c.CheckedOutAt)}
	resp.Status = string(c.Status) // the merchant sees the real state
	return resp
}

// handleListCheckouts serves GET /stores/{store_id}/abandoned-checkouts: it marks the store's carts
// inactive for the threshold as abandoned (the lazy rule of spec §3), then lists them.
func (s *Server) handleListCheckouts() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		storeID := storeIDFrom(r.Context())
		q := newQueryParser(r)
		page, limit := q.page(20)
		include, only, hasContact := q.boolean("include_recovered"), q.boolean("only_recovered"), q.boolean("has_contact")
		defaultMinutes, err := s.db.AbandonmentThreshold(r.Context(), storeID)
		if err != nil {
			return err
		}
		minutes := q.intIn("abandonment_threshold_minutes", storage.MinAbandonmentMinutes, storage.MaxAbandonmentMinutes, defaultMinutes)
		if err := q.err(); err != nil {
			return err
		}
		f := storage.CheckoutFilter{HasContact: hasContact, Page: storage.Page{Page: page, Limit: limit},
			IncludeRecovered: include != nil && *include, OnlyRecovered: only != nil && *only}
		if err := s.db.InTx(r.Context(), func(tx *storage.Tx) error {
			_, err := tx.MarkCartsAbandoned(r.Context(), storeID, time.Duration(minutes)*time.Minute)
			return err
		}); err != nil {
			return err
		}
		carts, total, err := s.db.FindAbandonedCheckouts(r.Context(), storeID, f)
		if err != nil {
			return err
		}
		items := make([]checkoutResponse, 0, len(carts))
		for _, c := range carts {
			items = append(items, newCheckoutResponse(c))
		}
		respond(w, http.StatusOK, newList(items, page, limit, total))
		return nil
	}
}

// handleCheckoutSummary serves GET /stores/{store_id}/abandoned-checkouts/summary.
func (s *Server) handleCheckoutSummary() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		q := newQueryParser(r)
		from, to := q.dateTime("date_from"), q.dateTime("date_to")
		if from != nil && to != nil && from.After(*to) {
			q.Add("date_from", "out_of_range", "must not be after date_to")
		}
		if err := q.err(); err != nil {
			return err
		}
		sum, err := s.db.SummarizeCheckouts(r.Context(), storeIDFrom(r.Context()), from, to)
		if err != nil {
			return err
		}
		rate := 0.0
		if n := sum.Abandoned.Count + sum.Recovered.Count; n > 0 {
			rate = float64(sum.Recovered.Count) / float64(n)
		}
		tally := func(t storage.CheckoutTally) map[string]any {
			return map[string]any{"count": t.Count, "value": t.Value}
		}
		respond(w, http.StatusOK, map[string]any{
			"abandoned":     tally(sum.Abandoned),
			"recovered":     tally(sum.Recovered),
			"recovery_rate": rate,
			"payback":       map[string]any{"emails_sent": sum.EmailsSent, "recovered_after_email": tally(sum.RecoveredAfterEmail)},
		})
		return nil
	}
}

// handleGetCheckout serves GET /stores/{store_id}/abandoned-checkouts/{checkout_id}.
func (s *Server) handleGetCheckout() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		id, err := pathUUID(r, "checkout_id")
		if err != nil {
			return err
		}
		c, err := s.db.FindCart(r.Context(), storeIDFrom(r.Context()), id)
		if err != nil {
			return err
		}
		respond(w, http.StatusOK, newCheckoutResponse(c))
		return nil
	}
}

// handleMarkRecovered serves POST /stores/{store_id}/abandoned-checkouts/{checkout_id}/mark-recovered.
func (s *Server) handleMarkRecovered() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		id, err := pathUUID(r, "checkout_id")
		if err != nil {
			return err
		}
		var req request.MarkRecovered
		if r.ContentLength != 0 {
			if req, err = wire.Decode[request.MarkRecovered](r); err != nil {
				return err
			}
		}
		var orderID *uuid.UUID
		if req.OrderID != nil {
			id, _ := request.ParseUUID(*req.OrderID)
			orderID = &id
		}
		return writeView(s, w, r, http.StatusOK, newCheckoutResponse, func(tx *storage.Tx) (storage.Cart, error) {
			return tx.MarkCheckoutRecovered(r.Context(), storeIDFrom(r.Context()), id, orderID, req.Note)
		})
	}
}

// recoveryLink is where the email sends the buyer: the storefront's cart
// page with a key to the cart.
func (s *Server) recoveryLink(subdomain string, cartID uuid.UUID, token string) string {
	base := strings.ReplaceAll(s.cfg.StorefrontURL, "{subdomain}", subdomain)
	return fmt.Sprintf("%s/cart/%s?token=%s", strings.TrimRight(base, "/"), cartID, url.QueryEscape(token))
}

// handleSendRecoveryEmail serves POST
// /stores/{store_id}/abandoned-checkouts/{checkout_id}/send-recovery-email: it mails the cart's
// contact a link back to the cart (through the recovery-email workflow, over SMTP) and answers when it
// has gone out; recovery_email_sent_at is set each time.
func (s *Server) handleSendRecoveryEmail() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		id, err := pathUUID(r, "checkout_id")
		if err != nil {
			return err
		}
		storeID := storeIDFrom(r.Context())
		c, err := s.db.FindCart(r.Context(), storeID, id)
		if err != nil {
			return err
		}
		if c.CheckedOutAt != nil || c.Status == storage.CartRecovered {
			return errCheckoutCompleted
		}
		if c.Email == nil {
			return validationError([]wire.FieldError{{Field: "email", Code: "required",
				Message: "the checkout has no email address to send to", MessageAr: "لا يوجد بريد إلكتروني لهذه السلة"}})
		}
		store, err := s.db.FindStoreByID(r.Context(), storeID)
		if err != nil {
			return err
		}
		var token string
		if err := s.db.InTx(r.Context(), func(tx *storage.Tx) error {
			token, err = tx.IssueCartToken(r.Context(), storeID, id, "recovery")
			return err
		}); err != nil {
			return err
		}
		in := workflows.RecoveryEmailInput{StoreID: storeID, CartID: id, Link: s.recoveryLink(store.Subdomain, id, token)}
		work := workflows.Work{Kind: workflows.KindRecoveryEmail, StoreID: storeID, ResourceID: id,
			Summary: "recovery email for checkout " + id.String()[:8] + " · " + workflows.StoreLabel(store.Subdomain, storeID)}
		run, err := s.temporal.ExecuteWorkflow(r.Context(), work.StartOptions(workflows.RecoveryEmailWorkflowID(id, storage.NewID().String()), s.cfg.TaskQueue),
			workflows.RecoveryEmail, in)
		if err != nil {
			return fmt.Errorf("start recovery email: %w", err)
		}
		ctx, cancel := context.WithTimeout(r.Context(), s.cfg.ImageWait)
		defer cancel()
		var sent workflows.RecoveryEmailResult
		if err := run.Get(ctx, &sent); err != nil {
			s.log.WarnContext(r.Context(), "recovery email not sent", "checkout_id", id.String(), "error", err)
			return errRecoveryEmailFailed
		}
		respond(w, http.StatusOK, map[string]any{"checkout_id": id, "sent": true, "to": sent.To,
			"recovery_email_sent_at": sent.SentAt.UTC()})
		return nil
	}
}
