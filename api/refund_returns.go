package api

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/merchantsvc/svc/api/request"
	"github.com/merchantsvc/svc/api/wire"
	"github.com/merchantsvc/svc/storage"
)

// Returns (decisions §13's shape): so far opened by shipments returned to
// sender (decisions §12), listed, and received.

type returnLineResponse struct {
	LineID            uuid.UUID  `json:"line_id"`
	Quantity          int        `json:"quantity"`
	Reason            string     `json:"reason"`
	Note              *string    `json:"note"`
	ReceivedQuantity  int        `json:"received_quantity"`
	RestockedQuantity int        `json:"restocked_quantity"`
	LocationID        *uuid.UUID `json:"location_id"`
}

type returnResponse struct {
	ID              uuid.UUID            `json:"id"`
	OrderID         uuid.UUID            `json:"order_id"`
	ShipmentID      *uuid.UUID           `json:"shipment_id"`
	Status          string               `json:"status"`
	AllowedNext     []string             `json:"allowed_next"`
	Lines           []returnLineResponse `json:"lines"`
	TrackingNumber  *string              `json:"tracking_number"`
	SuggestedRefund int64                `json:"suggested_refund"`
	CreatedAt       time.Time            `json:"created_at"`
	UpdatedAt       time.Time            `json:"updated_at"`
}

func newReturnResponse(r storage.Return) returnResponse {
	resp := returnResponse{ID: r.ID, OrderID: r.OrderID, ShipmentID: r.ShipmentID, Status: string(r.Status),
		AllowedNext: request.AsStrings(storage.ReturnAllowedNext(r.Status)), Lines: make([]returnLineResponse, 0, len(r.Lines)),
		TrackingNumber: r.TrackingNumber, SuggestedRefund: r.SuggestedRefund, CreatedAt: r.CreatedAt.UTC(), UpdatedAt: r.UpdatedAt.UTC()}
	for _, l := range r.Lines {
		resp.Lines = append(resp.Lines, returnLineResponse(l))
	}
	return resp
}

// handleListReturns serves GET /stores/{store_id}/returns and, with
// byOrder, GET /stores/{store_id}/orders/{order_id}/returns.
func (s *Server) handleListReturns(byOrder bool) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		storeID := storeIDFrom(r.Context())
		q := newQueryParser(r)
		page, limit := q.page(20)
		f := storage.ReturnFilter{Page: storage.Page{Page: page, Limit: limit}, OrderID: q.uuid("order_id")}
		if status := q.enum("status", request.AsStrings(storage.ReturnStatuses), ""); status != "" {
			f.Status = new(storage.ReturnStatus(status))
		}
		err := q.err()
		if err != nil {
			return err
		}
		if byOrder {
			if f.OrderID, err = s.pathOrder(r); err != nil {
				return err
			}
		}
		list, total, err := s.db.FindReturns(r.Context(), storeID, f)
		if err != nil {
			return err
		}
		items := make([]returnResponse, 0, len(list))
		for _, ret := range list {
			items = append(items, newReturnResponse(ret))
		}
		respond(w, http.StatusOK, newList(items, page, limit, total))
		return nil
	}
}

// handleGetReturn serves GET /stores/{store_id}/returns/{return_id}.
func (s *Server) handleGetReturn() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		id, err := pathUUID(r, "return_id")
		if err != nil {
			return err
		}
		ret, err := s.db.FindReturn(r.Context(), storeIDFrom(r.Context()), id)
		if err != nil {
			return err
		}
		respond(w, http.StatusOK, newReturnResponse(ret))
		return nil
	}
}

