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

func checkAreas(c *checker, areas []storage.ZoneArea) {
	if len(areas) < 1 || len(areas) > 200 {
		c.add("areas", "out_of_range", "must list 1 to 200 areas")
	}
	for i, a := range areas {
		field := fmt.Sprintf("areas[%d]", i)
		c.country(field+".country", a.Country)
		if a.Region != nil {
			c.text(field+".region", *a.Region, 1, 100)
		}
		if len(a.Cities) > 500 {
			c.add(field+".cities", "out_of_range", "must list at most 500 cities")
		}
		for j, city := range a.Cities {
			c.text(fmt.Sprintf("%s.cities[%d]", field, j), city, 1, 100)
		}
	}
}

type zoneRequest struct {
	Name  string             `json:"name"`
	Areas []storage.ZoneArea `json:"areas"`
}

func (req zoneRequest) Valid() []fieldError {
	var c checker
	c.text("name", req.Name, 1, 120)
	checkAreas(&c, req.Areas)
	return c.result()
}

type deliveryDays struct {
	Min int `json:"min"`
	Max int `json:"max"`
}

type rateResponse struct {
	ID                uuid.UUID            `json:"id"`
	ZoneID            uuid.UUID            `json:"zone_id"`
	Name              string               `json:"name"`
	Price             int64                `json:"price"`
	WeightBands       []storage.WeightBand `json:"weight_bands"`
	AdditionalPerKg   *int64               `json:"additional_per_kg"`
	FreeAboveSubtotal *int64               `json:"free_above_subtotal"`
	CODAvailable      bool                 `json:"cod_available"`
	CODFee            int64                `json:"cod_fee"`
	DeliveryDays      *deliveryDays        `json:"delivery_days"`
	Position          int                  `json:"position"`
	CreatedAt         time.Time            `json:"created_at"`
	UpdatedAt         time.Time            `json:"updated_at"`
}

