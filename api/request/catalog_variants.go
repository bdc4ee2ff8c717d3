package request

import (
	"encoding/json"

	"github.com/merchantsvc/svc/api/wire"
	"github.com/merchantsvc/svc/storage"
)

const maxBarcodeLength = 64

// maxWeightGrams is a tonne: more is a typo, not a parcel.
const maxWeightGrams = 1_000_000

// CreateVariant is the JSON body handleCreateVariant reads (api/catalog_variants.go).
type CreateVariant struct {
	SKU         *string         `json:"sku"`
	Barcode     *string         `json:"barcode"`
	Price       *int64          `json:"price"`
	CostPrice   *int64          `json:"cost_price"`
	Quantity    *int            `json:"quantity"`
	Options     json.RawMessage `json:"options"`
	WeightGrams *int            `json:"weight_grams"`
	Value       *int64          `json:"value"` // gift card products only (§19)
}

// Valid lists what is wrong with the body, for wire.Decode's 422.
func (req CreateVariant) Valid() []wire.FieldError {
	var c Checker
	if req.SKU != nil {
		checkSKU(&c, "sku", *req.SKU)
	}
	if req.Barcode != nil {
		c.Text("barcode", *req.Barcode, 1, maxBarcodeLength)
	}
	if req.Price != nil {
		c.Amount("price", *req.Price)
	}
	if req.CostPrice != nil {
		c.Amount("cost_price", *req.CostPrice)
	}
	if req.Quantity != nil {
		c.MinInt("quantity", int64(*req.Quantity), 0)
	}
	if req.Options != nil && string(req.Options) != "null" && !IsJSONObject(req.Options) {
		c.Add("options", "invalid_type", "must be an object")
	}
	if req.WeightGrams != nil {
		c.IntRange("weight_grams", int64(*req.WeightGrams), 0, maxWeightGrams)
	}
	if req.Value != nil {
		c.Amount("value", *req.Value)
	}
	return c.Result()
}

// UpdateVariant is the JSON body handleUpdateVariant reads (api/catalog_variants.go).
type UpdateVariant struct {
	SKU         wire.Optional[string]          `json:"sku"`
	Barcode     wire.Optional[string]          `json:"barcode"`
	Price       wire.Optional[int64]           `json:"price"`
	CostPrice   wire.Optional[int64]           `json:"cost_price"`
	Quantity    wire.Optional[int]             `json:"quantity"`
	Options     wire.Optional[json.RawMessage] `json:"options"`
	Position    wire.Optional[int]             `json:"position"`
	WeightGrams wire.Optional[int]             `json:"weight_grams"`
	Value       wire.Optional[int64]           `json:"value"` // gift card products only (§19)
}

// Valid lists what is wrong with the body, for wire.Decode's 422.
func (req UpdateVariant) Valid() []wire.FieldError {
	var c Checker
	if req.SKU.Set && !req.SKU.Null {
		checkSKU(&c, "sku", req.SKU.Value)
	}
	if req.Barcode.Set && !req.Barcode.Null {
		c.Text("barcode", req.Barcode.Value, 1, maxBarcodeLength)
	}
	if notNull(&c, "price", req.Price) {
		c.Amount("price", req.Price.Value)
	}
	if req.CostPrice.Set && !req.CostPrice.Null {
		c.Amount("cost_price", req.CostPrice.Value)
	}
	if notNull(&c, "quantity", req.Quantity) {
		c.MinInt("quantity", int64(req.Quantity.Value), 0)
	}
	if req.Options.Set && !req.Options.Null && !IsJSONObject(req.Options.Value) {
		c.Add("options", "invalid_type", "must be an object")
	}
	if notNull(&c, "position", req.Position) {
		c.MinInt("position", int64(req.Position.Value), 1)
	}
	if req.WeightGrams.Set && !req.WeightGrams.Null {
		c.IntRange("weight_grams", int64(req.WeightGrams.Value), 0, maxWeightGrams)
	}
	if notNull(&c, "value", req.Value) {
		c.Amount("value", req.Value.Value)
	}
	return c.Result()
}

// Update is the change the request makes to the variant.
func (req UpdateVariant) Update() storage.VariantUpdate {
	upd := storage.VariantUpdate{
		SKU:         storage.Field[string](req.SKU),
		Barcode:     storage.Field[string](req.Barcode),
		CostPrice:   storage.Field[int64](req.CostPrice),
		WeightGrams: storage.Field[int](req.WeightGrams),
	}
	if req.Price.Set {
		upd.Price = &req.Price.Value
	}
	if req.Quantity.Set {
		upd.Quantity = &req.Quantity.Value
	}
	if req.Options.Set {
		upd.Options = json.RawMessage(`{}`)
		if !req.Options.Null {
			upd.Options = req.Options.Value
		}
	}
	if req.Position.Set {
		upd.Position = &req.Position.Value
	}
	if req.Value.Set {
		upd.Value = &req.Value.Value
	}
	return upd
}
