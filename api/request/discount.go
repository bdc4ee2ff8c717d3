package request

import (
	"regexp"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/merchantsvc/svc/api/wire"
	"github.com/merchantsvc/svc/storage"
)

var (
	// DiscountMethods are the ways a discount applies.
	DiscountMethods = []string{storage.DiscountMethodCode, storage.DiscountMethodAutomatic}
	discountTypes   = []string{storage.DiscountPercentage, storage.DiscountFixedAmount, storage.DiscountFreeShipping}
	discountScopes  = []string{"order", "products", "categories"}
	// discountCodePattern is 1-32 letters (any script), digits, - and _.
	discountCodePattern = regexp.MustCompile(`^[\p{L}\p{Nd}_-]{1,32}$`)
)

// DiscountAppliesTo is what a discount applies to, as a request names it.
type DiscountAppliesTo struct {
	Scope       string      `json:"scope"`
	ProductIDs  []uuid.UUID `json:"product_ids,omitempty"`
	CategoryIDs []uuid.UUID `json:"category_ids,omitempty"`
}

// DiscountState is a discount as it would be after a create or a change;
// §14's rules are checked on it whole.
type DiscountState struct {
	Method                string
	Code                  *string
	Title                 string
	Type                  string
	Value                 *int64
	MaxDiscount           *int64
	IncludeCODFee         *bool
	AppliesTo             DiscountAppliesTo
	MinSubtotal           *int64
	StartsAt, EndsAt      *time.Time
	UsageLimit            *int
	UsageLimitPerCustomer *int
	CombinesWithAutomatic bool
	Enabled               bool
}

// Check adds what is wrong with the discount, once timesUsed orders used it.
func (d DiscountState) Check(c *Checker, timesUsed int) {
	c.OneOf("method", d.Method, DiscountMethods)
	switch {
	case d.Method == storage.DiscountMethodCode && d.Code == nil:
		c.Add("code", "required", "is required for a code discount")
	case d.Method == storage.DiscountMethodAutomatic && d.Code != nil:
		c.Add("code", "not_allowed", "must be absent for an automatic discount")
	case d.Code != nil && !discountCodePattern.MatchString(strings.TrimSpace(*d.Code)):
		c.Add("code", "invalid", "must be 1-32 letters, digits, - or _")
	}
	c.Text("title", d.Title, 1, 200)
	c.OneOf("type", d.Type, discountTypes)
	switch d.Type {
	case storage.DiscountPercentage:
		if d.Value == nil {
			c.Add("value", "required", "is required")
		} else {
			c.IntRange("value", *d.Value, 1, 100)
		}
	case storage.DiscountFixedAmount:
		if d.Value == nil {
			c.Add("value", "required", "is required")
		} else {
			c.IntRange("value", *d.Value, 1, storage.MaxAmount)
		}
	case storage.DiscountFreeShipping:
		if d.Value != nil {
			c.Add("value", "not_allowed", "must be absent for free shipping")
		}
		if d.Method != storage.DiscountMethodCode {
			c.Add("type", "not_allowed", "free shipping is a code; automatic free shipping is a rate's free_above_subtotal")
		}
		if d.AppliesTo.Scope != "order" {
			c.Add("applies_to.scope", "not_allowed", "free shipping applies to the whole order")
		}
	}
	if d.MaxDiscount != nil {
		if d.Type != storage.DiscountPercentage {
			c.Add("max_discount", "not_allowed", "only a percentage takes a max_discount")
		} else {
			c.IntRange("max_discount", *d.MaxDiscount, 1, storage.MaxAmount)
		}
	}
	if d.IncludeCODFee != nil && *d.IncludeCODFee && d.Type != storage.DiscountFreeShipping {
		c.Add("include_cod_fee", "not_allowed", "only free shipping may include the COD fee")
	}
	c.OneOf("applies_to.scope", d.AppliesTo.Scope, discountScopes)
	checkIDs := func(field string, ids []uuid.UUID, wanted bool) {
		switch {
		case !wanted && len(ids) > 0:
			c.Add(field, "not_allowed", "must be absent for this scope")
		case wanted && (len(ids) < 1 || len(ids) > 500):
			c.Add(field, "out_of_range", "must list 1 to 500 ids")
		}
	}
	checkIDs("applies_to.product_ids", d.AppliesTo.ProductIDs, d.AppliesTo.Scope == "products")
	checkIDs("applies_to.category_ids", d.AppliesTo.CategoryIDs, d.AppliesTo.Scope == "categories")
	if d.MinSubtotal != nil {
		c.IntRange("min_subtotal", *d.MinSubtotal, 1, storage.MaxAmount)
	}
	if d.StartsAt != nil && d.EndsAt != nil && !d.EndsAt.After(*d.StartsAt) {
		c.Add("ends_at", "out_of_range", "must be after starts_at")
	}
	if d.UsageLimit != nil {
		c.IntRange("usage_limit", int64(*d.UsageLimit), max(int64(timesUsed), 1), 1_000_000_000)
	}
	if d.UsageLimitPerCustomer != nil {
		if d.Method != storage.DiscountMethodCode {
			c.Add("usage_limit_per_customer", "not_allowed", "only a code has a per-customer limit")
		} else {
			c.IntRange("usage_limit_per_customer", int64(*d.UsageLimitPerCustomer), 1, 1_000_000_000)
		}
	}
}