func newRateResponse(r storage.ShippingRate) rateResponse {
	out := rateResponse{ID: r.ID, ZoneID: r.ZoneID, Name: r.Name, Price: r.Price, WeightBands: r.WeightBands, AdditionalPerKg: r.AdditionalPerKg,
		FreeAboveSubtotal: r.FreeAboveSubtotal, CODAvailable: r.CODAvailable, CODFee: r.CODFee, Position: r.Position,
		CreatedAt: r.CreatedAt.UTC(), UpdatedAt: r.UpdatedAt.UTC()}
	if r.DeliveryDaysMin != nil && r.DeliveryDaysMax != nil {
		out.DeliveryDays = &deliveryDays{Min: *r.DeliveryDaysMin, Max: *r.DeliveryDaysMax}
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
		req, err := decode[zoneRequest](r)
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
		items := make([]zoneResponse, 0, len(zones))
		for _, z := range zones {
			items = append(items, newZoneResponse(z))
		}
		respond(w, http.StatusOK, items)
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

type updateZoneRequest struct {
	Name  optional[string]             `json:"name"`
	Areas optional[[]storage.ZoneArea] `json:"areas"`
}

func (req updateZoneRequest) Valid() []fieldError {
	var c checker
	if notNull(&c, "name", req.Name) {
		c.text("name", req.Name.Value, 1, 120)
	}
	if notNull(&c, "areas", req.Areas) {
		checkAreas(&c, req.Areas.Value)
	}
	return c.result()
}

// handleUpdateZone serves PATCH /stores/{store_id}/shipping/zones/{zone_id}:
// areas are replaced whole.
func (s *Server) handleUpdateZone() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		id, err := pathUUID(r, "zone_id")
		if err != nil {
			return err
		}
		req, err := decode[updateZoneRequest](r)
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

// rateState is a rate as it would be stored; §15's rules are checked on it.
type rateState struct {
	Name              string               `json:"name"`
	Price             *int64               `json:"price"`
	WeightBands       []storage.WeightBand `json:"weight_bands"`
	AdditionalPerKg   *int64               `json:"additional_per_kg"`
	FreeAboveSubtotal *int64               `json:"free_above_subtotal"`
	CODAvailable      *bool                `json:"cod_available"`
	CODFee            *int64               `json:"cod_fee"`
	DeliveryDays      *deliveryDays        `json:"delivery_days"`
	Position          *int                 `json:"position"`
}

func (rs rateState) check(c *checker) {
	c.text("name", rs.Name, 1, 120)
	if rs.Price == nil {
		c.add("price", "required", "is required")
	} else {
		c.amount("price", *rs.Price)
	}
	if len(rs.WeightBands) > 50 {
		c.add("weight_bands", "out_of_range", "must list at most 50 bands")
	}
	for i, b := range rs.WeightBands {
		field := fmt.Sprintf("weight_bands[%d]", i)
		c.intRange(field+".up_to_grams", int64(b.UpToGrams), 1, 1_000_000_000)
		c.amount(field+".price", b.Price)
		if i > 0 && b.UpToGrams <= rs.WeightBands[i-1].UpToGrams {
			c.add(field+".up_to_grams", "not_ascending", "bands must be strictly ascending by up_to_grams")
		}
	}
	if rs.AdditionalPerKg != nil {
		c.amount("additional_per_kg", *rs.AdditionalPerKg)
	}
	if rs.FreeAboveSubtotal != nil {
		c.intRange("free_above_subtotal", *rs.FreeAboveSubtotal, 1, storage.MaxAmount)
	}
	if rs.CODFee != nil {
		c.amount("cod_fee", *rs.CODFee)
	}
	if d := rs.DeliveryDays; d != nil {
		c.intRange("delivery_days.min", int64(d.Min), 0, 365)
		c.intRange("delivery_days.max", int64(d.Max), 0, 365)
		if d.Min > d.Max {
			c.add("delivery_days.min", "out_of_range", "must not exceed max")
		}
	}
	if rs.Position != nil {
		c.minInt("position", int64(*rs.Position), 0)
	}
}

func (rs rateState) Valid() []fieldError {
	var c checker
	rs.check(&c)
	return c.result()
}

func (rs rateState) rate(zoneID uuid.UUID) storage.ShippingRate {
	rate := storage.ShippingRate{ZoneID: zoneID, Name: strings.TrimSpace(rs.Name), WeightBands: rs.WeightBands, AdditionalPerKg: rs.AdditionalPerKg,
		FreeAboveSubtotal: rs.FreeAboveSubtotal, CODAvailable: rs.CODAvailable == nil || *rs.CODAvailable}
	if rs.Price != nil {
		rate.Price = *rs.Price
	}
	if rs.CODFee != nil {
		rate.CODFee = *rs.CODFee
	}
	if rs.DeliveryDays != nil {
		rate.DeliveryDaysMin, rate.DeliveryDaysMax = &rs.DeliveryDays.Min, &rs.DeliveryDays.Max
	}
	if rs.Position != nil {
		rate.Position = *rs.Position
	}
	return rate
}

// handleCreateRate serves POST /stores/{store_id}/shipping/zones/{zone_id}/rates.
func (s *Server) handleCreateRate() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		zoneID, err := pathUUID(r, "zone_id")
		if err != nil {
			return err
		}
		req, err := decode[rateState](r)
		if err != nil {
			return err
		}
		return writeView(s, w, r, http.StatusCreated, newRateResponse, func(tx *storage.Tx) (storage.ShippingRate, error) {
			return tx.CreateRate(r.Context(), storeIDFrom(r.Context()), req.rate(zoneID))
		})
	}
}

type updateRateRequest struct {
	Name              optional[string]               `json:"name"`
	Price             optional[int64]                `json:"price"`
	WeightBands       optional[[]storage.WeightBand] `json:"weight_bands"`
	AdditionalPerKg   optional[int64]                `json:"additional_per_kg"`
	FreeAboveSubtotal optional[int64]                `json:"free_above_subtotal"`
	CODAvailable      optional[bool]                 `json:"cod_available"`
	CODFee            optional[int64]                `json:"cod_fee"`
	DeliveryDays      optional[deliveryDays]         `json:"delivery_days"`
	Position          optional[int]                  `json:"position"`
}

