package api

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/google/uuid"

	"github.com/merchantsvc/svc/api/request"
	"github.com/merchantsvc/svc/api/wire"
	"github.com/merchantsvc/svc/storage"
)

// Payment refusals (decisions §1 and §4), English and Arabic.
var (
	errOrderAlreadyPaid = newError(http.StatusConflict, "ORDER_ALREADY_PAID",
		"The order is already paid", "الطلب مدفوع بالفعل")
	errOrderNotPaid = newError(http.StatusConflict, "ORDER_NOT_PAID",
		"The order is not paid", "الطلب غير مدفوع")
	errPaymentNotReversible = newError(http.StatusConflict, "PAYMENT_NOT_REVERSIBLE",
		"The payment cannot be undone: a gateway transaction succeeded or a refund succeeded",
		"لا يمكن التراجع عن الدفع: توجد عملية دفع ناجحة عبر بوابة الدفع أو استرداد ناجح")
	errRefundPending = newError(http.StatusConflict, "REFUND_PENDING",
		"A refund of this order is pending; settle it before undoing the payment",
		"يوجد استرداد معلّق لهذا الطلب؛ أنهِه قبل التراجع عن الدفع")
	errProofAlreadyReviewed = newError(http.StatusConflict, "PROOF_ALREADY_REVIEWED",
		"Only a payment proof awaiting review can be approved or rejected", "يمكن قبول أو رفض إثبات الدفع فقط وهو بانتظار المراجعة")
	errPaymentNotVoidable = newError(http.StatusConflict, "PAYMENT_NOT_VOIDABLE",
		"Only a recorded payment or an approved proof can be voided", "يمكن إلغاء الدفعة المسجّلة أو الإثبات المقبول فقط")
	errProofsNotAccepted = newError(http.StatusConflict, "PROOFS_NOT_ACCEPTED",
		"This order's payment method takes no payment proofs", "طريقة الدفع لهذا الطلب لا تقبل إثباتات الدفع")
	errOrderClosedForPayment = newError(http.StatusConflict, "ORDER_CLOSED",
		"A draft or cancelled order takes no payments", "الطلب المسودة أو الملغى لا يقبل مدفوعات")
)

type proofResponse struct {
	ID                 uuid.UUID  `json:"id"`
	OrderID            uuid.UUID  `json:"order_id"`
	Kind               string     `json:"kind"`
	Status             string     `json:"status"`
	Amount             *int64     `json:"amount"`
	PerceptualHash     *string    `json:"perceptual_hash"`
	DuplicateSuspected bool       `json:"duplicate_suspected"`
	DuplicateOf        *uuid.UUID `json:"duplicate_of"`
	Reason             *string    `json:"reason"`
	ReviewedAt         *time.Time `json:"reviewed_at"`
	ImageURL           string     `json:"image_url"`
	Distance           *int       `json:"distance"` // set by the similar search, null elsewhere
	CreatedAt          time.Time  `json:"created_at"`
	UpdatedAt          time.Time  `json:"updated_at"`
}

func (s *Server) newProofResponse(p storage.PaymentProof) proofResponse {
	resp := proofResponse{ID: p.ID, OrderID: p.OrderID, Kind: string(p.Kind), Status: string(p.Status), Amount: p.Amount,
		DuplicateSuspected: p.DuplicateSuspected, DuplicateOf: p.DuplicateOf, Reason: p.Reason,
		ImageURL:  fmt.Sprintf("%s/api/v1/stores/%s/payment-proofs/%s/image", s.cfg.BaseURL, p.StoreID, p.ID),
		CreatedAt: p.CreatedAt.UTC(), UpdatedAt: p.UpdatedAt.UTC()}
	if p.PerceptualHash != nil {
		// Hex: a 64-bit value does not survive JSON numbers in every client.
		h := fmt.Sprintf("%016x", *p.PerceptualHash)
		resp.PerceptualHash = &h
	}
	if p.ReviewedAt != nil {
		at := p.ReviewedAt.UTC()
		resp.ReviewedAt = &at
	}
	return resp
}