// Terms is the state to store, whole.
func (d DiscountState) Terms() storage.DiscountTerms {
	return storage.DiscountTerms{Code: d.Code, Title: strings.TrimSpace(d.Title), Type: d.Type, Value: d.Value, MaxDiscount: d.MaxDiscount,
		IncludeCODFee: d.IncludeCODFee != nil && *d.IncludeCODFee, Scope: d.AppliesTo.Scope, ProductIDs: d.AppliesTo.ProductIDs,
		CategoryIDs: d.AppliesTo.CategoryIDs, MinSubtotal: d.MinSubtotal, StartsAt: d.StartsAt, EndsAt: d.EndsAt, UsageLimit: d.UsageLimit,
		UsageLimitPerCustomer: d.UsageLimitPerCustomer, CombinesWithAutomatic: d.CombinesWithAutomatic, Enabled: d.Enabled}
}

// CreateDiscount is the JSON body handleCreateDiscount reads (api/discount.go).
type CreateDiscount struct {
	Method                string             `json:"method"`
	Code                  *string            `json:"code"`
	Title                 string             `json:"title"`
	Type                  string             `json:"type"`
	Value                 *int64             `json:"value"`
	MaxDiscount           *int64             `json:"max_discount"`
	IncludeCODFee         *bool              `json:"include_cod_fee"`
	AppliesTo             *DiscountAppliesTo `json:"applies_to"`
	MinSubtotal           *int64             `json:"min_subtotal"`
	StartsAt              *time.Time         `json:"starts_at"`
	EndsAt                *time.Time         `json:"ends_at"`
	UsageLimit            *int               `json:"usage_limit"`
	UsageLimitPerCustomer *int               `json:"usage_limit_per_customer"`
	CombinesWithAutomatic *bool              `json:"combines_with_automatic"`
	Enabled               *bool              `json:"enabled"`
}

// State is the discount the request creates.
func (req CreateDiscount) State() DiscountState {
	d := DiscountState{Method: req.Method, Code: req.Code, Title: req.Title, Type: req.Type, Value: req.Value, MaxDiscount: req.MaxDiscount,
		IncludeCODFee: req.IncludeCODFee, AppliesTo: DiscountAppliesTo{Scope: "order"}, MinSubtotal: req.MinSubtotal, StartsAt: req.StartsAt,
		EndsAt: req.EndsAt, UsageLimit: req.UsageLimit, UsageLimitPerCustomer: req.UsageLimitPerCustomer, CombinesWithAutomatic: true, Enabled: true}
	if req.AppliesTo != nil {
		d.AppliesTo = *req.AppliesTo
	}
	if req.CombinesWithAutomatic != nil {
		d.CombinesWithAutomatic = *req.CombinesWithAutomatic
	}
	if req.Enabled != nil {
		d.Enabled = *req.Enabled
	}
	return d
}

