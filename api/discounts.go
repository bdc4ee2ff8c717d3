package api

import (
	"errors"
	"net/http"
	"regexp"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/merchantsvc/svc/storage"
)

// Discounts (decisions §14): codes and automatic offers.

var errDiscountUsageLimitReached = newError(http.StatusConflict, "DISCOUNT_USAGE_LIMIT_REACHED",
	"The discount was used as often as it may while the order was placed; nothing was written",
	"استُخدم الخصم بالحد الأقصى المسموح أثناء إنشاء الطلب؛ لم يُحفظ شيء")

// discountErrors turns the discount refusals into their 409s.
func discountErrors(err error) *apiError {
	var notApplicable *storage.DiscountNotApplicableError
	switch {
	case errors.As(err, &notApplicable):
		return &apiError{Status: http.StatusConflict, Code: "DISCOUNT_NOT_APPLICABLE",
			Message:   "The discount code does not apply to this order: " + notApplicable.Reason,
			MessageAr: "رمز الخصم لا ينطبق على هذا الطلب: " + notApplicable.Reason,
			Reason:    notApplicable.Reason, RequiredSubtotal: notApplicable.RequiredSubtotal}
	case errors.Is(err, storage.ErrDiscountUsageLimitReached):
		return errDiscountUsageLimitReached
	case errors.Is(err, storage.ErrDuplicateDiscountCode):
		return errDuplicateDiscountCode
	case errors.Is(err, storage.ErrCartTotalChanged):
		return errCartTotalChanged
	}
	return nil
}

var errCartTotalChanged = newError(http.StatusConflict, "CART_TOTAL_CHANGED",
	"The cart's total is not the one you were shown; here is the cart as it is now", "تغيّر إجمالي السلة عمّا عُرض عليك؛ هذه هي السلة الآن")

var errDuplicateDiscountCode = newError(http.StatusConflict, "DUPLICATE_DISCOUNT_CODE",
	"A live discount of the store already has this code", "يوجد خصم فعّال في المتجر بالرمز نفسه")

var (
	discountMethods = []string{storage.DiscountMethodCode, storage.DiscountMethodAutomatic}
	discountTypes   = []string{storage.DiscountPercentage, storage.DiscountFixedAmount, storage.DiscountFreeShipping}
	discountScopes  = []string{"order", "products", "categories"}
	// discountCodePattern is 1-32 letters (any script), digits, - and _.
	discountCodePattern = regexp.MustCompile(`^[\p{L}\p{Nd}_-]{1,32}$`)
)

type discountAppliesTo struct {
	Scope       string      `json:"scope"`
	ProductIDs  []uuid.UUID `json:"product_ids,omitempty"`
	CategoryIDs []uuid.UUID `json:"category_ids,omitempty"`
}

// discountState is a discount as it would be after a create or a change;
// §14's rules are checked on it whole.
type discountState struct {
	Method                string
	Code                  *string
	Title                 string
	Type                  string
	Value                 *int64
	MaxDiscount           *int64
	IncludeCODFee         *bool
	AppliesTo             discountAppliesTo
	MinSubtotal           *int64
	StartsAt, EndsAt      *time.Time
	UsageLimit            *int
	UsageLimitPerCustomer *int
	CombinesWithAutomatic bool
	Enabled               bool
}

