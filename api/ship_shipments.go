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

// Shipments (decisions §12).

var (
	errOrderNotShippable = newError(http.StatusConflict, "ORDER_NOT_SHIPPABLE",
		"A draft, cancelled, delivered or returned order cannot ship", "لا يمكن شحن طلب مسودة أو ملغى أو مُسلَّم أو مُرتجَع")
	errNothingToShip = newError(http.StatusConflict, "NOTHING_TO_SHIP",
		"Every piece of the order is already in a shipment", "كل قطع الطلب موجودة في شحنات بالفعل")
	errDuplicateTracking = newError(http.StatusConflict, "DUPLICATE_TRACKING_NUMBER",
		"Another shipment of this store has this tracking number", "رقم التتبع مستخدم في شحنة أخرى لهذا المتجر")
	errShipmentClosed = newError(http.StatusConflict, "SHIPMENT_CLOSED",
		"The shipment was delivered, returned or cancelled and cannot change", "الشحنة سُلِّمت أو أُرجعت أو أُلغيت ولا يمكن تعديلها")
	errUnshippedQuantity = newError(http.StatusConflict, "UNSHIPPED_QUANTITY",
		"Some pieces of the order left in shipments and some did not; ship or cancel the rest first",
		"بعض قطع الطلب شُحنت وبعضها لم يُشحن؛ اشحن الباقي أو ألغِه أولًا")
	errWaybillFailed = newError(http.StatusConflict, "WAYBILL_FAILED",
		"The waybill could not be rendered; ask for it again with POST …/waybill", "تعذّر إنشاء بوليصة الشحن؛ اطلبها مجددًا عبر POST …/waybill")
	errWaybillNotReady = &apiError{Status: http.StatusConflict, Code: "WAYBILL_NOT_READY",
		Message: "The waybill is still being rendered; retry after the time in Retry-After", MessageAr: "بوليصة الشحن قيد الإنشاء؛ أعد المحاولة بعد المدة المذكورة في Retry-After",
		Header: http.Header{"Retry-After": {"2"}}}
)

type shipmentEventResponse struct {
	Status     string    `json:"status"`
	OccurredAt time.Time `json:"occurred_at"`
	Source     string    `json:"source"`
	Note       *string   `json:"note"`
}

type waybillResponse struct {
	Status      string  `json:"status"`
	DownloadURL *string `json:"download_url"`
}

type shipmentResponse struct {
	ID               uuid.UUID                  `json:"id"`
	OrderID          uuid.UUID                  `json:"order_id"`
	OrderNumber      string                     `json:"order_number"`
	Number           string                     `json:"number"`
	Status           string                     `json:"status"`
	AllowedNext      []string                   `json:"allowed_next"`
	LocationID       *uuid.UUID                 `json:"location_id"`
	CarrierAccountID *uuid.UUID                 `json:"carrier_account_id"`
	Carrier          string                     `json:"carrier"`
	Service          *string                    `json:"service"`
	TrackingNumber   *string                    `json:"tracking_number"`
	TrackingURL      *string                    `json:"tracking_url"`
	Lines            []request.ShipmentLineJSON `json:"lines"`
	CODAmount        int64                      `json:"cod_amount"`
	CODCollected     *int64                     `json:"cod_collected"`
	CODFee           *int64                     `json:"cod_fee"`
	CODState         string                     `json:"cod_state"`
	Waybill          waybillResponse            `json:"waybill"`
	Events           []shipmentEventResponse    `json:"events"`
	ShippedAt        *time.Time                 `json:"shipped_at"`
	DeliveredAt      *time.Time                 `json:"delivered_at"`
	CreatedAt        time.Time                  `json:"created_at"`
	UpdatedAt        time.Time                  `json:"updated_at"`
}

// shipmentView answers a shipment; its waybill's download_url is the
// store-checked route, never a public link.
func (s *Server) shipmentView(sh storage.Shipment) shipmentResponse {
	resp := shipmentResponse{ID: sh.ID, OrderID: sh.OrderID, OrderNumber: sh.OrderNumber, Number: sh.Number, Status: string(sh.Status),
		AllowedNext: request.AsStrings(storage.ShipmentAllowedNext(sh.Status)), LocationID: sh.LocationID, CarrierAccountID: sh.CarrierAccountID,
		Carrier: sh.Carrier, Service: sh.Service, TrackingNumber: sh.TrackingNumber, TrackingURL: sh.TrackingURL,
		Lines: make([]request.ShipmentLineJSON, 0, len(sh.Lines)), CODAmount: sh.CODAmount, CODCollected: sh.CODCollected, CODFee: sh.CODFee,
		CODState: sh.CODState, Waybill: waybillResponse{Status: sh.WaybillStatus}, Events: make([]shipmentEventResponse, 0, len(sh.Events)),
		ShippedAt: utcPtr(sh.ShippedAt), DeliveredAt: utcPtr(sh.DeliveredAt), CreatedAt: sh.CreatedAt.UTC(), UpdatedAt: sh.UpdatedAt.UTC()}
	for _, l := range sh.Lines {
		resp.Lines = append(resp.Lines, request.ShipmentLineJSON(l))
	}
	for _, e := range sh.Events {
		if e.Applied {
			resp.Events = append(resp.Events, shipmentEventResponse{Status: string(e.Status), OccurredAt: e.OccurredAt.UTC(), Source: e.Source, Note: e.Note})
		}
	}
	if sh.WaybillStatus == "ready" {
		resp.Waybill.DownloadURL = new(fmt.Sprintf("%s/api/v1/stores/%s/shipments/%s/waybill", s.cfg.BaseURL, sh.StoreID, sh.ID))
	}
	return resp
}

