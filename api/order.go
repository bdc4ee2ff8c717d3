package api

import (
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"time"
	"unicode/utf8"

	"github.com/go-chi/chi/v5"
	"github.com/google/uuid"

	"github.com/merchantsvc/svc/api/request"
	"github.com/merchantsvc/svc/api/wire"
	"github.com/merchantsvc/svc/storage"
)

type orderLineResponse struct {
	ID               uuid.UUID  `json:"id"`
	VariantID        *uuid.UUID `json:"variant_id"`
	ProductID        *uuid.UUID `json:"product_id"`
	Name             string     `json:"name"`
	SKU              *string    `json:"sku"`
	Quantity         int        `json:"quantity"`
	UnitPrice        int64      `json:"unit_price"`
	Total            int64      `json:"total"`
	ReturnedQuantity int        `json:"returned_quantity"`
	Discount         int64      `json:"discount"`
	// Recipient is, on a gift card line, whom its cards are sent to.
	Recipient *storage.GiftCardRecipient `json:"recipient"`
}

type orderResponse struct {
	ID                uuid.UUID           `json:"id"`
	OrderNumber       string              `json:"order_number"`
	Status            string              `json:"status"`
	PaymentStatus     string              `json:"payment_status"`
	FulfillmentStatus string              `json:"fulfillment_status"`
	PaymentMethod     string              `json:"payment_method"`
	Currency          string              `json:"currency"`
	Subtotal          int64               `json:"subtotal"`
	ShippingFee       int64               `json:"shipping_fee"`
	Discount          int64               `json:"discount"`
	Total             int64               `json:"total"`
	PaidTotal         int64               `json:"paid_total"`
	BalanceDue        int64               `json:"balance_due"`
	CollectibleTotal  int64               `json:"collectible_total"`
	CollectedTotal    int64               `json:"collected_total"`
	RefundDue         int64               `json:"refund_due"`
	CustomerID        *uuid.UUID          `json:"customer_id"`
	Customer          orderCustomer       `json:"customer"`
	ShippingAddress   json.RawMessage     `json:"shipping_address"`
	TrackingNumber    *string             `json:"tracking_number"`
	Notes             string              `json:"notes"`
	CancelReason      *string             `json:"cancel_reason"`
	Lines             []orderLineResponse `json:"lines,omitempty"`
	// Payments is the order's ledger, on GET of one order only.
	Payments *[]orderPaymentResponse `json:"payments,omitempty"`
	// Discounts come with the lines (a full order, not a list's summary).
	Discounts     *[]storage.AppliedDiscount `json:"discounts,omitempty"`
	ShippingLines *[]storage.ShippingLine    `json:"shipping_lines,omitempty"`
	CreatedAt     time.Time                  `json:"created_at"`
	UpdatedAt     time.Time                  `json:"updated_at"`
	// PlacedAt is when the order counts in analytics: its creation, or a
	// draft's conversion; null for a draft.
	PlacedAt *time.Time `json:"placed_at"`
}

func newOrderResponse(o storage.Order) orderResponse {
	resp := orderResponse{ID: o.ID, OrderNumber: o.OrderNumber, Status: string(o.Status), PaymentStatus: string(o.PaymentStatus),
		FulfillmentStatus: string(o.FulfillmentStatus), PaymentMethod: o.PaymentMethod, Currency: o.Currency, Subtotal: o.Subtotal,
		ShippingFee: o.ShippingFee, Discount: o.Discount, Total: o.Total, PaidTotal: o.PaidTotal, BalanceDue: o.BalanceDue(),
		CollectibleTotal: o.CollectibleTotal, CollectedTotal: o.CollectedTotal, RefundDue: o.RefundDue, CustomerID: o.CustomerID,
		Customer: orderCustomer{ID: o.Customer.ID, Name: o.Customer.Name, Email: o.Customer.Email, Phone: o.Customer.Phone}, ShippingAddress: o.ShippingAddress, TrackingNumber: o.TrackingNumber, Notes: o.Notes,
		CancelReason: o.CancelReason, CreatedAt: o.CreatedAt.UTC(), UpdatedAt: o.UpdatedAt.UTC(), PlacedAt: utcPtr(o.PlacedAt)}
	resp.Lines = newOrderLineResponses(o.Lines)
	if o.Lines != nil {
		discounts := o.Discounts
		if discounts == nil {
			discounts = []storage.AppliedDiscount{}
		}
		resp.Discounts = &discounts
		shipping := o.ShippingLines
		if shipping == nil {
			shipping = []storage.ShippingLine{}
		}
		resp.ShippingLines = &shipping
	}
	return resp
}