// paymentResult is the answer of a recorded payment and of a void.
type paymentResult struct {
	Proof proofResponse `json:"proof"`
	Order orderResponse `json:"order"`
}

// handleListProofs serves GET /stores/{store_id}/orders/{order_id}/payment-proofs.
func (s *Server) handleListProofs() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		orderID, err := pathUUID(r, "order_id")
		if err != nil {
			return err
		}
		proofs, err := s.db.FindPaymentProofs(r.Context(), storeIDFrom(r.Context()), orderID)
		if err != nil {
			return err
		}
		items := make([]proofResponse, 0, len(proofs))
		for _, p := range proofs {
			items = append(items, s.newProofResponse(p))
		}
		respond(w, http.StatusOK, items)
		return nil
	}
}

// handleProofImage serves GET /stores/{store_id}/payment-proofs/{proof_id}/image: it streams a proof's
// image after checking the proof is the store's, with a short private cache.
func (s *Server) handleProofImage() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		proofID, err := pathUUID(r, "proof_id")
		if err != nil {
			return err
		}
		p, err := s.db.FindPaymentProof(r.Context(), storeIDFrom(r.Context()), proofID)
		if err != nil {
			return err
		}
		body, size, err := s.blob.Open(r.Context(), p.ImageKey)
		if err != nil {
			return err
		}
		defer body.Close()
		w.Header().Set("Content-Type", p.ContentType)
		w.Header().Set("Content-Length", strconv.FormatInt(size, 10))
		w.Header().Set("Content-Disposition", "inline")
		w.Header().Set("Cache-Control", "private, max-age=60")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.WriteHeader(http.StatusOK)
		_, _ = io.Copy(w, body)
		return nil
	}
}

// handleSimilarProofs serves GET /stores/{store_id}/payment-proofs/{proof_id}/similar.
func (s *Server) handleSimilarProofs() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		proofID, err := pathUUID(r, "proof_id")
		if err != nil {
			return err
		}
		similar, err := s.db.FindSimilarProofs(r.Context(), storeIDFrom(r.Context()), proofID)
		if err != nil {
			return err
		}
		items := make([]proofResponse, 0, len(similar))
		for _, p := range similar {
			resp := s.newProofResponse(p)
			resp.Distance = &p.Distance
			items = append(items, resp)
		}
		respond(w, http.StatusOK, items)
		return nil
	}
}

// handleApproveProof serves POST /stores/{store_id}/payment-proofs/{proof_id}/approve.
func (s *Server) handleApproveProof() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		proofID, err := pathUUID(r, "proof_id")
		if err != nil {
			return err
		}
		return writeView(s, w, r, http.StatusOK, s.newProofResponse, func(tx *storage.Tx) (storage.PaymentProof, error) {
			return tx.ApproveProof(r.Context(), storeIDFrom(r.Context()), proofID, actor(principalFrom(r.Context())))
		})
	}
}

// handleRejectProof serves POST /stores/{store_id}/payment-proofs/{proof_id}/reject.
func (s *Server) handleRejectProof() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		proofID, err := pathUUID(r, "proof_id")
		if err != nil {
			return err
		}
		req, err := wire.Decode[request.Reason](r)
		if err != nil {
			return err
		}
		return writeView(s, w, r, http.StatusOK, s.newProofResponse, func(tx *storage.Tx) (storage.PaymentProof, error) {
			return tx.RejectProof(r.Context(), storeIDFrom(r.Context()), proofID, strings.TrimSpace(req.Reason), actor(principalFrom(r.Context())))
		})
	}
}

// handleVoidPayment serves POST /stores/{store_id}/payments/{proof_id}/void.
func (s *Server) handleVoidPayment() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		proofID, err := pathUUID(r, "proof_id")
		if err != nil {
			return err
		}
		req, err := wire.Decode[request.Reason](r)
		if err != nil {
			return err
		}
		return s.writeTx(w, r, http.StatusOK, func(tx *storage.Tx) (any, error) {
			p, o, err := tx.VoidPayment(r.Context(), storeIDFrom(r.Context()), proofID, strings.TrimSpace(req.Reason), actor(principalFrom(r.Context())))
			if err != nil {
				return nil, err
			}
			return ok(paymentResult{Proof: s.newProofResponse(p), Order: newOrderResponse(o)}), nil
		})
	}
}