// handleReceiveReturn serves POST /stores/{store_id}/returns/{return_id}/receive.
func (s *Server) handleReceiveReturn() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		id, err := pathUUID(r, "return_id")
		if err != nil {
			return err
		}
		req, err := wire.Decode[request.ReceiveReturn](r)
		if err != nil {
			return err
		}
		lines := make([]storage.ReceivedLine, 0, len(req.Lines))
		for _, l := range req.Lines {
			lines = append(lines, storage.ReceivedLine{LineID: l.LineID, ReceivedQuantity: *l.ReceivedQuantity, Restock: *l.Restock, LocationID: l.LocationID})
		}
		return writeView(s, w, r, http.StatusOK, newReturnResponse, func(tx *storage.Tx) (storage.Return, error) {
			ret, err := tx.ReceiveReturn(r.Context(), storeIDFrom(r.Context()), id, lines, actor(principalFrom(r.Context())))
			if err != nil {
				return storage.Return{}, err
			}
			return tx.FindReturn(r.Context(), ret.StoreID, ret.ID)
		})
	}
}

// returnErrors maps the storage refusals of returns.
func returnErrors(err error) *apiError {
	var transition *storage.ReturnTransitionError
	if errors.Is(err, storage.ErrOrderNotReturnable) {
		return errOrderNotReturnable
	}
	if errors.As(err, &transition) {
		return &apiError{Status: http.StatusConflict, Code: "INVALID_RETURN_TRANSITION",
			Message:     fmt.Sprintf("A return cannot move from %s to %s", transition.From, transition.To),
			MessageAr:   fmt.Sprintf("لا يمكن نقل المرتجع من %s إلى %s", transition.From, transition.To),
			AllowedNext: request.AsStrings(transition.AllowedNext)}
	}
	return nil
}

var errOrderNotReturnable = newError(http.StatusConflict, "ORDER_NOT_RETURNABLE",
	"Only a shipped, delivered or returned order takes returns", "لا يقبل المرتجعات إلا طلب مشحون أو مُسلَّم أو مُرتجَع")

// handleRequestReturn serves POST /stores/{store_id}/orders/{order_id}/returns.
func (s *Server) handleRequestReturn() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		orderID, err := pathUUID(r, "order_id")
		if err != nil {
			return err
		}
		req, err := wire.Decode[request.RequestReturn](r)
		if err != nil {
			return err
		}
		lines := make([]storage.NewReturnLine, 0, len(req.Lines))
		for _, l := range req.Lines {
			lines = append(lines, storage.NewReturnLine{LineID: l.LineID, Quantity: l.Quantity, Reason: l.Reason, Note: l.Note})
		}
		return writeView(s, w, r, http.StatusCreated, newReturnResponse, func(tx *storage.Tx) (storage.Return, error) {
			return tx.RequestReturn(r.Context(), storeIDFrom(r.Context()), orderID, lines, req.Approve, actor(principalFrom(r.Context())))
		})
	}
}

// handleMoveReturn serves POST /stores/{store_id}/returns/{return_id}/approve,
// /decline (a reason required) and /cancel.
func (s *Server) handleMoveReturn(to storage.ReturnStatus) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		id, err := pathUUID(r, "return_id")
		if err != nil {
			return err
		}
		req, err := wire.Decode[request.MoveReturn](r)
		if err != nil {
			return err
		}
		if to != storage.ReturnApproved && req.TrackingNumber != nil {
			return validationError([]wire.FieldError{{Field: "tracking_number", Code: "invalid", Message: "is only taken by approve",
				MessageAr: wire.ArabicFieldMessage("invalid")}})
		}
		reason := ""
		if req.Reason != nil {
			reason = strings.TrimSpace(*req.Reason)
		}
		if to == storage.ReturnDeclined && reason == "" {
			return validationError([]wire.FieldError{{Field: "reason", Code: "required", Message: "is required to decline",
				MessageAr: wire.ArabicFieldMessage("required")}})
		}
		return writeView(s, w, r, http.StatusOK, newReturnResponse, func(tx *storage.Tx) (storage.Return, error) {
			return tx.MoveReturn(r.Context(), storeIDFrom(r.Context()), id, to, req.TrackingNumber, reason, actor(principalFrom(r.Context())))
		})
	}
}