func (d discountState) check(c *checker, timesUsed int) {
	c.oneOf("method", d.Method, discountMethods)
	switch {
	case d.Method == storage.DiscountMethodCode && d.Code == nil:
		c.add("code", "required", "is required for a code discount")
	case d.Method == storage.DiscountMethodAutomatic && d.Code != nil:
		c.add("code", "not_allowed", "must be absent for an automatic discount")
	case d.Code != nil && !discountCodePattern.MatchString(strings.TrimSpace(*d.Code)):
		c.add("code", "invalid", "must be 1-32 letters, digits, - or _")
	}
	c.text("title", d.Title, 1, 200)
	c.oneOf("type", d.Type, discountTypes)
	switch d.Type {
	case storage.DiscountPercentage:
		if d.Value == nil {
			c.add("value", "required", "is required")
		} else {
			c.intRange("value", *d.Value, 1, 100)
		}
	case storage.DiscountFixedAmount:
		if d.Value == nil {
			c.add("value", "required", "is required")
		} else {
			c.intRange("value", *d.Value, 1, storage.MaxAmount)
		}
	case storage.DiscountFreeShipping:
		if d.Value != nil {
			c.add("value", "not_allowed", "must be absent for free shipping")
		}
		if d.Method != storage.DiscountMethodCode {
			c.add("type", "not_allowed", "free shipping is a code; automatic free shipping is a rate's free_above_subtotal")
		}
		if d.AppliesTo.Scope != "order" {
			c.add("applies_to.scope", "not_allowed", "free shipping applies to the whole order")
		}
	}
	if d.MaxDiscount != nil {
		if d.Type != storage.DiscountPercentage {
			c.add("max_discount", "not_allowed", "only a percentage takes a max_discount")
		} else {
			c.intRange("max_discount", *d.MaxDiscount, 1, storage.MaxAmount)
		}
	}
	if d.IncludeCODFee != nil && *d.IncludeCODFee && d.Type != storage.DiscountFreeShipping {
		c.add("include_cod_fee", "not_allowed", "only free shipping may include the COD fee")
	}
	c.oneOf("applies_to.scope", d.AppliesTo.Scope, discountScopes)
	checkIDs := func(field string, ids []uuid.UUID, wanted bool) {
		switch {
		case !wanted && len(ids) > 0:
			c.add(field, "not_allowed", "must be absent for this scope")
		case wanted && (len(ids) < 1 || len(ids) > 500):
			c.add(field, "out_of_range", "must list 1 to 500 ids")
		}
	}
	checkIDs("applies_to.product_ids", d.AppliesTo.ProductIDs, d.AppliesTo.Scope == "products")
	checkIDs("applies_to.category_ids", d.AppliesTo.CategoryIDs, d.AppliesTo.Scope == "categories")
	if d.MinSubtotal != nil {
		c.intRange("min_subtotal", *d.MinSubtotal, 1, storage.MaxAmount)
	}
	if d.StartsAt != nil && d.EndsAt != nil && !d.EndsAt.After(*d.StartsAt) {
		c.add("ends_at", "out_of_range", "must be after starts_at")
	}
	if d.UsageLimit != nil {
		c.intRange("usage_limit", int64(*d.UsageLimit), max(int64(timesUsed), 1), 1_000_000_000)
	}
	if d.UsageLimitPerCustomer != nil {
		if d.Method != storage.DiscountMethodCode {
			c.add("usage_limit_per_customer", "not_allowed", "only a code has a per-customer limit")
		} else {
			c.intRange("usage_limit_per_customer", int64(*d.UsageLimitPerCustomer), 1, 1_000_000_000)
		}
	}
}

// terms is the state to store, whole.
func (d discountState) terms() storage.DiscountTerms {
	return storage.DiscountTerms{Code: d.Code, Title: strings.TrimSpace(d.Title), Type: d.Type, Value: d.Value, MaxDiscount: d.MaxDiscount,
		IncludeCODFee: d.IncludeCODFee != nil && *d.IncludeCODFee, Scope: d.AppliesTo.Scope, ProductIDs: d.AppliesTo.ProductIDs,
		CategoryIDs: d.AppliesTo.CategoryIDs, MinSubtotal: d.MinSubtotal, StartsAt: d.StartsAt, EndsAt: d.EndsAt, UsageLimit: d.UsageLimit,
		UsageLimitPerCustomer: d.UsageLimitPerCustomer, CombinesWithAutomatic: d.CombinesWithAutomatic, Enabled: d.Enabled}
}