// handlePendingReview serves GET /stores/{store_id}/orders/pending-manual-review.
func (s *Server) handlePendingReview() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		q := newQueryParser(r)
		page, limit := q.page(20)
		if err := q.err(); err != nil {
			return err
		}
		orders, total, err := s.db.FindPendingReviewOrders(r.Context(), storeIDFrom(r.Context()), storage.Page{Page: page, Limit: limit})
		if err != nil {
			return err
		}
		respond(w, http.StatusOK, newList(views(orders, newOrderResponse), page, limit, total))
		return nil
	}
}

// storeImage checks an uploaded image and puts it in the object store under
// the proof's key.
func (s *Server) storeProofImage(ctx context.Context, storeID, proofID uuid.UUID, data []byte) (key, contentType string, err error) {
	contentType, err = checkImage(data)
	if err != nil {
		return "", "", err
	}
	key = storage.ProofImageKey(storeID, proofID)
	if err := s.blob.Put(ctx, key, data, contentType); err != nil {
		// Stored before the proof's row: nothing is left half done.
		loggerFrom(ctx).WarnContext(ctx, "store proof image", slog.Any("error", err))
		return "", "", errObjectStoreDown
	}
	return key, contentType, nil
}

// handleRecordPayment serves POST /stores/{store_id}/orders/{order_id}/payments: it records a receipt
// and the amount the merchant took (multipart `receipt` + `amount` in minor units).
func (s *Server) handleRecordPayment() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		orderID, err := pathUUID(r, "order_id")
		if err != nil {
			return err
		}
		up, err := wire.ReadUploadField(r, "receipt")
		if err != nil {
			return err
		}
		amount, err := strconv.ParseInt(strings.TrimSpace(up.Fields["amount"]), 10, 64)
		if err != nil || amount <= 0 || amount > storage.MaxAmount {
			return validationError([]wire.FieldError{{Field: "amount", Code: "out_of_range",
				Message: "must be a whole number of minor units from 1 to 1000000000000", MessageAr: wire.ArabicFieldMessage("out_of_range")}})
		}
		storeID, proofID := storeIDFrom(r.Context()), storage.NewID()
		key, contentType, err := s.storeProofImage(r.Context(), storeID, proofID, up.File)
		if err != nil {
			return err
		}
		in := storage.NewProof{ID: proofID, StoreID: storeID, OrderID: orderID, ImageKey: key, ContentType: contentType,
			Amount: amount, ActorUserID: actor(principalFrom(r.Context()))}
		err = s.writeTx(w, r, http.StatusCreated, func(tx *storage.Tx) (any, error) {
			p, o, err := tx.RecordPayment(r.Context(), in)
			if err != nil {
				return nil, err
			}
			return ok(paymentResult{Proof: s.newProofResponse(p), Order: newOrderResponse(o)}), nil
		})
		if err != nil {
			_ = s.blob.RemovePrefix(context.WithoutCancel(r.Context()), key)
		}
		return err
	}
}

// handleMarkPaid serves POST /stores/{store_id}/orders/{order_id}/mark-paid.
func (s *Server) handleMarkPaid() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		orderID, err := pathUUID(r, "order_id")
		if err != nil {
			return err
		}
		return writeView(s, w, r, http.StatusOK, newOrderResponse, func(tx *storage.Tx) (storage.Order, error) {
			return tx.MarkOrderPaid(r.Context(), storeIDFrom(r.Context()), orderID, actor(principalFrom(r.Context())))
		})
	}
}