func newOrderLineResponses(lines []storage.OrderLine) []orderLineResponse {
	var out []orderLineResponse
	for _, l := range lines {
		out = append(out, orderLineResponse{ID: l.ID, VariantID: l.VariantID, ProductID: l.ProductID, Name: l.Name,
			SKU: l.SKU, Quantity: l.Quantity, UnitPrice: l.UnitPrice, Total: l.Total, ReturnedQuantity: l.ReturnedQuantity, Discount: l.Discount,
			Recipient: l.GiftCardRecipient})
	}
	return out
}

// orderCustomer is the customer snapshot kept on an order.
type orderCustomer struct {
	ID    uuid.UUID `json:"id"`
	Name  string    `json:"name"`
	Email *string   `json:"email"`
	Phone *string   `json:"phone"`
}

// actor is the merchant behind the request, for activity rows.
func actor(p *principal) *uuid.UUID {
	if p.userID == uuid.Nil {
		return nil
	}
	id := p.userID
	return &id
}

// stockActor is who the inventory ledger names for a request's stock
// changes: the app behind an app token, else the merchant user.
func stockActor(p *principal) storage.Actor {
	switch {
	case p == nil:
		return storage.Actor{Type: "system"}
	case p.token != nil && p.token.AppID != nil:
		return storage.Actor{Type: "app", ID: p.token.AppID}
	default:
		return storage.UserActor(actor(p))
	}
}

// handleCreateOrder serves POST /stores/{store_id}/orders and POST /stores/{store_id}/orders/drafts.
func (s *Server) handleCreateOrder(draft bool) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		req, err := wire.Decode[request.CreateOrder](r)
		if err != nil {
			return err
		}
		in := req.NewOrder(storeIDFrom(r.Context()), draft, actor(principalFrom(r.Context())))
		if len(req.GiftCardCodes) > 0 {
			if in.GiftCardIDs, err = s.giftCardIDs(r, in.StoreID, req.GiftCardCodes, false, ""); err != nil {
				return err
			}
		}
		// The worker's dispatcher starts the order-placed workflow after commit.
		return writeView(s, w, r, http.StatusCreated, newOrderResponse, func(tx *storage.Tx) (storage.Order, error) {
			return tx.CreateOrder(r.Context(), in)
		})
	}
}

// errPreviewOnly rolls a preview's transaction back.
var errPreviewOnly = errors.New("preview: nothing is written")

type orderPreviewResponse struct {
	Currency    string                    `json:"currency"`
	Subtotal    int64                     `json:"subtotal"`
	ShippingFee int64                     `json:"shipping_fee"`
	Discount    int64                     `json:"discount"`
	Total       int64                     `json:"total"`
	Lines       []orderLineResponse       `json:"lines"`
	Discounts   []storage.AppliedDiscount `json:"discounts"`
}

// handlePreviewOrder serves POST /stores/{store_id}/orders/preview: the
// order priced exactly as placing it would (the same routine, in a
// transaction rolled back), with nothing written.
func (s *Server) handlePreviewOrder() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		req, err := wire.Decode[request.CreateOrder](r)
		if err != nil {
			return err
		}
		in := req.NewOrder(storeIDFrom(r.Context()), false, actor(principalFrom(r.Context())))
		if len(req.GiftCardCodes) > 0 {
			if in.GiftCardIDs, err = s.giftCardIDs(r, in.StoreID, req.GiftCardCodes, false, ""); err != nil {
				return err
			}
		}
		var o storage.Order
		err = s.db.InTx(r.Context(), func(tx *storage.Tx) error {
			var err error
			if o, err = tx.CreateOrder(r.Context(), in); err != nil {
				return err
			}
			return errPreviewOnly
		})
		if !errors.Is(err, errPreviewOnly) {
			return err
		}
		lines := newOrderLineResponses(o.Lines)
		for i := range lines {
			lines[i].ID = uuid.Nil
		}
		respond(w, http.StatusOK, orderPreviewResponse{Currency: o.Currency, Subtotal: o.Subtotal, ShippingFee: o.ShippingFee,
			Discount: o.Discount, Total: o.Total, Lines: lines, Discounts: o.Discounts})
		return nil
	}
}