type createDiscountRequest struct {
	Method                string             `json:"method"`
	Code                  *string            `json:"code"`
	Title                 string             `json:"title"`
	Type                  string             `json:"type"`
	Value                 *int64             `json:"value"`
	MaxDiscount           *int64             `json:"max_discount"`
	IncludeCODFee         *bool              `json:"include_cod_fee"`
	AppliesTo             *discountAppliesTo `json:"applies_to"`
	MinSubtotal           *int64             `json:"min_subtotal"`
	StartsAt              *time.Time         `json:"starts_at"`
	EndsAt                *time.Time         `json:"ends_at"`
	UsageLimit            *int               `json:"usage_limit"`
	UsageLimitPerCustomer *int               `json:"usage_limit_per_customer"`
	CombinesWithAutomatic *bool              `json:"combines_with_automatic"`
	Enabled               *bool              `json:"enabled"`
}

func (req createDiscountRequest) state() discountState {
	d := discountState{Method: req.Method, Code: req.Code, Title: req.Title, Type: req.Type, Value: req.Value, MaxDiscount: req.MaxDiscount,
		IncludeCODFee: req.IncludeCODFee, AppliesTo: discountAppliesTo{Scope: "order"}, MinSubtotal: req.MinSubtotal, StartsAt: req.StartsAt,
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

func (req createDiscountRequest) Valid() []fieldError {
	var c checker
	req.state().check(&c, 0)
	return c.result()
}

type discountResponse struct {
	ID                    uuid.UUID         `json:"id"`
	Method                string            `json:"method"`
	Code                  *string           `json:"code"`
	Title                 string            `json:"title"`
	Type                  string            `json:"type"`
	Value                 *int64            `json:"value"`
	MaxDiscount           *int64            `json:"max_discount"`
	IncludeCODFee         bool              `json:"include_cod_fee"`
	AppliesTo             discountAppliesTo `json:"applies_to"`
	MinSubtotal           *int64            `json:"min_subtotal"`
	StartsAt              *time.Time        `json:"starts_at"`
	EndsAt                *time.Time        `json:"ends_at"`
	UsageLimit            *int              `json:"usage_limit"`
	UsageLimitPerCustomer *int              `json:"usage_limit_per_customer"`
	CombinesWithAutomatic bool              `json:"combines_with_automatic"`
	Enabled               bool              `json:"enabled"`
	Status                string            `json:"status"`
	TimesUsed             int               `json:"times_used"`
	CreatedAt             time.Time         `json:"created_at"`
	UpdatedAt             time.Time         `json:"updated_at"`
}

func newDiscountResponse(d storage.Discount) discountResponse {
	out := discountResponse{ID: d.ID, Method: d.Method, Title: d.Title, Type: d.Type, MaxDiscount: d.MaxDiscount, IncludeCODFee: d.IncludeCODFee,
		AppliesTo: discountAppliesTo{Scope: d.Scope}, MinSubtotal: d.MinSubtotal, StartsAt: utcPtr(d.StartsAt), EndsAt: utcPtr(d.EndsAt),
		UsageLimit: d.UsageLimit, UsageLimitPerCustomer: d.UsageLimitPerCustomer, CombinesWithAutomatic: d.CombinesWithAutomatic,
		Enabled: d.Enabled, Status: d.Status, TimesUsed: d.TimesUsed, CreatedAt: d.CreatedAt.UTC(), UpdatedAt: d.UpdatedAt.UTC()}
	if d.Method == storage.DiscountMethodCode {
		out.Code = &d.Code
	}
	if d.Type != storage.DiscountFreeShipping {
		out.Value = &d.Value
	}
	if len(d.ProductIDs) > 0 {
		out.AppliesTo.ProductIDs = d.ProductIDs
	}
	if len(d.CategoryIDs) > 0 {
		out.AppliesTo.CategoryIDs = d.CategoryIDs
	}
	return out
}

func (d discountResponse) state() discountState {
	return discountState{Method: d.Method, Code: d.Code, Title: d.Title, Type: d.Type, Value: d.Value, MaxDiscount: d.MaxDiscount,
		IncludeCODFee: &d.IncludeCODFee, AppliesTo: d.AppliesTo, MinSubtotal: d.MinSubtotal, StartsAt: d.StartsAt, EndsAt: d.EndsAt,
		UsageLimit: d.UsageLimit, UsageLimitPerCustomer: d.UsageLimitPerCustomer, CombinesWithAutomatic: d.CombinesWithAutomatic,
		Enabled: d.Enabled}
}

// handleCreateDiscount serves POST /stores/{store_id}/discounts.
func (s *Server) handleCreateDiscount() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		req, err := decode[createDiscountRequest](r)
		if err != nil {
			return err
		}
		return writeView(s, w, r, http.StatusCreated, newDiscountResponse, func(tx *storage.Tx) (storage.Discount, error) {
			return tx.CreateDiscount(r.Context(), storeIDFrom(r.Context()), req.Method, req.state().terms())
		})
	}
}

