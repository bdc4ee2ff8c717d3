package storage

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	sq "github.com/Masterminds/squirrel"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"
)

// Discounts (decisions §14): codes and automatic offers.

// ErrDuplicateDiscountCode is a live discount of the store with the same
// normalised code.
var ErrDuplicateDiscountCode = errors.New("duplicate discount code")

// Discount statuses, derived from the discount and the clock.
const (
	DiscountScheduled = "scheduled"
	DiscountActive    = "active"
	DiscountExpired   = "expired"
	DiscountExhausted = "exhausted"
	DiscountDisabled  = "disabled"
)

// DiscountStatuses lists every status a discount list filters on.
var DiscountStatuses = []string{DiscountScheduled, DiscountActive, DiscountExpired, DiscountExhausted, DiscountDisabled}

// Discount is a stored discount.
type Discount struct {
	DiscountRule
	StoreID               uuid.UUID
	StartsAt, EndsAt      *time.Time
	UsageLimit            *int
	UsageLimitPerCustomer *int
	Enabled               bool
	TimesUsed             int
	Status                string
	UpdatedAt             time.Time
}

var foldCase = cases.Fold()

// NormalizeDiscountCode is how codes compare: trimmed, NFKC (which also
// turns Arabic-Indic digits into ASCII ones), case-folded.
func NormalizeDiscountCode(code string) string {
	s := norm.NFKC.String(strings.TrimSpace(code))
	s = strings.Map(func(r rune) rune {
		switch {
		case r >= '٠' && r <= '٩':
			return '0' + (r - '٠')
		case r >= '۰' && r <= '۹':
			return '0' + (r - '۰')
		}
		return r
	}, s)
	return foldCase.String(s)
}

const discountColumns = `id, store_id, method, code, title, type, COALESCE(value, 0), max_discount, include_cod_fee, scope, product_ids,
	category_ids, min_subtotal, starts_at, ends_at, usage_limit, usage_limit_per_customer, combines_with_automatic, enabled, times_used,
	created_at, updated_at, ` + discountStatusSQL

// discountStatusSQL derives a discount's status at now() ($1 is never
// used for it: the database clock is the one every reader shares).
const discountStatusSQL = `CASE WHEN NOT enabled THEN 'disabled'
	WHEN ends_at IS NOT NULL AND ends_at <= now() THEN 'expired'
	WHEN usage_limit IS NOT NULL AND times_used >= usage_limit THEN 'exhausted'
	WHEN starts_at IS NOT NULL AND starts_at > now() THEN 'scheduled'
	ELSE 'active' END`

func scanDiscount(row pgx.Row) (Discount, error) {
	var (
		d    Discount
		code *string
	)
	err := row.Scan(&d.ID, &d.StoreID, &d.Method, &code, &d.Title, &d.Type, &d.Value, &d.MaxDiscount, &d.IncludeCODFee, &d.Scope,
		&d.ProductIDs, &d.CategoryIDs, &d.MinSubtotal, &d.StartsAt, &d.EndsAt, &d.UsageLimit, &d.UsageLimitPerCustomer,
		&d.CombinesWithAutomatic, &d.Enabled, &d.TimesUsed, &d.CreatedAt, &d.UpdatedAt, &d.Status)
	if code != nil {
		d.Code = *code
	}
	return d, err
}

// DiscountFields are a discount's writable fields; nil leaves a field as
// it is on update (Clear* empties an optional one).
type DiscountFields struct {
	Code                  *string
	Title                 *string
	Type                  *string
	Value                 *int64
	MaxDiscount           *int64
	IncludeCODFee         *bool
	Scope                 *string
	ProductIDs            []uuid.UUID
	CategoryIDs           []uuid.UUID
	MinSubtotal           *int64
	StartsAt, EndsAt      *time.Time
	UsageLimit            *int
	UsageLimitPerCustomer *int
	CombinesWithAutomatic *bool
	Enabled               *bool
	// Clear names optional fields set to null.
	Clear []string
}