// orderFilter reads the list and count filters of spec §4.3.
func orderFilter(q *queryParser) storage.OrderFilter {
	f := storage.OrderFilter{Search: q.str("search"), CustomerID: q.uuid("customer_id")}
	f.DateFrom, f.DateTo = q.dateTime("date_from"), q.dateTime("date_to")
	if f.DateFrom != nil && f.DateTo != nil && f.DateFrom.After(*f.DateTo) {
		q.Add("date_from", "out_of_range", "must not be after date_to")
	}
	return f
}

// handleListOrders serves GET /stores/{store_id}/orders.
func (s *Server) handleListOrders() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		q := newQueryParser(r)
		page, limit := q.page(20)
		f := orderFilter(q)
		f.Page = storage.Page{Page: page, Limit: limit}
		listed := slices.DeleteFunc(slices.Clone(storage.OrderStatuses), func(s storage.OrderStatus) bool { return s == storage.OrderDraft })
		if v := q.str("status"); v != nil {
			q.OneOf("status", *v, request.AsStrings(listed))
			f.Status = (*storage.OrderStatus)(v)
		}
		if v := q.str("payment_status"); v != nil {
			q.OneOf("payment_status", *v, request.AsStrings(storage.PaymentStatuses))
			f.PaymentStatus = (*storage.PaymentStatus)(v)
		}
		if v := q.str("fulfillment_status"); v != nil {
			q.OneOf("fulfillment_status", *v, request.AsStrings(storage.FulfillmentStatuses))
			f.FulfillmentStatus = (*storage.FulfillmentStatus)(v)
		}
		if err := q.err(); err != nil {
			return err
		}
		orders, total, err := s.db.FindOrders(r.Context(), storeIDFrom(r.Context()), f)
		if err != nil {
			return err
		}
		items := make([]orderResponse, 0, len(orders))
		for _, o := range orders {
			items = append(items, newOrderResponse(o))
		}
		respond(w, http.StatusOK, newList(items, page, limit, total))
		return nil
	}
}

// handleOrderCounts serves GET /stores/{store_id}/orders/counts.
func (s *Server) handleOrderCounts() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		q := newQueryParser(r)
		f := orderFilter(q)
		if err := q.err(); err != nil {
			return err
		}
		counts, total, err := s.db.CountOrders(r.Context(), storeIDFrom(r.Context()), f)
		if err != nil {
			return err
		}
		respond(w, http.StatusOK, map[string]any{"counts": counts, "total": total})
		return nil
	}
}

const maxOrderRef = 64

// handleGetOrder serves GET /stores/{store_id}/orders/{order_id}, where the id may also be the order number.
func (s *Server) handleGetOrder() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		ref := chi.URLParam(r, "order_id") // an id or an order number
		if utf8.RuneCountInString(ref) > maxOrderRef || ref == "" {
			return validationError([]wire.FieldError{{Field: "order_ref", Code: "too_long",
				Message: "must be an order id or an order number of at most 64 characters", MessageAr: wire.ArabicFieldMessage("too_long")}})
		}
		o, err := s.db.FindOrderByRef(r.Context(), storeIDFrom(r.Context()), ref)
		if err != nil {
			return err
		}
		payments, err := s.db.FindOrderPayments(r.Context(), o.StoreID, o.ID)
		if err != nil {
			return err
		}
		answer := newOrderResponse(o)
		ledger := make([]orderPaymentResponse, 0, len(payments))
		answer.Payments = &ledger
		for _, p := range payments {
			payment := orderPaymentResponse{ID: p.ID, Source: p.Source, Provider: p.Provider, Reference: p.Reference,
				Amount: p.Amount, Status: p.Status, CreatedAt: p.CreatedAt.UTC()}
			if p.GiftCardID != nil {
				payment.GiftCard = &orderPaymentGiftCard{ID: *p.GiftCardID}
				if p.GiftCardLast4 != nil {
					payment.GiftCard.Last4 = *p.GiftCardLast4
				}
			}
			ledger = append(ledger, payment)
		}
		respond(w, http.StatusOK, answer)
		return nil
	}
}