// handleCreateShipment serves POST /stores/{store_id}/orders/{order_id}/shipments.
func (s *Server) handleCreateShipment() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		orderID, err := pathUUID(r, "order_id")
		if err != nil {
			return err
		}
		req, err := wire.Decode[request.CreateShipment](r)
		if err != nil {
			return err
		}
		in := storage.NewShipment{LocationID: req.LocationID, CarrierAccountID: req.CarrierAccountID, Service: req.Service,
			TrackingNumber: req.TrackingNumber, TrackingURL: req.TrackingURL, CODAmount: req.CODAmount}
		if req.Carrier != nil {
			in.Carrier = *req.Carrier
		}
		if req.Lines != nil {
			in.Lines = make([]storage.ShipmentLine, 0, len(*req.Lines))
			for _, l := range *req.Lines {
				in.Lines = append(in.Lines, storage.ShipmentLine(l))
			}
		}
		return writeView(s, w, r, http.StatusCreated, s.shipmentView, func(tx *storage.Tx) (storage.Shipment, error) {
			return tx.CreateShipment(r.Context(), storeIDFrom(r.Context()), orderID, in, actor(principalFrom(r.Context())))
		})
	}
}

// handleListShipments serves GET /stores/{store_id}/shipments and, with
// byOrder, GET /stores/{store_id}/orders/{order_id}/shipments.
func (s *Server) handleListShipments(byOrder bool) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		storeID := storeIDFrom(r.Context())
		q := newQueryParser(r)
		page, limit := q.page(20)
		f := storage.ShipmentFilter{Page: storage.Page{Page: page, Limit: limit}, Carrier: q.str("carrier"),
			TrackingNumber: q.str("tracking_number"), UpdatedSince: q.dateTime("updated_since"),
			CreatedFrom: q.dateTime("created_from"), CreatedTo: q.dateTime("created_to")}
		if status := q.enum("status", request.AsStrings(storage.ShipmentStatuses), ""); status != "" {
			f.Status = new(storage.ShipmentStatus(status))
		}
		if state := q.enum("cod_state", storage.CODStates, ""); state != "" {
			f.CODState = &state
		}
		if f.Carrier != nil {
			q.OneOf("carrier", *f.Carrier, storage.Carriers)
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
		shipments, total, err := s.db.FindShipments(r.Context(), storeID, f)
		if err != nil {
			return err
		}
		items := make([]shipmentResponse, 0, len(shipments))
		for _, sh := range shipments {
			items = append(items, s.shipmentView(sh))
		}
		respond(w, http.StatusOK, newList(items, page, limit, total))
		return nil
	}
}

// pathOrder is the route's order_id, of an order of the store.
func (s *Server) pathOrder(r *http.Request) (*uuid.UUID, error) {
	orderID, err := pathUUID(r, "order_id")
	if err != nil {
		return nil, err
	}
	if _, err := s.db.FindOrderByRef(r.Context(), storeIDFrom(r.Context()), orderID.String()); err != nil {
		return nil, err
	}
	return &orderID, nil
}

// handleGetShipment serves GET /stores/{store_id}/shipments/{shipment_id}.
func (s *Server) handleGetShipment() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		id, err := pathUUID(r, "shipment_id")
		if err != nil {
			return err
		}
		sh, err := s.db.FindShipment(r.Context(), storeIDFrom(r.Context()), id)
		if err != nil {
			return err
		}
		respond(w, http.StatusOK, s.shipmentView(sh))
		return nil
	}
}

// handleUpdateShipment serves PATCH /stores/{store_id}/shipments/{shipment_id}.
func (s *Server) handleUpdateShipment() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		id, err := pathUUID(r, "shipment_id")
		if err != nil {
			return err
		}
		req, err := wire.Decode[request.UpdateShipment](r)
		if err != nil {
			return err
		}
		upd := storage.ShipmentUpdate{Carrier: req.Carrier, Service: req.Service, TrackingNumber: req.TrackingNumber,
			TrackingURL: req.TrackingURL, CODAmount: req.CODAmount}
		return writeView(s, w, r, http.StatusOK, s.shipmentView, func(tx *storage.Tx) (storage.Shipment, error) {
			return tx.UpdateShipment(r.Context(), storeIDFrom(r.Context()), id, upd, actor(principalFrom(r.Context())))
		})
	}
}

