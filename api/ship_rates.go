package api

import (
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/merchantsvc/svc/api/request"
	"github.com/merchantsvc/svc/api/wire"
	"github.com/merchantsvc/svc/storage"
)

// Shipping zones and rates (decisions §15).

// areaOverlapError is 409 AREA_OVERLAP naming the areas other zones cover.
func areaOverlapError(err error) *apiError {
	var overlap *storage.AreaOverlapError
	if !errors.As(err, &overlap) {
		return nil
	}
	return &apiError{Status: http.StatusConflict, Code: "AREA_OVERLAP",
		Message:   "Another zone already covers some of these areas; each address belongs to one zone",
		MessageAr: "منطقة شحن أخرى تغطي بعض هذه المناطق؛ كل عنوان يتبع منطقة واحدة",
		Conflicts: overlap.Conflicts}
}

type rateResponse struct {
	ID                uuid.UUID             `json:"id"`
	ZoneID            uuid.UUID             `json:"zone_id"`
	Name              string                `json:"name"`
	Price             int64                 `json:"price"`
	WeightBands       []storage.WeightBand  `json:"weight_bands"`
	AdditionalPerKg   *int64                `json:"additional_per_kg"`
	FreeAboveSubtotal *int64                `json:"free_above_subtotal"`
	CODAvailable      bool                  `json:"cod_available"`
	CODFee            int64                 `json:"cod_fee"`
	DeliveryDays      *request.DeliveryDays `json:"delivery_days"`
	Position          int                   `json:"position"`
	CreatedAt         time.Time             `json:"created_at"`
	UpdatedAt         time.Time             `json:"updated_at"`
}

func newRateResponse(r storage.ShippingRate) rateResponse {
	out := rateResponse{ID: r.ID, ZoneID: r.ZoneID, Name: r.Name, Price: r.Price, WeightBands: r.WeightBands, AdditionalPerKg: r.AdditionalPerKg,
		FreeAboveSubtotal: r.FreeAboveSubtotal, CODAvailable: r.CODAvailable, CODFee: r.CODFee, Position: r.Position,
		CreatedAt: r.CreatedAt.UTC(), UpdatedAt: r.UpdatedAt.UTC()}
	if r.DeliveryDaysMin != nil && r.DeliveryDaysMax != nil {
		out.DeliveryDays = &request.DeliveryDays{Min: *r.DeliveryDaysMin, Max: *r.DeliveryDaysMax}
	}
	return out
}

type zoneResponse struct {
	ID        uuid.UUID          `json:"id"`
	Name      string             `json:"name"`
	Areas     []storage.ZoneArea `json:"areas"`
	Rates     []rateResponse     `json:"rates"`
	CreatedAt time.Time          `json:"created_at"`
	UpdatedAt time.Time          `json:"updated_at"`
}

func newZoneResponse(z storage.ShippingZone) zoneResponse {
	out := zoneResponse{ID: z.ID, Name: z.Name, Areas: z.Areas, Rates: make([]rateResponse, 0, len(z.Rates)), CreatedAt: z.CreatedAt.UTC(),
		UpdatedAt: z.UpdatedAt.UTC()}
	for _, r := range z.Rates {
		out.Rates = append(out.Rates, newRateResponse(r))
	}
	return out
}

// handleCreateZone serves POST /stores/{store_id}/shipping/zones.
func (s *Server) handleCreateZone() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		req, err := wire.Decode[request.Zone](r)
		if err != nil {
			return err
		}
		return writeView(s, w, r, http.StatusCreated, newZoneResponse, func(tx *storage.Tx) (storage.ShippingZone, error) {
			return tx.CreateZone(r.Context(), storeIDFrom(r.Context()), strings.TrimSpace(req.Name), req.Areas)
		})
	}
}

// handleListZones serves GET /stores/{store_id}/shipping/zones.
func (s *Server) handleListZones() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		zones, err := s.db.FindZones(r.Context(), storeIDFrom(r.Context()))
		if err != nil {
			return err
		}
		respond(w, http.StatusOK, views(zones, newZoneResponse))
		return nil
	}
}

// handleGetZone serves GET /stores/{store_id}/shipping/zones/{zone_id}.
func (s *Server) handleGetZone() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		id, err := pathUUID(r, "zone_id")
		if err != nil {
			return err
		}
		z, err := s.db.FindZone(r.Context(), storeIDFrom(r.Context()), id)
		if err != nil {
			return err
		}
		respond(w, http.StatusOK, newZoneResponse(z))
		return nil
	}
}