// orderPaymentResponse is one amount credited to the order: by hand
// (mark_paid, recorded, proof, partial_acceptance), by the courier (cod),
// by the card gateway (gateway, with provider and the gateway's reference)
// or by a gift card (gift_card, with the card's id and last4).
type orderPaymentResponse struct {
	ID        uuid.UUID `json:"id"`
	Source    string    `json:"source"`
	Provider  *string   `json:"provider"`
	Reference *string   `json:"reference"`
	Amount    int64     `json:"amount"`
	Status    string    `json:"status"`
	CreatedAt time.Time `json:"created_at"`
	// GiftCard names the card of a gift_card payment (§19), else null.
	GiftCard *orderPaymentGiftCard `json:"gift_card"`
}

type orderPaymentGiftCard struct {
	ID    uuid.UUID `json:"id"`
	Last4 string    `json:"last4"`
}

// handleUpdateOrderStatus serves PATCH /stores/{store_id}/orders/{order_id}/status.
func (s *Server) handleUpdateOrderStatus() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		id, err := pathUUID(r, "order_id")
		if err != nil {
			return err
		}
		req, err := wire.Decode[request.UpdateStatus](r)
		if err != nil {
			return err
		}
		var moved storage.Order
		err = writeView(s, w, r, http.StatusOK, newOrderResponse, func(tx *storage.Tx) (storage.Order, error) {
			moved, err = tx.TransitionOrder(r.Context(), storeIDFrom(r.Context()), id, storage.OrderStatus(req.Status), req.TrackingNumber, req.Note,
				actor(principalFrom(r.Context())))
			return moved, err
		})
		if err == nil {
			s.closeCardPayment(r.Context(), moved)
		}
		return err
	}
}

// handleCancelOrder serves DELETE /stores/{store_id}/orders/{order_id}.
func (s *Server) handleCancelOrder() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		id, err := pathUUID(r, "order_id")
		if err != nil {
			return err
		}
		reason := r.URL.Query().Get("reason")
		if utf8.RuneCountInString(reason) > 1000 {
			return validationError([]wire.FieldError{{Field: "reason", Code: "too_long", Message: "must be at most 1000 characters",
				MessageAr: wire.ArabicFieldMessage("too_long")}})
		}
		var cancelled storage.Order
		err = s.writeTx(w, r, http.StatusNoContent, func(tx *storage.Tx) (any, error) {
			cancelled, err = tx.CancelOrder(r.Context(), storeIDFrom(r.Context()), id, reason, actor(principalFrom(r.Context())))
			return nil, err
		})
		if err == nil {
			s.closeCardPayment(r.Context(), cancelled)
		}
		return err
	}
}

type activityResponse struct {
	ID           uuid.UUID       `json:"id"`
	Kind         string          `json:"kind"`
	Body         string          `json:"body"`
	Data         json.RawMessage `json:"data"`
	AuthorUserID *uuid.UUID      `json:"author_user_id"`
	CreatedAt    time.Time       `json:"created_at"`
}

func newActivityResponse(a storage.OrderActivity) activityResponse {
	return activityResponse{ID: a.ID, Kind: string(a.Kind), Body: a.Body, Data: a.Data, AuthorUserID: a.AuthorUserID, CreatedAt: a.CreatedAt.UTC()}
}

// handleAddComment serves POST /stores/{store_id}/orders/{order_id}/comments.
func (s *Server) handleAddComment() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		id, err := pathUUID(r, "order_id")
		if err != nil {
			return err
		}
		req, err := wire.Decode[request.Comment](r)
		if err != nil {
			return err
		}
		return writeView(s, w, r, http.StatusCreated, newActivityResponse, func(tx *storage.Tx) (storage.OrderActivity, error) {
			return tx.AddOrderComment(r.Context(), storeIDFrom(r.Context()), id, req.Body, actor(principalFrom(r.Context())))
		})
	}
}

// timelineKinds are the activities the timeline lists: creation, status
// changes, and the steps decisions §12 and §13 put on it (shipments,
// waybills, COD remittances, returns, refunds), each with its actor.
var timelineKinds = []storage.ActivityKind{storage.ActivityOrderCreated, storage.ActivityDraftCreated, storage.ActivityStatusChanged,
	storage.ActivityShipmentCreated, storage.ActivityShipmentUpdated, storage.ActivityShipmentStatus, storage.ActivityShipmentCancelled,
	storage.ActivityWaybillRequested, storage.ActivityCODRemitted,
	storage.ActivityReturnRequested, storage.ActivityReturnApproved, storage.ActivityReturnDeclined, storage.ActivityReturnCancelled,
	storage.ActivityReturnReceived, storage.ActivityRefundCreated, storage.ActivityRefundSucceeded, storage.ActivityRefundFailed}