// handleListDiscounts serves GET /stores/{store_id}/discounts.
func (s *Server) handleListDiscounts() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		q := newQueryParser(r)
		page, limit := q.page(20)
		f := storage.DiscountFilter{Page: storage.Page{Page: page, Limit: limit}, Code: q.str("code"), Search: q.str("search")}
		if m := q.enum("method", discountMethods, ""); m != "" {
			f.Method = &m
		}
		if st := q.enum("status", storage.DiscountStatuses, ""); st != "" {
			f.Status = &st
		}
		if err := q.err(); err != nil {
			return err
		}
		list, total, err := s.db.FindDiscounts(r.Context(), storeIDFrom(r.Context()), f)
		if err != nil {
			return err
		}
		items := make([]discountResponse, 0, len(list))
		for _, d := range list {
			items = append(items, newDiscountResponse(d))
		}
		respond(w, http.StatusOK, newList(items, page, limit, total))
		return nil
	}
}

// handleGetDiscount serves GET /stores/{store_id}/discounts/{discount_id}.
func (s *Server) handleGetDiscount() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		id, err := pathUUID(r, "discount_id")
		if err != nil {
			return err
		}
		d, err := s.db.FindDiscount(r.Context(), storeIDFrom(r.Context()), id)
		if err != nil {
			return err
		}
		respond(w, http.StatusOK, newDiscountResponse(d))
		return nil
	}
}

type updateDiscountRequest struct {
	Method                optional[string]            `json:"method"`
	Code                  optional[string]            `json:"code"`
	Title                 optional[string]            `json:"title"`
	Type                  optional[string]            `json:"type"`
	Value                 optional[int64]             `json:"value"`
	MaxDiscount           optional[int64]             `json:"max_discount"`
	IncludeCODFee         optional[bool]              `json:"include_cod_fee"`
	AppliesTo             optional[discountAppliesTo] `json:"applies_to"`
	MinSubtotal           optional[int64]             `json:"min_subtotal"`
	StartsAt              optional[time.Time]         `json:"starts_at"`
	EndsAt                optional[time.Time]         `json:"ends_at"`
	UsageLimit            optional[int]               `json:"usage_limit"`
	UsageLimitPerCustomer optional[int]               `json:"usage_limit_per_customer"`
	CombinesWithAutomatic optional[bool]              `json:"combines_with_automatic"`
	Enabled               optional[bool]              `json:"enabled"`
}

// Valid checks the fields that may not be null; the rest is checked on
// the discount as it would become.
func (req updateDiscountRequest) Valid() []fieldError {
	var c checker
	notNull(&c, "method", req.Method)
	notNull(&c, "title", req.Title)
	notNull(&c, "type", req.Type)
	notNull(&c, "applies_to", req.AppliesTo)
	notNull(&c, "combines_with_automatic", req.CombinesWithAutomatic)
	notNull(&c, "enabled", req.Enabled)
	return c.result()
}

func setOptional[T any](dst **T, o optional[T]) {
	switch {
	case o.Null:
		*dst = nil
	case o.Set:
		*dst = &o.Value
	}
}