// handleUnmarkPaid serves POST /stores/{store_id}/orders/{order_id}/unmark-paid.
func (s *Server) handleUnmarkPaid() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		orderID, err := pathUUID(r, "order_id")
		if err != nil {
			return err
		}
		req, err := wire.Decode[request.Reason](r)
		if err != nil {
			return err
		}
		return writeView(s, w, r, http.StatusOK, newOrderResponse, func(tx *storage.Tx) (storage.Order, error) {
			return tx.UnmarkOrderPaid(r.Context(), storeIDFrom(r.Context()), orderID, strings.TrimSpace(req.Reason), actor(principalFrom(r.Context())))
		})
	}
}

type restockResponse struct {
	VariantID uuid.UUID `json:"variant_id"`
	Quantity  int       `json:"quantity"`
}

type partialAcceptanceResponse struct {
	Order          orderResponse     `json:"order"`
	CollectedTotal int64             `json:"collected_total"`
	Restocked      []restockResponse `json:"restocked"`
	RefundDue      int64             `json:"refund_due"`
	AutoMarkedPaid bool              `json:"auto_marked_paid"`
}

// handlePartialAcceptance serves POST /stores/{store_id}/orders/{order_id}/partial-acceptance.
func (s *Server) handlePartialAcceptance() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		orderID, err := pathUUID(r, "order_id")
		if err != nil {
			return err
		}
		req, err := wire.Decode[request.PartialAcceptance](r)
		if err != nil {
			return err
		}
		lines := make([]storage.AcceptedLine, 0, len(req.Lines))
		for _, l := range req.Lines {
			id, _ := request.ParseUUID(l.LineID)
			lines = append(lines, storage.AcceptedLine{LineID: id, AcceptedQuantity: *l.AcceptedQuantity})
		}
		return s.writeTx(w, r, http.StatusOK, func(tx *storage.Tx) (any, error) {
			res, err := tx.AcceptPartially(r.Context(), storeIDFrom(r.Context()), orderID, lines, req.Note, actor(principalFrom(r.Context())))
			if err != nil {
				return nil, err
			}
			resp := partialAcceptanceResponse{Order: newOrderResponse(res.Order), CollectedTotal: res.CollectedTotal,
				Restocked: []restockResponse{}, RefundDue: res.RefundDue, AutoMarkedPaid: res.AutoMarkedPaid}
			for _, rs := range res.Restocked {
				resp.Restocked = append(resp.Restocked, restockResponse{VariantID: rs.VariantID, Quantity: rs.Quantity})
			}
			return ok(resp), nil
		})
	}
}

// handleStorefrontProof serves POST /storefront/{subdomain}/orders/{order_id}/payment-proofs: it takes
// a buyer's payment proof (multipart `file`) for an order, opened by the X-Order-Token handed out at
// checkout. A wrong store, order or token is the same 404, so nothing can be probed. The worker hashes
// the image afterwards.
func (s *Server) handleStorefrontProof() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		orderID, err := pathUUID(r, "order_id")
		if err != nil {
			return err
		}
		store, err := s.db.FindStoreBySubdomain(r.Context(), chi.URLParam(r, "subdomain"))
		if err != nil {
			return err
		}
		if err := s.checkOrderToken(r, store.ID, orderID); err != nil {
			return err
		}
		up, err := wire.ReadUpload(r)
		if err != nil {
			return err
		}
		proofID := storage.NewID()
		key, contentType, err := s.storeProofImage(r.Context(), store.ID, proofID, up.File)
		if err != nil {
			return err
		}
		var proof storage.PaymentProof
		err = s.db.InTx(r.Context(), func(tx *storage.Tx) error {
			proof, err = tx.CreatePaymentProof(r.Context(), storage.NewProof{ID: proofID, StoreID: store.ID, OrderID: orderID,
				ImageKey: key, ContentType: contentType})
			return err
		})
		if err != nil {
			_ = s.blob.RemovePrefix(context.WithoutCancel(r.Context()), key)
			return err
		}
		// The buyer sees the proof's state, not the merchant's review data.
		respond(w, http.StatusCreated, map[string]any{"id": proof.ID, "order_id": proof.OrderID, "status": proof.Status,
			"created_at": proof.CreatedAt.UTC()})
		return nil
	}
}
