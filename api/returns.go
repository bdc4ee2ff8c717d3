package api

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/google/uuid"

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
		AllowedNext: asStrings(storage.ReturnAllowedNext(r.Status)), Lines: make([]returnLineResponse, 0, len(r.Lines)),
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
		if status := q.enum("status", asStrings(storage.ReturnStatuses), ""); status != "" {
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

type receiveReturnRequest struct {
	Lines []struct {
		LineID           uuid.UUID  `json:"line_id"`
		ReceivedQuantity *int       `json:"received_quantity"`
		Restock          *bool      `json:"restock"`
		LocationID       *uuid.UUID `json:"location_id"`
	} `json:"lines"`
}

func (req receiveReturnRequest) Valid() []fieldError {
	var c checker
	if len(req.Lines) == 0 || len(req.Lines) > 100 {
		c.add("lines", "out_of_range", "must list 1 to 100 lines")
	}
	for i, l := range req.Lines {
		if l.LineID == uuid.Nil {
			c.add(fmt.Sprintf("lines[%d].line_id", i), "required", "is required")
		}
		if l.ReceivedQuantity == nil {
			c.add(fmt.Sprintf("lines[%d].received_quantity", i), "required", "is required")
		}
		if l.Restock == nil {
			c.add(fmt.Sprintf("lines[%d].restock", i), "required", "say whether the pieces go back on the shelf")
		}
	}
	return c.result()
}

// handleReceiveReturn serves POST /stores/{store_id}/returns/{return_id}/receive.
func (s *Server) handleReceiveReturn() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		id, err := pathUUID(r, "return_id")
		if err != nil {
			return err
		}
		req, err := decode[receiveReturnRequest](r)
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
			AllowedNext: asStrings(transition.AllowedNext)}
	}
	return nil
}

var errOrderNotReturnable = newError(http.StatusConflict, "ORDER_NOT_RETURNABLE",
	"Only a shipped, delivered or returned order takes returns", "لا يقبل المرتجعات إلا طلب مشحون أو مُسلَّم أو مُرتجَع")

type requestReturnRequest struct {
	Lines []struct {
		LineID   uuid.UUID `json:"line_id"`
		Quantity int       `json:"quantity"`
		Reason   string    `json:"reason"`
		Note     *string   `json:"note"`
	} `json:"lines"`
	Approve bool `json:"approve"`
}

func (req requestReturnRequest) Valid() []fieldError {
	var c checker
	if len(req.Lines) == 0 || len(req.Lines) > 100 {
		c.add("lines", "out_of_range", "must list 1 to 100 lines")
	}
	for i, l := range req.Lines {
		if l.LineID == uuid.Nil {
			c.add(fmt.Sprintf("lines[%d].line_id", i), "required", "is required")
		}
		if l.Quantity < 1 {
			c.add(fmt.Sprintf("lines[%d].quantity", i), "exceeds_returnable", "must be at least 1")
		}
		// refused_delivery is the system's: a shipment returned to sender.
		c.oneOf(fmt.Sprintf("lines[%d].reason", i), l.Reason, without(storage.ReturnReasons, storage.ReasonRefusedDelivery))
		if l.Note != nil {
			c.text(fmt.Sprintf("lines[%d].note", i), *l.Note, 0, 1000)
		}
		if l.Reason == "other" && (l.Note == nil || strings.TrimSpace(*l.Note) == "") {
			c.add(fmt.Sprintf("lines[%d].note", i), "required", "is required when the reason is other")
		}
	}
	return c.result()
}

func without(list []string, drop string) []string {
	out := make([]string, 0, len(list))
	for _, v := range list {
		if v != drop {
			out = append(out, v)
		}
	}
	return out
}

// handleRequestReturn serves POST /stores/{store_id}/orders/{order_id}/returns.
func (s *Server) handleRequestReturn() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		orderID, err := pathUUID(r, "order_id")
		if err != nil {
			return err
		}
		req, err := decode[requestReturnRequest](r)
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

type moveReturnRequest struct {
	TrackingNumber *string `json:"tracking_number"`
	Reason         *string `json:"reason"`
}

func (req moveReturnRequest) Valid() []fieldError {
	var c checker
	if req.TrackingNumber != nil {
		c.text("tracking_number", *req.TrackingNumber, 1, 100)
	}
	if req.Reason != nil {
		c.text("reason", *req.Reason, 0, 1000)
	}
	return c.result()
}

// handleMoveReturn serves POST /stores/{store_id}/returns/{return_id}/approve,
// /decline (a reason required) and /cancel.
func (s *Server) handleMoveReturn(to storage.ReturnStatus) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		id, err := pathUUID(r, "return_id")
		if err != nil {
			return err
		}
		req, err := decode[moveReturnRequest](r)
		if err != nil {
			return err
		}
		if to != storage.ReturnApproved && req.TrackingNumber != nil {
			return validationError([]fieldError{{Field: "tracking_number", Code: "invalid", Message: "is only taken by approve",
				MessageAr: arabicFieldMessage("invalid")}})
		}
		reason := ""
		if req.Reason != nil {
			reason = strings.TrimSpace(*req.Reason)
		}
		if to == storage.ReturnDeclined && reason == "" {
			return validationError([]fieldError{{Field: "reason", Code: "required", Message: "is required to decline",
				MessageAr: arabicFieldMessage("required")}})
		}
		return writeView(s, w, r, http.StatusOK, newReturnResponse, func(tx *storage.Tx) (storage.Return, error) {
			return tx.MoveReturn(r.Context(), storeIDFrom(r.Context()), id, to, req.TrackingNumber, reason, actor(principalFrom(r.Context())))
		})
	}
}