// handleActivities serves GET /stores/{store_id}/orders/{order_id}/timeline and GET
// /stores/{store_id}/orders/{order_id}/activities: it lists staff comments (not to an app token) and
// system events, newest first (spec: page ≥ 1, limit 1-100 default 50); timeline lists status changes oldest first.
func (s *Server) handleActivities(timeline bool) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		id, err := pathUUID(r, "order_id")
		if err != nil {
			return err
		}
		q := newQueryParser(r)
		page, limit := q.page(50)
		if timeline {
			page, limit = 1, 1000
		}
		if err := q.err(); err != nil {
			return err
		}
		storeID := storeIDFrom(r.Context())
		if _, err := s.db.FindOrderByRef(r.Context(), storeID, id.String()); err != nil {
			return err
		}
		// A partner app reads no staff comment (spec §2.5); a member's session
		// and personal token are the staff's.
		filter := storage.ActivityFilter{WithoutStaffOnly: principalFrom(r.Context()).kind == string(storage.TokenApp)}
		if timeline {
			filter.Kinds = timelineKinds
		}
		list, total, err := s.db.FindOrderActivities(r.Context(), storeID, id, filter, storage.Page{Page: page, Limit: limit}, timeline)
		if err != nil {
			return err
		}
		items := make([]activityResponse, 0, len(list))
		for _, a := range list {
			items = append(items, newActivityResponse(a))
		}
		if timeline {
			respond(w, http.StatusOK, items)
			return nil
		}
		respond(w, http.StatusOK, newList(items, page, limit, total))
		return nil
	}
}

var errOrderShipped = newError(http.StatusConflict, "ORDER_SHIPPED",
	"The shipping address cannot change once the order has shipped", "لا يمكن تغيير عنوان الشحن بعد شحن الطلب")

// handleUpdateOrder serves PATCH /stores/{store_id}/orders/{order_id}.
func (s *Server) handleUpdateOrder() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		id, err := pathUUID(r, "order_id")
		if err != nil {
			return err
		}
		req, err := wire.Decode[request.UpdateOrder](r)
		if err != nil {
			return err
		}
		upd := storage.OrderUpdate{TrackingNumber: storage.Field[string](req.TrackingNumber)}
		if req.Notes.Set {
			upd.Notes = &req.Notes.Value
		}
		if req.ShippingAddress.Set {
			addr := req.ShippingAddress.Value
			addr.Phone = request.NormalizePhone(addr.Phone)
			upd.ShippingAddress, _ = json.Marshal(addr)
		}
		return writeView(s, w, r, http.StatusOK, newOrderResponse, func(tx *storage.Tx) (storage.Order, error) {
			return tx.UpdateOrder(r.Context(), storeIDFrom(r.Context()), id, upd, actor(principalFrom(r.Context())))
		})
	}
}

type bulkFailure struct {
	OrderID   string `json:"order_id"`
	Code      string `json:"code"`
	Message   string `json:"message"`
	MessageAr string `json:"message_ar"`
}

// handleBulkStatus serves POST /stores/{store_id}/orders/bulk-status: it moves each order in its own
// transaction, so one refusal does not hold back the rest; the answer says what happened to each.
func (s *Server) handleBulkStatus() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		req, err := wire.Decode[request.BulkStatus](r)
		if err != nil {
			return err
		}
		storeID := storeIDFrom(r.Context())
		updated, failed := []string{}, []bulkFailure{}
		for _, raw := range dedupe(req.OrderIDs) {
			id, _ := request.ParseUUID(raw)
			var moved storage.Order
			err := s.db.InTx(r.Context(), func(tx *storage.Tx) (err error) {
				moved, err = tx.TransitionOrder(r.Context(), storeID, id, storage.OrderStatus(req.Status), req.TrackingNumber, "", actor(principalFrom(r.Context())))
				return err
			})
			if err != nil {
				e := toAPIError(err)
				if e.Status >= 500 {
					return err
				}
				failed = append(failed, bulkFailure{OrderID: raw, Code: e.Code, Message: e.Message, MessageAr: e.MessageAr})
				continue
			}
			s.closeCardPayment(r.Context(), moved)
			updated = append(updated, raw)
		}
		respond(w, http.StatusOK, map[string]any{"updated": updated, "failed": failed})
		return nil
	}
}