func (req updateRateRequest) Valid() []fieldError {
	var c checker
	notNull(&c, "name", req.Name)
	notNull(&c, "price", req.Price)
	notNull(&c, "weight_bands", req.WeightBands)
	notNull(&c, "cod_available", req.CODAvailable)
	notNull(&c, "cod_fee", req.CODFee)
	notNull(&c, "position", req.Position)
	return c.result()
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
		req, err := decode[updateRateRequest](r)
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
			next := rateState{Name: cur.Name, Price: &cur.Price, WeightBands: cur.WeightBands, AdditionalPerKg: cur.AdditionalPerKg,
				FreeAboveSubtotal: cur.FreeAboveSubtotal, CODAvailable: &cur.CODAvailable, CODFee: &cur.CODFee, DeliveryDays: cur.DeliveryDays,
				Position: &cur.Position}
			if req.Name.Set {
				next.Name = req.Name.Value
			}
			setOptional(&next.Price, req.Price)
			if req.WeightBands.Set {
				next.WeightBands = req.WeightBands.Value
			}
			setOptional(&next.AdditionalPerKg, req.AdditionalPerKg)
			setOptional(&next.FreeAboveSubtotal, req.FreeAboveSubtotal)
			setOptional(&next.CODAvailable, req.CODAvailable)
			setOptional(&next.CODFee, req.CODFee)
			setOptional(&next.DeliveryDays, req.DeliveryDays)
			setOptional(&next.Position, req.Position)
			var c checker
			next.check(&c)
			if fields := c.result(); len(fields) > 0 {
				return storage.ShippingRate{}, validationError(fields)
			}
			rate := next.rate(zoneID)
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
	e.Fields = []fieldError{{Field: field, Code: "not_deliverable", Message: "no shipping zone covers this address",
		MessageAr: "لا تغطي أي منطقة شحن هذا العنوان"}}
	return &e
}

type quoteAddress struct {
	Country string  `json:"country"`
	Region  *string `json:"region"`
	City    string  `json:"city"`
}

func (a quoteAddress) check(c *checker, prefix string) {
	c.country(prefix+".country", a.Country)
	c.text(prefix+".city", a.City, 1, 100)
	if a.Region != nil {
		c.text(prefix+".region", *a.Region, 1, 100)
	}
}

func (a quoteAddress) shipTo() storage.ShipTo {
	return storage.ShipTo{Country: a.Country, Region: a.Region, City: a.City}
}

type quoteRequest struct {
	Address       *quoteAddress      `json:"address"`
	Lines         []orderLineRequest `json:"lines"`
	PaymentMethod *string            `json:"payment_method"`
}

func (req quoteRequest) Valid() []fieldError {
	var c checker
	if req.Address == nil {
		c.add("address", "required", "is required")
	} else {
		req.Address.check(&c, "address")
	}
	if len(req.Lines) == 0 {
		c.add("lines", "out_of_range", fmt.Sprintf("must have 1 to %d lines", maxOrderLines))
	}
	checkLines(&c, req.Lines)
	if req.PaymentMethod != nil {
		c.oneOf("payment_method", *req.PaymentMethod, storage.PaymentMethods)
	}
	return c.result()
}

type rateOptionResponse struct {
	RateID       uuid.UUID     `json:"rate_id"`
	Name         string        `json:"name"`
	Fee          int64         `json:"fee"`
	CODFee       int64         `json:"cod_fee"`
	Free         bool          `json:"free"`
	DeliveryDays *deliveryDays `json:"delivery_days"`
}

func newRateOptionResponses(options []storage.RateOption) []rateOptionResponse {
	out := make([]rateOptionResponse, 0, len(options))
	for _, o := range options {
		r := rateOptionResponse{RateID: o.RateID, Name: o.Name, Fee: o.Fee, CODFee: o.CODFee, Free: o.Free}
		if o.DeliveryDaysMin != nil && o.DeliveryDaysMax != nil {
			r.DeliveryDays = &deliveryDays{Min: *o.DeliveryDaysMin, Max: *o.DeliveryDaysMax}
		}
		out = append(out, r)
	}
	return out
}

// handleQuote serves POST /stores/{store_id}/shipping/quote: the zone an
// address belongs to and its rates for the lines, cheapest first.
func (s *Server) handleQuote() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		req, err := decode[quoteRequest](r)
		if err != nil {
			return err
		}
		storeID := storeIDFrom(r.Context())
		items := make([]storage.CartItem, len(req.Lines))
		for i, l := range req.Lines {
			id, _ := parseUUID(l.VariantID)
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
