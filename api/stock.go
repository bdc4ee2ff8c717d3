package api

import (
	"fmt"
	"net/http"
	"time"

	"github.com/google/uuid"

	"github.com/merchantsvc/svc/api/request"
	"github.com/merchantsvc/svc/api/wire"
	"github.com/merchantsvc/svc/storage"
)

// Inventory levels, adjustments and the movement ledger (decisions §11).

var errIdempotencyKeyRequired = newError(http.StatusPreconditionRequired, "IDEMPOTENCY_KEY_REQUIRED",
	"This operation needs an Idempotency-Key header so a retry cannot apply it twice",
	"تتطلب هذه العملية ترويسة Idempotency-Key حتى لا تُطبَّق مرتين عند إعادة المحاولة")

// requireIdempotencyKey refuses a write without an Idempotency-Key (the
// routes marked "idem." in the decisions).
func requireIdempotencyKey(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Values("Idempotency-Key") == nil {
			writeError(w, r, errIdempotencyKeyRequired)
			return
		}
		next.ServeHTTP(w, r)
	})
}

type levelResponse struct {
	VariantID  uuid.UUID `json:"variant_id"`
	ProductID  uuid.UUID `json:"product_id"`
	SKU        *string   `json:"sku"`
	LocationID uuid.UUID `json:"location_id"`
	OnHand     int       `json:"on_hand"`
	Reserved   int       `json:"reserved"`
	Available  int       `json:"available"`
	UpdatedAt  time.Time `json:"updated_at"`
}

func newLevelResponse(l storage.Level) levelResponse {
	return levelResponse{VariantID: l.VariantID, ProductID: l.ProductID, SKU: l.SKU, LocationID: l.LocationID, OnHand: l.OnHand,
		Reserved: l.Reserved, Available: l.Available(), UpdatedAt: l.UpdatedAt.UTC()}
}

type movementResponse struct {
	ID            uuid.UUID     `json:"id"`
	VariantID     uuid.UUID     `json:"variant_id"`
	LocationID    uuid.UUID     `json:"location_id"`
	Reason        string        `json:"reason"`
	OnHandDelta   int           `json:"on_hand_delta"`
	ReservedDelta int           `json:"reserved_delta"`
	OnHandAfter   int           `json:"on_hand_after"`
	ReservedAfter int           `json:"reserved_after"`
	OrderID       *uuid.UUID    `json:"order_id"`
	ShipmentID    *uuid.UUID    `json:"shipment_id"`
	ReturnID      *uuid.UUID    `json:"return_id"`
	AdjustmentID  *uuid.UUID    `json:"adjustment_id"`
	Note          string        `json:"note"`
	Actor         storage.Actor `json:"actor"`
	CreatedAt     time.Time     `json:"created_at"`
}

func newMovementResponse(m storage.Movement) movementResponse {
	return movementResponse{ID: m.ID, VariantID: m.VariantID, LocationID: m.LocationID, Reason: m.Reason, OnHandDelta: m.OnHandDelta,
		ReservedDelta: m.ReservedDelta, OnHandAfter: m.OnHandAfter, ReservedAfter: m.ReservedAfter, OrderID: m.OrderID,
		ShipmentID: m.ShipmentID, ReturnID: m.ReturnID, AdjustmentID: m.AdjustmentID, Note: m.Note, Actor: m.Actor,
		CreatedAt: m.CreatedAt.UTC()}
}

// handleListLevels serves GET /stores/{store_id}/inventory/levels.
func (s *Server) handleListLevels() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		q := newQueryParser(r)
		page, limit := q.page(50)
		f := storage.LevelFilter{ProductID: q.uuid("product_id"), LocationID: q.uuid("location_id"), SKU: q.str("sku"),
			Page: storage.Page{Page: page, Limit: limit}}
		if id := q.uuid("variant_id"); id != nil {
			f.VariantIDs = []uuid.UUID{*id}
		}
		if q.values.Has("available_lte") {
			n := q.intIn("available_lte", -1_000_000_000, 1_000_000_000, 0)
			f.AvailableLTE = &n
		}
		if err := q.err(); err != nil {
			return err
		}
		levels, total, err := s.db.FindLevels(r.Context(), storeIDFrom(r.Context()), f)
		if err != nil {
			return err
		}
		respond(w, http.StatusOK, newList(views(levels, newLevelResponse), page, limit, total))
		return nil
	}
}