// Valid lists what is wrong with the body, for wire.Decode's 422.
func (req CreateDiscount) Valid() []wire.FieldError {
	var c Checker
	req.State().Check(&c, 0)
	return c.Result()
}

// UpdateDiscount is the JSON body handleUpdateDiscount reads (api/discount.go).
type UpdateDiscount struct {
	Method                wire.Optional[string]            `json:"method"`
	Code                  wire.Optional[string]            `json:"code"`
	Title                 wire.Optional[string]            `json:"title"`
	Type                  wire.Optional[string]            `json:"type"`
	Value                 wire.Optional[int64]             `json:"value"`
	MaxDiscount           wire.Optional[int64]             `json:"max_discount"`
	IncludeCODFee         wire.Optional[bool]              `json:"include_cod_fee"`
	AppliesTo             wire.Optional[DiscountAppliesTo] `json:"applies_to"`
	MinSubtotal           wire.Optional[int64]             `json:"min_subtotal"`
	StartsAt              wire.Optional[time.Time]         `json:"starts_at"`
	EndsAt                wire.Optional[time.Time]         `json:"ends_at"`
	UsageLimit            wire.Optional[int]               `json:"usage_limit"`
	UsageLimitPerCustomer wire.Optional[int]               `json:"usage_limit_per_customer"`
	CombinesWithAutomatic wire.Optional[bool]              `json:"combines_with_automatic"`
	Enabled               wire.Optional[bool]              `json:"enabled"`
}

// Valid checks the fields that may not be null; the rest is checked on
// the discount as it would become.
func (req UpdateDiscount) Valid() []wire.FieldError {
	var c Checker
	notNull(&c, "method", req.Method)
	notNull(&c, "title", req.Title)
	notNull(&c, "type", req.Type)
	notNull(&c, "applies_to", req.AppliesTo)
	notNull(&c, "combines_with_automatic", req.CombinesWithAutomatic)
	notNull(&c, "enabled", req.Enabled)
	return c.Result()
}

// SetOptional writes a PATCH field onto dst when the body sent it (null clears it).
func SetOptional[T any](dst **T, o wire.Optional[T]) {
	switch {
	case o.Null:
		*dst = nil
	case o.Set:
		*dst = &o.Value
	}
}

// Apply is the stored discount with the request's changes.
func (req UpdateDiscount) Apply(d DiscountState) DiscountState {
	SetOptional(&d.Code, req.Code)
	if req.Title.Set {
		d.Title = req.Title.Value
	}
	if req.Type.Set {
		d.Type = req.Type.Value
	}
	SetOptional(&d.Value, req.Value)
	SetOptional(&d.MaxDiscount, req.MaxDiscount)
	SetOptional(&d.IncludeCODFee, req.IncludeCODFee)
	if req.AppliesTo.Set {
		d.AppliesTo = req.AppliesTo.Value
	}
	SetOptional(&d.MinSubtotal, req.MinSubtotal)
	SetOptional(&d.StartsAt, req.StartsAt)
	SetOptional(&d.EndsAt, req.EndsAt)
	SetOptional(&d.UsageLimit, req.UsageLimit)
	SetOptional(&d.UsageLimitPerCustomer, req.UsageLimitPerCustomer)
	if req.CombinesWithAutomatic.Set {
		d.CombinesWithAutomatic = req.CombinesWithAutomatic.Value
	}
	if req.Enabled.Set {
		d.Enabled = req.Enabled.Value
	}
	return d
}