// handleUpdateZone serves PATCH /stores/{store_id}/shipping/zones/{zone_id}:
// areas are replaced whole.
func (s *Server) handleUpdateZone() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		id, err := pathUUID(r, "zone_id")
		if err != nil {
			return err
		}
		req, err := wire.Decode[request.UpdateZone](r)
		if err != nil {
			return err
		}
		var name *string
		if req.Name.Set {
			name = new(strings.TrimSpace(req.Name.Value))
		}
		return writeView(s, w, r, http.StatusOK, newZoneResponse, func(tx *storage.Tx) (storage.ShippingZone, error) {
			return tx.UpdateZone(r.Context(), storeIDFrom(r.Context()), id, name, req.Areas.Value)
		})
	}
}

// handleDeleteZone serves DELETE /stores/{store_id}/shipping/zones/{zone_id}.
func (s *Server) handleDeleteZone() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		id, err := pathUUID(r, "zone_id")
		if err != nil {
			return err
		}
		return s.writeTx(w, r, http.StatusNoContent, func(tx *storage.Tx) (any, error) {
			return nil, tx.DeleteZone(r.Context(), storeIDFrom(r.Context()), id)
		})
	}
}

// handleCreateRate serves POST /stores/{store_id}/shipping/zones/{zone_id}/rates.
func (s *Server) handleCreateRate() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		zoneID, err := pathUUID(r, "zone_id")
		if err != nil {
			return err
		}
		req, err := wire.Decode[request.RateState](r)
		if err != nil {
			return err
		}
		return writeView(s, w, r, http.StatusCreated, newRateResponse, func(tx *storage.Tx) (storage.ShippingRate, error) {
			return tx.CreateRate(r.Context(), storeIDFrom(r.Context()), req.Rate(zoneID))
		})
	}
}

// handleUpdateRate serves PATCH /stores/{store_id}/shipping/zones/{zone_id}/rates/{rate_id}:
// the rate as it would become is checked whole.
func (s *Server) handleUpdateRate() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		zoneID, err := pathUUID(r, "zone_id")
		if err != nil {
			return err
		}
		id, err := pathUUID(r, "rate_id")
		if err != nil {
			return err
		}
		req, err := wire.Decode[request.UpdateRate](r)
		if err != nil {
			return err
		}
		storeID := storeIDFrom(r.Context())
		return writeView(s, w, r, http.StatusOK, newRateResponse, func(tx *storage.Tx) (storage.ShippingRate, error) {
			current, err := tx.FindRate(r.Context(), storeID, zoneID, id)
			if err != nil {
				return storage.ShippingRate{}, err
			}
			cur := newRateResponse(current)
			auditBefore(r.Context(), cur)
			next := request.RateState{Name: cur.Name, Price: &cur.Price, WeightBands: cur.WeightBands, AdditionalPerKg: cur.AdditionalPerKg,
				FreeAboveSubtotal: cur.FreeAboveSubtotal, CODAvailable: &cur.CODAvailable, CODFee: &cur.CODFee, DeliveryDays: cur.DeliveryDays,
				Position: &cur.Position}
			if req.Name.Set {
				next.Name = req.Name.Value
			}
			request.SetOptional(&next.Price, req.Price)
			if req.WeightBands.Set {
				next.WeightBands = req.WeightBands.Value
			}
			request.SetOptional(&next.AdditionalPerKg, req.AdditionalPerKg)
			request.SetOptional(&next.FreeAboveSubtotal, req.FreeAboveSubtotal)
			request.SetOptional(&next.CODAvailable, req.CODAvailable)
			request.SetOptional(&next.CODFee, req.CODFee)
			request.SetOptional(&next.DeliveryDays, req.DeliveryDays)
			request.SetOptional(&next.Position, req.Position)
			var c request.Checker
			next.Check(&c)
			if fields := c.Result(); len(fields) > 0 {
				return storage.ShippingRate{}, validationError(fields)
			}
			rate := next.Rate(zoneID)
			rate.ID = id
			return tx.ReplaceRate(r.Context(), storeID, rate)
		})
	}
}