// handleShipmentEvent serves POST /stores/{store_id}/shipments/{shipment_id}/events.
func (s *Server) handleShipmentEvent() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		id, err := pathUUID(r, "shipment_id")
		if err != nil {
			return err
		}
		req, err := wire.Decode[request.ShipmentEvent](r)
		if err != nil {
			return err
		}
		report := storage.ShipmentReport{Status: storage.ShipmentStatus(req.Status), OccurredAt: time.Now().UTC(),
			CODCollected: req.CODCollected, Note: req.Note}
		if req.OccurredAt != nil {
			report.OccurredAt = req.OccurredAt.UTC()
		}
		return writeView(s, w, r, http.StatusOK, s.shipmentView, func(tx *storage.Tx) (storage.Shipment, error) {
			return tx.ReportShipmentStatus(r.Context(), storeIDFrom(r.Context()), id, report, actor(principalFrom(r.Context())))
		})
	}
}

// handleCancelShipment serves POST /stores/{store_id}/shipments/{shipment_id}/cancel.
func (s *Server) handleCancelShipment() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		id, err := pathUUID(r, "shipment_id")
		if err != nil {
			return err
		}
		req, err := wire.Decode[request.CancelShipment](r)
		if err != nil {
			return err
		}
		return writeView(s, w, r, http.StatusOK, s.shipmentView, func(tx *storage.Tx) (storage.Shipment, error) {
			return tx.CancelShipment(r.Context(), storeIDFrom(r.Context()), id, strings.TrimSpace(req.Reason), actor(principalFrom(r.Context())))
		})
	}
}

// handleRequestWaybill serves POST /stores/{store_id}/shipments/{shipment_id}/waybill.
func (s *Server) handleRequestWaybill() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		id, err := pathUUID(r, "shipment_id")
		if err != nil {
			return err
		}
		return writeView(s, w, r, http.StatusAccepted, s.shipmentView, func(tx *storage.Tx) (storage.Shipment, error) {
			return tx.RequestWaybill(r.Context(), storeIDFrom(r.Context()), id, actor(principalFrom(r.Context())))
		})
	}
}

// handleDownloadWaybill serves GET /stores/{store_id}/shipments/{shipment_id}/waybill:
// the PDF from the object store, for this store's credentials only.
func (s *Server) handleDownloadWaybill() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		id, err := pathUUID(r, "shipment_id")
		if err != nil {
			return err
		}
		storeID := storeIDFrom(r.Context())
		sh, err := s.db.FindShipment(r.Context(), storeID, id)
		if err != nil {
			return err
		}
		switch sh.WaybillStatus {
		case "failed":
			return errWaybillFailed
		case "pending":
			return errWaybillNotReady
		}
		pdf, err := s.blob.Get(r.Context(), storage.WaybillKey(storeID, id))
		if err != nil {
			return err
		}
		w.Header().Set("Content-Type", "application/pdf")
		w.Header().Set("Content-Disposition", fmt.Sprintf(`attachment; filename="AWB-%s.pdf"`, sh.Number))
		w.Header().Set("Cache-Control", "private, no-store")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(pdf)
		return nil
	}
}

// shipmentErrors maps the storage refusals of fulfillment.
func shipmentErrors(err error) *apiError {
	var transition *storage.ShipmentTransitionError
	switch {
	case errors.As(err, &transition):
		return &apiError{Status: http.StatusConflict, Code: "INVALID_SHIPMENT_TRANSITION",
			Message:     fmt.Sprintf("A shipment cannot move from %s to %s", transition.From, transition.To),
			MessageAr:   fmt.Sprintf("لا يمكن نقل الشحنة من %s إلى %s", transition.From, transition.To),
			AllowedNext: request.AsStrings(transition.AllowedNext)}
	case errors.Is(err, storage.ErrOrderNotShippable):
		return errOrderNotShippable
	case errors.Is(err, storage.ErrNothingToShip):
		return errNothingToShip
	case errors.Is(err, storage.ErrDuplicateTracking):
		return errDuplicateTracking
	case errors.Is(err, storage.ErrShipmentClosed):
		return errShipmentClosed
	case errors.Is(err, storage.ErrUnshippedQuantity):
		return errUnshippedQuantity
	case errors.Is(err, storage.ErrDuplicateRemittance):
		return errDuplicateRemittance
	case errors.Is(err, storage.ErrAlreadyRemitted):
		return errAlreadyRemitted
	}
	return nil
}