// checkDiscountTargets refuses product and category ids of another store.
func (tx *Tx) checkDiscountTargets(ctx context.Context, storeID uuid.UUID, f DiscountFields) error {
	for _, t := range []struct {
		table, field string
		ids          []uuid.UUID
	}{{"products", "applies_to.product_ids", f.ProductIDs}, {"categories", "applies_to.category_ids", f.CategoryIDs}} {
		if len(t.ids) == 0 {
			continue
		}
		rows, err := tx.tx.Query(ctx, `SELECT i.ord - 1 FROM unnest($2::uuid[]) WITH ORDINALITY AS i (id, ord)
			WHERE NOT EXISTS (SELECT 1 FROM `+t.table+` x WHERE x.store_id = $1 AND x.id = i.id) ORDER BY i.ord LIMIT 1`, storeID, t.ids)
		if err != nil {
			return fmt.Errorf("check discount targets: %w", err)
		}
		missing, err := pgx.CollectRows(rows, pgx.RowTo[int64])
		if err != nil {
			return fmt.Errorf("check discount targets: %w", err)
		}
		if len(missing) > 0 {
			return &InvalidError{Field: fmt.Sprintf("%s[%d]", t.field, missing[0]), Code: "not_found", Message: "is not one of the store's"}
		}
	}
	return nil
}

// CreateDiscount stores a new discount.
func (tx *Tx) CreateDiscount(ctx context.Context, storeID uuid.UUID, method string, f DiscountFields) (Discount, error) {
	if err := tx.checkDiscountTargets(ctx, storeID, f); err != nil {
		return Discount{}, err
	}
	var code, key *string
	if f.Code != nil {
		c := strings.TrimSpace(*f.Code)
		k := NormalizeDiscountCode(c)
		code, key = &c, &k
	}
	now := tx.now()
	id := NewID()
	_, err := tx.tx.Exec(ctx, `INSERT INTO discounts (id, store_id, method, code, code_key, title, type, value, max_discount, include_cod_fee,
			scope, product_ids, category_ids, min_subtotal, starts_at, ends_at, usage_limit, usage_limit_per_customer, combines_with_automatic,
			enabled, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $21)`,
		id, storeID, method, code, key, deref(f.Title), deref(f.Type), f.Value, f.MaxDiscount, f.IncludeCODFee != nil && *f.IncludeCODFee,
		cmpOrString(f.Scope, "order"), nonNilIDs(f.ProductIDs), nonNilIDs(f.CategoryIDs), f.MinSubtotal, f.StartsAt, f.EndsAt, f.UsageLimit,
		f.UsageLimitPerCustomer, f.CombinesWithAutomatic == nil || *f.CombinesWithAutomatic, f.Enabled == nil || *f.Enabled, now)
	if isUniqueViolation(err, "discounts_code_key_idx") {
		return Discount{}, ErrDuplicateDiscountCode
	}
	if err != nil {
		return Discount{}, fmt.Errorf("create discount: %w", err)
	}
	return tx.FindDiscount(ctx, storeID, id)
}