// handleListMovements serves GET /stores/{store_id}/inventory/movements.
func (s *Server) handleListMovements() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		q := newQueryParser(r)
		page, limit := q.page(50)
		f := storage.MovementFilter{VariantID: q.uuid("variant_id"), LocationID: q.uuid("location_id"), OrderID: q.uuid("order_id"),
			ShipmentID: q.uuid("shipment_id"), ReturnID: q.uuid("return_id"), AdjustmentID: q.uuid("adjustment_id"), DateFrom: q.dateTime("date_from"), DateTo: q.dateTime("date_to"),
			Page: storage.Page{Page: page, Limit: limit}}
		if q.values.Has("reason") {
			reason := q.enum("reason", storage.MovementReasons, "")
			f.Reason = &reason
		}
		if f.DateFrom != nil && f.DateTo != nil && f.DateFrom.After(*f.DateTo) {
			q.Add("date_from", "out_of_range", "must not be after date_to")
		}
		if err := q.err(); err != nil {
			return err
		}
		movements, total, err := s.db.FindMovements(r.Context(), storeIDFrom(r.Context()), f)
		if err != nil {
			return err
		}
		respond(w, http.StatusOK, newList(views(movements, newMovementResponse), page, limit, total))
		return nil
	}
}

type adjustmentResponse struct {
	AdjustmentID uuid.UUID          `json:"adjustment_id"`
	Movements    []movementResponse `json:"movements"`
	Levels       []levelResponse    `json:"levels"`
}

// stockConflictError is the 409 of an adjustment change that does not fit the stock.
func stockConflictError(e *storage.StockConflictError) *apiError {
	field := fmt.Sprintf("changes[%d]", e.Index)
	if e.Code == "STOCK_CHANGED" {
		return &apiError{Status: http.StatusConflict, Code: e.Code,
			Message:   fmt.Sprintf("on_hand changed since it was counted: it is %d now; recount and send the new expected_on_hand", e.OnHand),
			MessageAr: fmt.Sprintf("تغيّر المخزون الفعلي منذ عدّه: هو الآن %d؛ أعد العدّ وأرسل القيمة المتوقعة الجديدة", e.OnHand),
			Fields: []wire.FieldError{{Field: field + ".expected_on_hand", Code: "stale", Message: fmt.Sprintf("on_hand is %d", e.OnHand),
				MessageAr: fmt.Sprintf("المخزون الفعلي %d", e.OnHand)}}}
	}
	return &apiError{Status: http.StatusConflict, Code: e.Code,
		Message:   fmt.Sprintf("on_hand cannot go below the %d units reserved for orders (on_hand is %d)", e.Reserved, e.OnHand),
		MessageAr: fmt.Sprintf("لا يمكن أن ينخفض المخزون الفعلي عن %d وحدة محجوزة للطلبات (المخزون الفعلي %d)", e.Reserved, e.OnHand),
		Fields: []wire.FieldError{{Field: field, Code: "below_reserved", Message: fmt.Sprintf("%d units are reserved", e.Reserved),
			MessageAr: fmt.Sprintf("%d وحدة محجوزة", e.Reserved)}}}
}

// handleAdjustInventory serves POST /stores/{store_id}/inventory/adjustments.
func (s *Server) handleAdjustInventory() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		req, err := wire.Decode[request.Adjustment](r)
		if err != nil {
			return err
		}
		in := storage.Adjustment{Reason: req.Reason, Reference: req.Reference, Actor: stockActor(principalFrom(r.Context()))}
		if req.Note != nil {
			in.Note = *req.Note
		}
		for _, ch := range req.Changes {
			change := storage.AdjustmentChange{VariantID: uuid.MustParse(ch.VariantID), Delta: ch.Delta, SetOnHand: ch.SetOnHand,
				ExpectedOnHand: ch.ExpectedOnHand}
			if ch.LocationID != nil {
				id := uuid.MustParse(*ch.LocationID)
				change.LocationID = &id
			}
			in.Changes = append(in.Changes, change)
		}
		return s.writeTx(w, r, http.StatusCreated, func(tx *storage.Tx) (any, error) {
			result, err := tx.Adjust(r.Context(), storeIDFrom(r.Context()), in)
			if err != nil {
				return nil, err
			}
			resp := adjustmentResponse{AdjustmentID: result.ID, Movements: []movementResponse{}, Levels: []levelResponse{}}
			for _, m := range result.Movements {
				resp.Movements = append(resp.Movements, newMovementResponse(m))
			}
			for _, l := range result.Levels {
				resp.Levels = append(resp.Levels, newLevelResponse(l))
			}
			return ok(resp), nil
		})
	}
}
