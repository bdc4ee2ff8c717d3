package request

import (
	"fmt"
	"strings"

	"github.com/google/uuid"
	"github.com/merchantsvc/svc/api/wire"
	"github.com/merchantsvc/svc/storage"
)

func checkAreas(c *Checker, areas []storage.ZoneArea) {
	if len(areas) < 1 || len(areas) > 200 {
		c.Add("areas", "out_of_range", "must list 1 to 200 areas")
	}
	for i, a := range areas {
		field := fmt.Sprintf("areas[%d]", i)
		c.Country(field+".country", a.Country)
		if a.Region != nil {
			c.Text(field+".region", *a.Region, 1, 100)
		}
		if len(a.Cities) > 500 {
			c.Add(field+".cities", "out_of_range", "must list at most 500 cities")
		}
		for j, city := range a.Cities {
			c.Text(fmt.Sprintf("%s.cities[%d]", field, j), city, 1, 100)
		}
	}
}

// Zone is the JSON body handleCreateZone reads (api/ship_rates.go).
type Zone struct {
	Name  string             `json:"name"`
	Areas []storage.ZoneArea `json:"areas"`
}

// Valid lists what is wrong with the body, for wire.Decode's 422.
func (req Zone) Valid() []wire.FieldError {
	var c Checker
	c.Text("name", req.Name, 1, 120)
	checkAreas(&c, req.Areas)
	return c.Result()
}

// DeliveryDays is a rate's delivery estimate in days.
type DeliveryDays struct {
	Min int `json:"min"`
	Max int `json:"max"`
}

// UpdateZone is the JSON body handleUpdateZone reads (api/ship_rates.go).
type UpdateZone struct {
	Name  wire.Optional[string]             `json:"name"`
	Areas wire.Optional[[]storage.ZoneArea] `json:"areas"`
}

// Valid lists what is wrong with the body, for wire.Decode's 422.
func (req UpdateZone) Valid() []wire.FieldError {
	var c Checker
	if notNull(&c, "name", req.Name) {
		c.Text("name", req.Name.Value, 1, 120)
	}
	if notNull(&c, "areas", req.Areas) {
		checkAreas(&c, req.Areas.Value)
	}
	return c.Result()
}

// RateState is a rate as it would be stored; §15's rules are checked on it.
type RateState struct {
	Name              string               `json:"name"`
	Price             *int64               `json:"price"`
	WeightBands       []storage.WeightBand `json:"weight_bands"`
	AdditionalPerKg   *int64               `json:"additional_per_kg"`
	FreeAboveSubtotal *int64               `json:"free_above_subtotal"`
	CODAvailable      *bool                `json:"cod_available"`
	CODFee            *int64               `json:"cod_fee"`
	DeliveryDays      *DeliveryDays        `json:"delivery_days"`
	Position          *int                 `json:"position"`
}

// Check adds what is wrong with the rate.
func (rs RateState) Check(c *Checker) {
	c.Text("name", rs.Name, 1, 120)
	if rs.Price == nil {
		c.Add("price", "required", "is required")
	} else {
		c.Amount("price", *rs.Price)
	}
	if len(rs.WeightBands) > 50 {
		c.Add("weight_bands", "out_of_range", "must list at most 50 bands")
	}
	for i, b := range rs.WeightBands {
		field := fmt.Sprintf("weight_bands[%d]", i)
		c.IntRange(field+".up_to_grams", int64(b.UpToGrams), 1, 1_000_000_000)
		c.Amount(field+".price", b.Price)
		if i > 0 && b.UpToGrams <= rs.WeightBands[i-1].UpToGrams {
			c.Add(field+".up_to_grams", "not_ascending", "bands must be strictly ascending by up_to_grams")
		}
	}
	if rs.AdditionalPerKg != nil {
		c.Amount("additional_per_kg", *rs.AdditionalPerKg)
	}
	if rs.FreeAboveSubtotal != nil {
		c.IntRange("free_above_subtotal", *rs.FreeAboveSubtotal, 1, storage.MaxAmount)
	}
	if rs.CODFee != nil {
		c.Amount("cod_fee", *rs.CODFee)
	}
	if d := rs.DeliveryDays; d != nil {
		c.IntRange("delivery_days.min", int64(d.Min), 0, 365)
		c.IntRange("delivery_days.max", int64(d.Max), 0, 365)
		if d.Min > d.Max {
			c.Add("delivery_days.min", "out_of_range", "must not exceed max")
		}
	}
	if rs.Position != nil {
		c.MinInt("position", int64(*rs.Position), 0)
	}
}

// Valid lists what is wrong with the body, for wire.Decode's 422.
func (rs RateState) Valid() []wire.FieldError {
	var c Checker
	rs.Check(&c)
	return c.Result()
}

// Rate is the rate of the zone the state describes.
func (rs RateState) Rate(zoneID uuid.UUID) storage.ShippingRate {
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

// UpdateRate is the JSON body handleUpdateRate reads (api/ship_rates.go).
type UpdateRate struct {
	Name              wire.Optional[string]               `json:"name"`
	Price             wire.Optional[int64]                `json:"price"`
	WeightBands       wire.Optional[[]storage.WeightBand] `json:"weight_bands"`
	AdditionalPerKg   wire.Optional[int64]                `json:"additional_per_kg"`
	FreeAboveSubtotal wire.Optional[int64]                `json:"free_above_subtotal"`
	CODAvailable      wire.Optional[bool]                 `json:"cod_available"`
	CODFee            wire.Optional[int64]                `json:"cod_fee"`
	DeliveryDays      wire.Optional[DeliveryDays]         `json:"delivery_days"`
	Position          wire.Optional[int]                  `json:"position"`
}

// Valid lists what is wrong with the body, for wire.Decode's 422.
func (req UpdateRate) Valid() []wire.FieldError {
	var c Checker
	notNull(&c, "name", req.Name)
	notNull(&c, "price", req.Price)
	notNull(&c, "weight_bands", req.WeightBands)
	notNull(&c, "cod_available", req.CODAvailable)
	notNull(&c, "cod_fee", req.CODFee)
	notNull(&c, "position", req.Position)
	return c.Result()
}

type quoteAddress struct {
	Country string  `json:"country"`
	Region  *string `json:"region"`
	City    string  `json:"city"`
}

func (a quoteAddress) check(c *Checker, prefix string) {
	c.Country(prefix+".country", a.Country)
	c.Text(prefix+".city", a.City, 1, 100)
	if a.Region != nil {
		c.Text(prefix+".region", *a.Region, 1, 100)
	}
}

func (a quoteAddress) shipTo() storage.ShipTo {
	return storage.ShipTo{Country: a.Country, Region: a.Region, City: a.City}
}

// Quote is the JSON body handleQuote reads (api/ship_rates.go).
type Quote struct {
	Address       *quoteAddress      `json:"address"`
	Lines         []orderLineRequest `json:"lines"`
	PaymentMethod *string            `json:"payment_method"`
}

// Valid lists what is wrong with the body, for wire.Decode's 422.
func (req Quote) Valid() []wire.FieldError {
	var c Checker
	if req.Address == nil {
		c.Add("address", "required", "is required")
	} else {
		req.Address.check(&c, "address")
	}
	if len(req.Lines) == 0 {
		c.Add("lines", "out_of_range", fmt.Sprintf("must have 1 to %d lines", maxOrderLines))
	}
	checkLines(&c, req.Lines)
	if req.PaymentMethod != nil {
		c.OneOf("payment_method", *req.PaymentMethod, storage.PaymentMethods)
	}
	return c.Result()
}