// UpdateDiscount changes the fields given; the caller has checked the
// result against §14's rules with the stored discount (ValidDiscount).
func (tx *Tx) UpdateDiscount(ctx context.Context, storeID, id uuid.UUID, f DiscountFields) (Discount, error) {
	if err := tx.checkDiscountTargets(ctx, storeID, f); err != nil {
		return Discount{}, err
	}
	set := sq.Eq{"updated_at": tx.now()}
	if f.Code != nil {
		c := strings.TrimSpace(*f.Code)
		set["code"], set["code_key"] = c, NormalizeDiscountCode(c)
	}
	for name, v := range map[string]any{"title": f.Title, "type": f.Type, "value": f.Value, "max_discount": f.MaxDiscount,
		"include_cod_fee": f.IncludeCODFee, "scope": f.Scope, "min_subtotal": f.MinSubtotal, "starts_at": f.StartsAt, "ends_at": f.EndsAt,
		"usage_limit": f.UsageLimit, "usage_limit_per_customer": f.UsageLimitPerCustomer, "combines_with_automatic": f.CombinesWithAutomatic,
		"enabled": f.Enabled} {
		if !isNilPointer(v) {
			set[name] = v
		}
	}
	if f.ProductIDs != nil {
		set["product_ids"] = f.ProductIDs
	}
	if f.CategoryIDs != nil {
		set["category_ids"] = f.CategoryIDs
	}
	for _, c := range f.Clear {
		set[c] = nil
	}
	sql, args, err := psql.Update("discounts").SetMap(set).
		Where(sq.Eq{"store_id": storeID, "id": id}).Where("deleted_at IS NULL").ToSql()
	if err != nil {
		return Discount{}, err
	}
	tag, err := tx.tx.Exec(ctx, sql, args...)
	if isUniqueViolation(err, "discounts_code_key_idx") {
		return Discount{}, ErrDuplicateDiscountCode
	}
	if err != nil {
		return Discount{}, fmt.Errorf("update discount: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return Discount{}, fmt.Errorf("update discount %s: %w", id, ErrNotFound)
	}
	return tx.FindDiscount(ctx, storeID, id)
}

// DeleteDiscount removes a discount softly: its redemptions stay, its code
// is free for a new discount.
func (tx *Tx) DeleteDiscount(ctx context.Context, storeID, id uuid.UUID) error {
	tag, err := tx.tx.Exec(ctx, `UPDATE discounts SET deleted_at = $3, updated_at = $3 WHERE store_id = $1 AND id = $2 AND deleted_at IS NULL`,
		storeID, id, tx.now())
	if err != nil {
		return fmt.Errorf("delete discount: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("delete discount %s: %w", id, ErrNotFound)
	}
	return nil
}

// FindDiscount reads a live discount.
func (r reader) FindDiscount(ctx context.Context, storeID, id uuid.UUID) (Discount, error) {
	d, err := scanDiscount(r.q.QueryRow(ctx, `SELECT `+discountColumns+` FROM discounts WHERE store_id = $1 AND id = $2 AND deleted_at IS NULL`,
		storeID, id))
	if err != nil {
		return Discount{}, notFoundIfNoRows(err, "find discount "+id.String())
	}
	return d, nil
}

// DiscountFilter narrows a discount list.
type DiscountFilter struct {
	Method, Status, Code, Search *string
	Page                         Page
}

// FindDiscounts lists a store's live discounts, newest first.
func (r reader) FindDiscounts(ctx context.Context, storeID uuid.UUID, f DiscountFilter) ([]Discount, int, error) {
	where := sq.And{sq.Eq{"store_id": storeID}, sq.Expr("deleted_at IS NULL")}
	if f.Method != nil {
		where = append(where, sq.Eq{"method": *f.Method})
	}
	if f.Status != nil {
		where = append(where, sq.Expr(discountStatusSQL+" = ?", *f.Status))
	}
	if f.Code != nil {
		where = append(where, sq.Eq{"code_key": NormalizeDiscountCode(*f.Code)})
	}
	if f.Search != nil {
		like := "%" + strings.NewReplacer(`\`, `\\`, "%", `\%`, "_", `\_`).Replace(strings.ToLower(*f.Search)) + "%"
		where = append(where, sq.Or{sq.Expr("lower(title) LIKE ?", like), sq.Expr("code_key LIKE ?", like)})
	}
	cond, args, err := dollarSQL(where)
	if err != nil {
		return nil, 0, err
	}
	return findPage(ctx, r, "discounts", listQuery{columns: discountColumns, from: "FROM discounts WHERE " + cond, args: args,
		orderBy: "created_at DESC, id DESC"}, f.Page.Limit, int(f.Page.Offset()), func(row pgx.CollectableRow) (Discount, error) { return scanDiscount(row) })
}

// Redemption is one order's use of a discount.
type Redemption struct {
	OrderID     uuid.UUID
	OrderNumber string
	CustomerID  *uuid.UUID
	Amount      int64
	Status      string
	CreatedAt   time.Time
}

// FindRedemptions lists a discount's redemptions, newest first.
func (r reader) FindRedemptions(ctx context.Context, storeID, discountID uuid.UUID, page Page) ([]Redemption, int, error) {
	if _, err := r.FindDiscount(ctx, storeID, discountID); err != nil {
		var deleted bool
		if qerr := r.q.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM discounts WHERE store_id = $1 AND id = $2)`, storeID, discountID).Scan(&deleted); qerr != nil || !deleted {
			return nil, 0, err
		}
	}
	return findPage(ctx, r, "redemptions", listQuery{columns: `d.order_id, o.order_number, d.customer_id, d.amount, d.status, d.created_at`,
		from: `FROM discount_redemptions d JOIN orders o ON o.store_id = d.store_id AND o.id = d.order_id
			WHERE d.store_id = $1 AND d.discount_id = $2`, args: []any{storeID, discountID}, orderBy: "d.created_at DESC, d.id DESC"},
		page.Limit, int(page.Offset()), func(row pgx.CollectableRow) (Redemption, error) {
			var x Redemption
			return x, row.Scan(&x.OrderID, &x.OrderNumber, &x.CustomerID, &x.Amount, &x.Status, &x.CreatedAt)
		})
}

func nonNilIDs(ids []uuid.UUID) []uuid.UUID {
	if ids == nil {
		return []uuid.UUID{}
	}
	return ids
}

func cmpOrString(s *string, fallback string) string {
	if s == nil || *s == "" {
		return fallback
	}
	return *s
}

func isNilPointer(v any) bool {
	switch p := v.(type) {
	case *string:
		return p == nil
	case *int64:
		return p == nil
	case *int:
		return p == nil
	case *bool:
		return p == nil
	case *time.Time:
		return p == nil
	}
	return v == nil
}