// handleDeleteRate serves DELETE /stores/{store_id}/shipping/zones/{zone_id}/rates/{rate_id}.
func (s *Server) handleDeleteRate() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		zoneID, err := pathUUID(r, "zone_id")
		if err != nil {
			return err
		}
		id, err := pathUUID(r, "rate_id")
		if err != nil {
			return err
		}
		return s.writeTx(w, r, http.StatusNoContent, func(tx *storage.Tx) (any, error) {
			return nil, tx.DeleteRate(r.Context(), storeIDFrom(r.Context()), zoneID, id)
		})
	}
}

var errNotDeliverable = &apiError{Status: http.StatusUnprocessableEntity, Code: "NOT_DELIVERABLE",
	Message: "No shipping zone of the store covers this address", MessageAr: "لا تغطي أي منطقة شحن في المتجر هذا العنوان"}

// notDeliverable is 422 NOT_DELIVERABLE on the address's city field.
func notDeliverable(field string) *apiError {
	e := *errNotDeliverable
	e.Fields = []wire.FieldError{{Field: field, Code: "not_deliverable", Message: "no shipping zone covers this address",
		MessageAr: "لا تغطي أي منطقة شحن هذا العنوان"}}
	return &e
}

type rateOptionResponse struct {
	RateID       uuid.UUID             `json:"rate_id"`
	Name         string                `json:"name"`
	Fee          int64                 `json:"fee"`
	CODFee       int64                 `json:"cod_fee"`
	Free         bool                  `json:"free"`
	DeliveryDays *request.DeliveryDays `json:"delivery_days"`
}

func newRateOptionResponses(options []storage.RateOption) []rateOptionResponse {
	out := make([]rateOptionResponse, 0, len(options))
	for _, o := range options {
		r := rateOptionResponse{RateID: o.RateID, Name: o.Name, Fee: o.Fee, CODFee: o.CODFee, Free: o.Free}
		if o.DeliveryDaysMin != nil && o.DeliveryDaysMax != nil {
			r.DeliveryDays = &request.DeliveryDays{Min: *o.DeliveryDaysMin, Max: *o.DeliveryDaysMax}
		}
		out = append(out, r)
	}
	return out
}

// handleQuote serves POST /stores/{store_id}/shipping/quote: the zone an
// address belongs to and its rates for the lines, cheapest first.
func (s *Server) handleQuote() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		req, err := wire.Decode[request.Quote](r)
		if err != nil {
			return err
		}
		storeID := storeIDFrom(r.Context())
		items := make([]storage.CartItem, len(req.Lines))
		for i, l := range req.Lines {
			id, _ := request.ParseUUID(l.VariantID)
			items[i] = storage.CartItem{VariantID: id, Quantity: l.Quantity}
		}
		grams, subtotal, err := s.db.WeighItems(r.Context(), storeID, items)
		if err != nil {
			return err
		}
		zoneID, err := s.db.MatchZone(r.Context(), storeID, req.Address.Country, req.Address.Region, req.Address.City)
		if errors.Is(err, storage.ErrNotDeliverable) {
			return notDeliverable("address.city")
		}
		if err != nil {
			return err
		}
		zone, err := s.db.FindZone(r.Context(), storeID, zoneID)
		if err != nil {
			return err
		}
		method := ""
		if req.PaymentMethod != nil {
			method = *req.PaymentMethod
		}
		respond(w, http.StatusOK, map[string]any{"zone_id": zoneID,
			"options": newRateOptionResponses(storage.RateOptions(zone.Rates, grams, subtotal, method))})
		return nil
	}
}

type shippingAreasResponse struct {
	Country string   `json:"country"`
	Regions []string `json:"regions"`
	Cities  []string `json:"cities"`
}

// handleStorefrontShippingAreas serves GET /storefront/{subdomain}/shipping/areas:
// the countries, regions and cities the store ships to, for an address picker.
func (s *Server) handleStorefrontShippingAreas() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		store, err := s.storefrontStore(r)
		if err != nil {
			return err
		}
		areas, err := s.db.FindShippingAreas(r.Context(), store.ID)
		if err != nil {
			return err
		}
		out := make([]shippingAreasResponse, 0, len(areas))
		for _, a := range areas {
			out = append(out, shippingAreasResponse{Country: a.Country, Regions: a.Regions, Cities: a.Cities})
		}
		respond(w, http.StatusOK, out)
		return nil
	}
}
