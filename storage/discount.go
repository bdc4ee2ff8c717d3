package storage

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	sq "github.com/Masterminds/squirrel"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"

	"github.com/merchantsvc/svc/storage/numerals"
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
	s = strings.Map(numerals.ASCIIDigit, s)
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

// DiscountTerms are a discount's writable fields, whole: a create stores
// them, a change (checked whole by the caller) replaces them.
type DiscountTerms struct {
	Code                  *string
	Title                 string
	Type                  string
	Value                 *int64
	MaxDiscount           *int64
	IncludeCODFee         bool
	Scope                 string
	ProductIDs            []uuid.UUID
	CategoryIDs           []uuid.UUID
	MinSubtotal           *int64
	StartsAt, EndsAt      *time.Time
	UsageLimit            *int
	UsageLimitPerCustomer *int
	CombinesWithAutomatic bool
	Enabled               bool
}

// codeAndKey is the code as stored and its normalised key.
func (t DiscountTerms) codeAndKey() (code, key *string) {
	if t.Code == nil {
		return nil, nil
	}
	c := strings.TrimSpace(*t.Code)
	k := NormalizeDiscountCode(c)
	return &c, &k
}

// checkDiscountTargets refuses product and category ids of another store.
func (tx *Tx) checkDiscountTargets(ctx context.Context, storeID uuid.UUID, f DiscountTerms) error {
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
func (tx *Tx) CreateDiscount(ctx context.Context, storeID uuid.UUID, method string, t DiscountTerms) (Discount, error) {
	if err := tx.checkDiscountTargets(ctx, storeID, t); err != nil {
		return Discount{}, err
	}
	code, key := t.codeAndKey()
	id := NewID()
	_, err := tx.tx.Exec(ctx, `INSERT INTO discounts (id, store_id, method, code, code_key, title, type, value, max_discount, include_cod_fee,
			scope, product_ids, category_ids, min_subtotal, starts_at, ends_at, usage_limit, usage_limit_per_customer, combines_with_automatic,
			enabled, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $21)`,
		id, storeID, method, code, key, t.Title, t.Type, t.Value, t.MaxDiscount, t.IncludeCODFee, t.Scope, nonNilIDs(t.ProductIDs),
		nonNilIDs(t.CategoryIDs), t.MinSubtotal, t.StartsAt, t.EndsAt, t.UsageLimit, t.UsageLimitPerCustomer, t.CombinesWithAutomatic,
		t.Enabled, tx.now())
	if isUniqueViolation(err, "discounts_code_key_idx") {
		return Discount{}, ErrDuplicateDiscountCode
	}
	if err != nil {
		return Discount{}, fmt.Errorf("create discount: %w", err)
	}
	return tx.FindDiscount(ctx, storeID, id)
}

// UpdateDiscount replaces a live discount's terms (the method stays).
func (tx *Tx) UpdateDiscount(ctx context.Context, storeID, id uuid.UUID, t DiscountTerms) (Discount, error) {
	if err := tx.checkDiscountTargets(ctx, storeID, t); err != nil {
		return Discount{}, err
	}
	code, key := t.codeAndKey()
	tag, err := tx.tx.Exec(ctx, `UPDATE discounts SET code = $3, code_key = $4, title = $5, type = $6, value = $7, max_discount = $8,
			include_cod_fee = $9, scope = $10, product_ids = $11, category_ids = $12, min_subtotal = $13, starts_at = $14, ends_at = $15,
			usage_limit = $16, usage_limit_per_customer = $17, combines_with_automatic = $18, enabled = $19, updated_at = $20
		WHERE store_id = $1 AND id = $2 AND deleted_at IS NULL`,
		storeID, id, code, key, t.Title, t.Type, t.Value, t.MaxDiscount, t.IncludeCODFee, t.Scope, nonNilIDs(t.ProductIDs),
		nonNilIDs(t.CategoryIDs), t.MinSubtotal, t.StartsAt, t.EndsAt, t.UsageLimit, t.UsageLimitPerCustomer, t.CombinesWithAutomatic,
		t.Enabled, tx.now())
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

// LockDiscount reads a live discount and locks its row until the
// transaction ends, so a change checked against its times_used is not
// overtaken by an order counting a use meanwhile (the count waits, then
// checks the changed limit).
func (tx *Tx) LockDiscount(ctx context.Context, storeID, id uuid.UUID) (Discount, error) {
	d, err := scanDiscount(tx.tx.QueryRow(ctx, `SELECT `+discountColumns+` FROM discounts WHERE store_id = $1 AND id = $2 AND deleted_at IS NULL FOR UPDATE`,
		storeID, id))
	if err != nil {
		return Discount{}, notFoundIfNoRows(err, "lock discount "+id.String())
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
	// A deleted discount's history stays readable.
	var exists bool
	if err := r.q.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM discounts WHERE store_id = $1 AND id = $2)`, storeID, discountID).Scan(&exists); err != nil {
		return nil, 0, fmt.Errorf("find discount: %w", err)
	}
	if !exists {
		return nil, 0, fmt.Errorf("find discount %s: %w", discountID, ErrNotFound)
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

// ErrDiscountUsageLimitReached is a discount whose limit (overall or the
// customer's) was reached by the time the order counted it.
var ErrDiscountUsageLimitReached = errors.New("discount usage limit reached")

// DiscountNotApplicableError is a code whose conditions fail on the order.
type DiscountNotApplicableError struct {
	Reason           string
	RequiredSubtotal *int64
}

func (e *DiscountNotApplicableError) Error() string { return "discount not applicable: " + e.Reason }

// unusableReason is why a discount of this status cannot be used at all
// ("" when it can): a disabled one reads as not found.
func unusableReason(status string) string {
	switch status {
	case DiscountDisabled:
		return "not_found"
	case DiscountScheduled:
		return "not_started"
	case DiscountExpired:
		return "expired"
	case DiscountExhausted:
		return "usage_limit_reached"
	}
	return ""
}

var unusableMessages = map[string]string{"not_found": "is not a discount code of the store", "not_started": "cannot be used yet",
	"expired": "has expired", "usage_limit_reached": "has been used as often as it may"}

// liveCode finds the code asked for; a code that cannot be used at all is
// a 422 on discount_code (§14).
func (r reader) liveCode(ctx context.Context, storeID uuid.UUID, code string) (Discount, error) {
	found, _, err := r.liveDiscounts(ctx, storeID, &code, false)
	return found, err
}

// liveDiscounts reads, in one query, the code asked for (a 422 on
// discount_code when it cannot be used at all) and, when automatic is set,
// the store's active automatic discounts.
func (r reader) liveDiscounts(ctx context.Context, storeID uuid.UUID, code *string, automatic bool) (Discount, []DiscountRule, error) {
	key := ""
	if code != nil {
		key = NormalizeDiscountCode(*code)
	}
	rows, err := r.q.Query(ctx, `SELECT `+discountColumns+` FROM discounts
		WHERE store_id = $1 AND deleted_at IS NULL AND (code_key = $2
			OR ($3 AND method = 'automatic' AND `+discountStatusSQL+` = 'active'))`, storeID, key, automatic)
	if err != nil {
		return Discount{}, nil, fmt.Errorf("find discounts: %w", err)
	}
	list, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (Discount, error) { return scanDiscount(row) })
	if err != nil {
		return Discount{}, nil, fmt.Errorf("find discounts: %w", err)
	}
	var (
		found Discount
		rules []DiscountRule
	)
	for _, d := range list {
		if d.Method == DiscountMethodAutomatic {
			rules = append(rules, d.DiscountRule)
		} else {
			found = d
		}
	}
	if code == nil {
		return Discount{}, rules, nil
	}
	if found.ID == uuid.Nil {
		return Discount{}, nil, &InvalidError{Field: "discount_code", Code: "not_found", Message: unusableMessages["not_found"]}
	}
	if reason := unusableReason(found.Status); reason != "" {
		return Discount{}, nil, &InvalidError{Field: "discount_code", Code: reason, Message: unusableMessages[reason]}
	}
	return found, rules, nil
}

// customerReachedLimit reports whether the customer used the code as often
// as it allows.
func (r reader) customerReachedLimit(ctx context.Context, d Discount, customerID *uuid.UUID) (bool, error) {
	if d.UsageLimitPerCustomer == nil || customerID == nil {
		return false, nil
	}
	var used int
	err := r.q.QueryRow(ctx, `SELECT times_used FROM discount_customer_usage WHERE discount_id = $1 AND customer_id = $2`,
		d.ID, *customerID).Scan(&used)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("read customer usage: %w", err)
	}
	return used >= *d.UsageLimitPerCustomer, nil
}

// productCategories maps each product to its category and the category's
// ancestors, for category-scoped discounts.
func (r reader) productCategories(ctx context.Context, storeID uuid.UUID, products []uuid.UUID) (map[uuid.UUID][]uuid.UUID, error) {
	rows, err := r.q.Query(ctx, `WITH RECURSIVE up (product_id, category_id) AS (
			SELECT p.id, p.category_id FROM products p WHERE p.store_id = $1 AND p.id = ANY($2) AND p.category_id IS NOT NULL
			UNION
			SELECT up.product_id, c.parent_id FROM up JOIN categories c ON c.store_id = $1 AND c.id = up.category_id WHERE c.parent_id IS NOT NULL)
		SELECT product_id, category_id FROM up`, storeID, products)
	if err != nil {
		return nil, fmt.Errorf("find product categories: %w", err)
	}
	out := map[uuid.UUID][]uuid.UUID{}
	var product, category uuid.UUID
	_, err = pgx.ForEachRow(rows, []any{&product, &category}, func() error {
		out[product] = append(out[product], category)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("find product categories: %w", err)
	}
	return out, nil
}

// countDiscounts counts the order's code and automatic discounts, in id
// order, each with one conditional statement (and the customer's with one
// conditional upsert), and records the redemptions. A limit reached by
// then is ErrDiscountUsageLimitReached: the caller's transaction rolls back.
func (tx *Tx) countDiscounts(ctx context.Context, o Order, limits map[uuid.UUID]*int) error {
	applied := make([]AppliedDiscount, 0, len(o.Discounts))
	for _, d := range o.Discounts {
		if d.DiscountID != nil {
			applied = append(applied, d)
		}
	}
	slices.SortFunc(applied, func(a, b AppliedDiscount) int { return bytes.Compare(a.DiscountID[:], b.DiscountID[:]) })
	for _, d := range applied {
		// Check and increment are one statement; the redemption is written
		// by the same one, only when the count was taken.
		tag, err := tx.tx.Exec(ctx, `WITH counted AS (
				UPDATE discounts SET times_used = times_used + 1
				WHERE store_id = $1 AND id = $2 AND (usage_limit IS NULL OR times_used < usage_limit) RETURNING id)
			INSERT INTO discount_redemptions (id, store_id, discount_id, order_id, customer_id, amount, created_at)
			SELECT $3, $1, id, $4, $5, $6, $7 FROM counted`,
			o.StoreID, *d.DiscountID, NewID(), o.ID, o.CustomerID, d.Amount+d.ShippingAmount, tx.now())
		if err != nil {
			return fmt.Errorf("count discount: %w", err)
		}
		if tag.RowsAffected() == 0 {
			return ErrDiscountUsageLimitReached
		}
		if limit := limits[*d.DiscountID]; limit != nil && o.CustomerID != nil {
			var counted bool
			err := tx.tx.QueryRow(ctx, `INSERT INTO discount_customer_usage (store_id, discount_id, customer_id, times_used) VALUES ($1, $2, $3, 1)
				ON CONFLICT (discount_id, customer_id) DO UPDATE SET times_used = discount_customer_usage.times_used + 1
				WHERE discount_customer_usage.times_used < $4
				RETURNING true`, o.StoreID, *d.DiscountID, *o.CustomerID, *limit).Scan(&counted)
			if errors.Is(err, pgx.ErrNoRows) {
				return ErrDiscountUsageLimitReached
			}
			if err != nil {
				return fmt.Errorf("count customer discount: %w", err)
			}
		}
	}
	return nil
}

// releaseDiscounts gives back a cancelled order's usages, once: only
// redemptions still counted are released.
func (tx *Tx) releaseDiscounts(ctx context.Context, o Order) error {
	rows, err := tx.tx.Query(ctx, `UPDATE discount_redemptions SET status = 'released', released_at = $3
		WHERE store_id = $1 AND order_id = $2 AND status = 'counted' RETURNING discount_id, customer_id`, o.StoreID, o.ID, tx.now())
	if err != nil {
		return fmt.Errorf("release discounts: %w", err)
	}
	type usage struct {
		discount uuid.UUID
		customer *uuid.UUID
	}
	released, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (usage, error) {
		var u usage
		return u, row.Scan(&u.discount, &u.customer)
	})
	if err != nil {
		return fmt.Errorf("release discounts: %w", err)
	}
	for _, u := range released {
		if _, err := tx.tx.Exec(ctx, `UPDATE discounts SET times_used = GREATEST(times_used - 1, 0) WHERE store_id = $1 AND id = $2`,
			o.StoreID, u.discount); err != nil {
			return fmt.Errorf("release discount: %w", err)
		}
		if u.customer != nil {
			if _, err := tx.tx.Exec(ctx, `UPDATE discount_customer_usage SET times_used = GREATEST(times_used - 1, 0)
				WHERE discount_id = $1 AND customer_id = $2`, u.discount, *u.customer); err != nil {
				return fmt.Errorf("release customer discount: %w", err)
			}
		}
	}
	return nil
}

// recheckDiscounts checks, at a draft's conversion, that the discounts it
// was priced with can still be used; the draft keeps its price. It returns
// their per-customer limits, for countDiscounts.
func (tx *Tx) recheckDiscounts(ctx context.Context, o Order) (map[uuid.UUID]*int, error) {
	limits := map[uuid.UUID]*int{}
	for _, applied := range o.Discounts {
		if applied.DiscountID == nil {
			continue
		}
		d, err := tx.FindDiscount(ctx, o.StoreID, *applied.DiscountID)
		if errors.Is(err, ErrNotFound) {
			return nil, &DiscountNotApplicableError{Reason: "not_found"}
		}
		if err != nil {
			return nil, err
		}
		if reason := unusableReason(d.Status); reason != "" {
			return nil, &DiscountNotApplicableError{Reason: reason}
		}
		reached, err := tx.customerReachedLimit(ctx, d, o.CustomerID)
		if err != nil {
			return nil, err
		}
		if reached {
			return nil, &DiscountNotApplicableError{Reason: ReasonCustomerLimitReached}
		}
		limits[d.ID] = d.UsageLimitPerCustomer
	}
	return limits, nil
}
