package request

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/merchantsvc/svc/api/wire"
	"github.com/merchantsvc/svc/storage"
	"github.com/merchantsvc/svc/storage/handle"
)

const (
	maxNameLength        = 255
	maxDescriptionLength = 20000
	maxSKULength         = 100
)

// IsJSONObject reports whether raw holds a JSON object.
func IsJSONObject(raw json.RawMessage) bool {
	trimmed := bytes.TrimSpace(raw)
	return len(trimmed) > 0 && trimmed[0] == '{'
}

// checkSKU validates a SKU value: 1-100 characters, no surrounding spaces.
func checkSKU(c *Checker, field, sku string) {
	if strings.TrimSpace(sku) != sku {
		c.Add(field, "invalid", "must not start or end with spaces")
		return
	}
	c.Text(field, sku, 1, maxSKULength)
}

// CreateProduct is the JSON body handleCreateProduct reads (api/catalog_products.go).
type CreateProduct struct {
	Name        string          `json:"name"`
	Handle      *string         `json:"handle"`
	Description string          `json:"description"`
	SKU         *string         `json:"sku"`
	Price       *int64          `json:"price"`
	CostPrice   *int64          `json:"cost_price"`
	Status      *string         `json:"status"`
	Quantity    int             `json:"quantity"`
	CategoryID  *string         `json:"category_id"`
	Attributes  json.RawMessage `json:"attributes"`
	// Kind is standard (default) or gift_card (§19); Value is a gift card
	// product's default variant's value (default: the price).
	Kind  *string `json:"kind"`
	Value *int64  `json:"value"`
	// TaxClass is standard (default), zero or exempt (decisions §27).
	TaxClass *string `json:"tax_class"`
}

// Valid lists what is wrong with the body, for wire.Decode's 422.
func (req CreateProduct) Valid() []wire.FieldError {
	var c Checker
	if req.TaxClass != nil {
		c.OneOf("tax_class", *req.TaxClass, storage.TaxClasses)
	}
	c.Text("name", req.Name, 1, maxNameLength)
	if req.Handle != nil {
		Handle(&c, *req.Handle)
	}
	c.Text("description", req.Description, 0, maxDescriptionLength)
	if req.SKU != nil {
		checkSKU(&c, "sku", *req.SKU)
	}
	if req.Price == nil {
		c.Add("price", "required", "is required (integer, smallest currency unit)")
	} else {
		c.Amount("price", *req.Price)
	}
	if req.CostPrice != nil {
		c.Amount("cost_price", *req.CostPrice)
	}
	if req.Status != nil {
		c.OneOf("status", *req.Status, storage.ProductStatuses)
	}
	c.MinInt("quantity", int64(req.Quantity), 0)
	if req.CategoryID != nil {
		c.UUID("category_id", *req.CategoryID)
	}
	if req.Attributes != nil && string(req.Attributes) != "null" && !IsJSONObject(req.Attributes) {
		c.Add("attributes", "invalid_type", "must be an object")
	}
	if req.Kind != nil {
		c.OneOf("kind", *req.Kind, storage.ProductKindsMade)
	}
	if req.Value != nil {
		c.Amount("value", *req.Value)
	}
	return c.Result()
}

// UpdateProduct is the JSON body handleUpdateProduct reads (api/catalog_products.go).
type UpdateProduct struct {
	Name        wire.Optional[string]          `json:"name"`
	Handle      wire.Optional[string]          `json:"handle"`
	Description wire.Optional[string]          `json:"description"`
	SKU         wire.Optional[string]          `json:"sku"`
	Price       wire.Optional[int64]           `json:"price"`
	CostPrice   wire.Optional[int64]           `json:"cost_price"`
	Status      wire.Optional[string]          `json:"status"`
	Quantity    wire.Optional[int]             `json:"quantity"`
	CategoryID  wire.Optional[string]          `json:"category_id"`
	Attributes  wire.Optional[json.RawMessage] `json:"attributes"`
	TaxClass    wire.Optional[string]          `json:"tax_class"`
}

// notNull refuses null for a field that cannot be cleared.
func notNull[T any](c *Checker, field string, o wire.Optional[T]) bool {
	if o.Null {
		c.Add(field, "required", "cannot be null")
		return false
	}
	return o.Set
}

// Valid lists what is wrong with the body, for wire.Decode's 422.
func (req UpdateProduct) Valid() []wire.FieldError {
	var c Checker
	if notNull(&c, "tax_class", req.TaxClass) {
		c.OneOf("tax_class", req.TaxClass.Value, storage.TaxClasses)
	}
	if notNull(&c, "name", req.Name) {
		c.Text("name", req.Name.Value, 1, maxNameLength)
	}
	if notNull(&c, "handle", req.Handle) {
		Handle(&c, req.Handle.Value)
	}
	if notNull(&c, "description", req.Description) {
		c.Text("description", req.Description.Value, 0, maxDescriptionLength)
	}
	if req.SKU.Set && !req.SKU.Null {
		checkSKU(&c, "sku", req.SKU.Value)
	}
	if notNull(&c, "price", req.Price) {
		c.Amount("price", req.Price.Value)
	}
	if req.CostPrice.Set && !req.CostPrice.Null {
		c.Amount("cost_price", req.CostPrice.Value)
	}
	if notNull(&c, "status", req.Status) {
		c.OneOf("status", req.Status.Value, storage.ProductStatuses)
	}
	if notNull(&c, "quantity", req.Quantity) {
		c.MinInt("quantity", int64(req.Quantity.Value), 0)
	}
	if req.CategoryID.Set && !req.CategoryID.Null {
		c.UUID("category_id", req.CategoryID.Value)
	}
	if req.Attributes.Set && !req.Attributes.Null && !IsJSONObject(req.Attributes.Value) {
		c.Add("attributes", "invalid_type", "must be an object")
	}
	return c.Result()
}

// Update is the change the request makes to the product.
func (req UpdateProduct) Update() storage.ProductUpdate {
	var upd storage.ProductUpdate
	if req.Name.Set {
		name := strings.TrimSpace(req.Name.Value)
		upd.Name = &name
	}
	if req.Handle.Set {
		h, _ := handle.Normalize(req.Handle.Value)
		upd.Handle = &h
	}
	if req.Description.Set {
		upd.Description = &req.Description.Value
	}
	upd.SKU = storage.Field[string](req.SKU)
	if req.Price.Set {
		upd.Price = &req.Price.Value
	}
	upd.CostPrice = storage.Field[int64](req.CostPrice)
	if req.Status.Set {
		upd.Status = &req.Status.Value
	}
	if req.Quantity.Set {
		upd.Quantity = &req.Quantity.Value
	}
	if req.CategoryID.Set {
		upd.CategoryID.Set, upd.CategoryID.Null = true, req.CategoryID.Null
		upd.CategoryID.Value, _ = ParseUUID(req.CategoryID.Value)
	}
	if req.Attributes.Set {
		upd.Attributes = json.RawMessage(`{}`)
		if !req.Attributes.Null {
			upd.Attributes = req.Attributes.Value
		}
	}
	if req.TaxClass.Set {
		upd.TaxClass = &req.TaxClass.Value
	}
	return upd
}
