package api

import (
	"errors"
	"net/http"
	"time"

	"github.com/google/uuid"

	"github.com/merchantsvc/svc/api/request"
	"github.com/merchantsvc/svc/api/wire"
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

type discountResponse struct {
	ID                    uuid.UUID                 `json:"id"`
	Method                string                    `json:"method"`
	Code                  *string                   `json:"code"`
	Title                 string                    `json:"title"`
	Type                  string                    `json:"type"`
	Value                 *int64                    `json:"value"`
	MaxDiscount           *int64                    `json:"max_discount"`
	IncludeCODFee         bool                      `json:"include_cod_fee"`
	AppliesTo             request.DiscountAppliesTo `json:"applies_to"`
	MinSubtotal           *int64                    `json:"min_subtotal"`
	StartsAt              *time.Time                `json:"starts_at"`
	EndsAt                *time.Time                `json:"ends_at"`
	UsageLimit            *int                      `json:"usage_limit"`
	UsageLimitPerCustomer *int                      `json:"usage_limit_per_customer"`
	CombinesWithAutomatic bool                      `json:"combines_with_automatic"`
	Enabled               bool                      `json:"enabled"`
	Status                string                    `json:"status"`
	TimesUsed             int                       `json:"times_used"`
	CreatedAt             time.Time                 `json:"created_at"`
	UpdatedAt             time.Time                 `json:"updated_at"`
}

func newDiscountResponse(d storage.Discount) discountResponse {
	out := discountResponse{ID: d.ID, Method: d.Method, Title: d.Title, Type: d.Type, MaxDiscount: d.MaxDiscount, IncludeCODFee: d.IncludeCODFee,
		AppliesTo: request.DiscountAppliesTo{Scope: d.Scope}, MinSubtotal: d.MinSubtotal, StartsAt: utcPtr(d.StartsAt), EndsAt: utcPtr(d.EndsAt),
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

func (d discountResponse) state() request.DiscountState {
	return request.DiscountState{Method: d.Method, Code: d.Code, Title: d.Title, Type: d.Type, Value: d.Value, MaxDiscount: d.MaxDiscount,
		IncludeCODFee: &d.IncludeCODFee, AppliesTo: d.AppliesTo, MinSubtotal: d.MinSubtotal, StartsAt: d.StartsAt, EndsAt: d.EndsAt,
		UsageLimit: d.UsageLimit, UsageLimitPerCustomer: d.UsageLimitPerCustomer, CombinesWithAutomatic: d.CombinesWithAutomatic,
		Enabled: d.Enabled}
}

// handleCreateDiscount serves POST /stores/{store_id}/discounts.
func (s *Server) handleCreateDiscount() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		req, err := wire.Decode[request.CreateDiscount](r)
		if err != nil {
			return err
		}
		return writeView(s, w, r, http.StatusCreated, newDiscountResponse, func(tx *storage.Tx) (storage.Discount, error) {
			return tx.CreateDiscount(r.Context(), storeIDFrom(r.Context()), req.Method, req.State().Terms())
		})
	}
}

// handleListDiscounts serves GET /stores/{store_id}/discounts.
func (s *Server) handleListDiscounts() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		q := newQueryParser(r)
		page, limit := q.page(20)
		f := storage.DiscountFilter{Page: storage.Page{Page: page, Limit: limit}, Code: q.str("code"), Search: q.str("search")}
		if m := q.enum("method", request.DiscountMethods, ""); m != "" {
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
		respond(w, http.StatusOK, newList(views(list, newDiscountResponse), page, limit, total))
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

// handleUpdateDiscount serves PATCH /stores/{store_id}/discounts/{discount_id}:
// the discount as it would become is checked whole; method is immutable.
func (s *Server) handleUpdateDiscount() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		id, err := pathUUID(r, "discount_id")
		if err != nil {
			return err
		}
		req, err := wire.Decode[request.UpdateDiscount](r)
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
			next := req.Apply(before.state())
			var c request.Checker
			if req.Method.Set && req.Method.Value != current.Method {
				c.Add("method", "immutable", "cannot change; create a new discount")
			}
			next.Check(&c, current.TimesUsed)
			if fields := c.Result(); len(fields) > 0 {
				return storage.Discount{}, validationError(fields)
			}
			return tx.UpdateDiscount(r.Context(), storeID, id, next.Terms())
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