// apply is the stored discount with the request's changes.
func (req updateDiscountRequest) apply(d discountState) discountState {
	setOptional(&d.Code, req.Code)
	if req.Title.Set {
		d.Title = req.Title.Value
	}
	if req.Type.Set {
		d.Type = req.Type.Value
	}
	setOptional(&d.Value, req.Value)
	setOptional(&d.MaxDiscount, req.MaxDiscount)
	setOptional(&d.IncludeCODFee, req.IncludeCODFee)
	if req.AppliesTo.Set {
		d.AppliesTo = req.AppliesTo.Value
	}
	setOptional(&d.MinSubtotal, req.MinSubtotal)
	setOptional(&d.StartsAt, req.StartsAt)
	setOptional(&d.EndsAt, req.EndsAt)
	setOptional(&d.UsageLimit, req.UsageLimit)
	setOptional(&d.UsageLimitPerCustomer, req.UsageLimitPerCustomer)
	if req.CombinesWithAutomatic.Set {
		d.CombinesWithAutomatic = req.CombinesWithAutomatic.Value
	}
	if req.Enabled.Set {
		d.Enabled = req.Enabled.Value
	}
	return d
}

// handleUpdateDiscount serves PATCH /stores/{store_id}/discounts/{discount_id}:
// the discount as it would become is checked whole; method is immutable.
func (s *Server) handleUpdateDiscount() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		id, err := pathUUID(r, "discount_id")
		if err != nil {
			return err
		}
		req, err := decode[updateDiscountRequest](r)
		if err != nil {
			return err
		}
		storeID := storeIDFrom(r.Context())
		return writeView(s, w, r, http.StatusOK, newDiscountResponse, func(tx *storage.Tx) (storage.Discount, error) {
			// Locked: the checks below hold against times_used at commit.
			current, err := tx.LockDiscount(r.Context(), storeID, id)
			if err != nil {
				return storage.Discount{}, err
			}
			before := newDiscountResponse(current)
			auditBefore(r.Context(), before)
			next := req.apply(before.state())
			var c checker
			if req.Method.Set && req.Method.Value != current.Method {
				c.add("method", "immutable", "cannot change; create a new discount")
			}
			next.check(&c, current.TimesUsed)
			if fields := c.result(); len(fields) > 0 {
				return storage.Discount{}, validationError(fields)
			}
			return tx.UpdateDiscount(r.Context(), storeID, id, next.terms())
		})
	}
}

// handleDeleteDiscount serves DELETE /stores/{store_id}/discounts/{discount_id}.
func (s *Server) handleDeleteDiscount() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		id, err := pathUUID(r, "discount_id")
		if err != nil {
			return err
		}
		return s.writeTx(w, r, http.StatusNoContent, func(tx *storage.Tx) (any, error) {
			return nil, tx.DeleteDiscount(r.Context(), storeIDFrom(r.Context()), id)
		})
	}
}

type redemptionResponse struct {
	OrderID     uuid.UUID  `json:"order_id"`
	OrderNumber string     `json:"order_number"`
	CustomerID  *uuid.UUID `json:"customer_id"`
	Amount      int64      `json:"amount"`
	Status      string     `json:"status"`
	CreatedAt   time.Time  `json:"created_at"`
}

// handleListRedemptions serves GET /stores/{store_id}/discounts/{discount_id}/redemptions.
func (s *Server) handleListRedemptions() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		id, err := pathUUID(r, "discount_id")
		if err != nil {
			return err
		}
		q := newQueryParser(r)
		page, limit := q.page(20)
		if err := q.err(); err != nil {
			return err
		}
		list, total, err := s.db.FindRedemptions(r.Context(), storeIDFrom(r.Context()), id, storage.Page{Page: page, Limit: limit})
		if err != nil {
			return err
		}
		items := make([]redemptionResponse, 0, len(list))
		for _, x := range list {
			items = append(items, redemptionResponse{OrderID: x.OrderID, OrderNumber: x.OrderNumber, CustomerID: x.CustomerID, Amount: x.Amount,
				Status: x.Status, CreatedAt: x.CreatedAt.UTC()})
		}
		respond(w, http.StatusOK, newList(items, page, limit, total))
		return nil
	}
}
