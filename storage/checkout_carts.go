package storage

import (
	"cmp"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// Cart refusals.
var (
	ErrCartCheckedOut       = errors.New("cart already checked out")
	ErrCheckoutNotAbandoned = errors.New("checkout not abandoned")
	// ErrCartTotalChanged is a checkout whose total is not the one the
	// buyer was shown (expected_total).
	ErrCartTotalChanged = errors.New("cart total changed")
)

// CartStatus is where a cart is: active until checkout; abandoned when inactive for the
// threshold; recovered when an abandoned cart is checked out or marked so;
// checked_out when an active cart becomes an order.
type CartStatus string

// Cart statuses.
const (
	CartActive     CartStatus = "active"
	CartAbandoned  CartStatus = "abandoned"
	CartRecovered  CartStatus = "recovered"
	CartCheckedOut CartStatus = "checked_out"
)

// Abandonment threshold bounds (spec §8).
const (
	MinAbandonmentMinutes     = 5
	MaxAbandonmentMinutes     = 2880
	DefaultAbandonmentMinutes = 60
)

// Cart is a storefront cart; as an abandoned checkout it keeps its id.
type Cart struct {
	ID                  uuid.UUID
	StoreID             uuid.UUID
	Currency            string
	Status              CartStatus
	Email               *string
	Phone               *string
	Subtotal            int64
	ItemCount           int
	LastActivityAt      time.Time
	AbandonedAt         *time.Time
	RecoveredAt         *time.Time
	RecoverySource      *string
	RecoveryNote        *string
	RecoveryEmailSentAt *time.Time
	OrderID             *uuid.UUID
	CheckedOutAt        *time.Time
	CreatedAt           time.Time
	UpdatedAt           time.Time
	Lines               []CartLine
	// What the buyer prices the cart with (§14, §15).
	DiscountCode   *string
	ShipTo         *ShipTo
	ShippingRateID *uuid.UUID
	PaymentMethod  *string
	// GiftCardIDs are the cards the buyer applied, in the order given
	// (§19): their ids, never their codes.
	GiftCardIDs []uuid.UUID
	// Price is the cart priced on this read (PriceCart); carts are never
	// priced from stored totals.
	Price CartPrice
}

// CartLine is a variant in a cart at its current price.
type CartLine struct {
	VariantID uuid.UUID
	ProductID uuid.UUID
	Name      string
	SKU       *string
	Options   json.RawMessage
	UnitPrice int64
	Quantity  int
	Total     int64
	Grams     int // the line's weight: the variant's, else the product's, else 0, times the quantity
	// Recipient is whom a gift card line's cards are for (§19).
	Recipient *GiftCardRecipient
}

const cartColumns = `id, store_id, currency, status, email, phone, subtotal, item_count, last_activity_at, abandoned_at, recovered_at,
	recovery_source, recovery_note, recovery_email_sent_at, order_id, checked_out_at, created_at, updated_at,
	discount_code, ship_to, shipping_rate_id, payment_method, gift_card_ids`

func scanCart(row pgx.Row) (Cart, error) {
	var c Cart
	err := row.Scan(&c.ID, &c.StoreID, &c.Currency, &c.Status, &c.Email, &c.Phone, &c.Subtotal, &c.ItemCount, &c.LastActivityAt,
		&c.AbandonedAt, &c.RecoveredAt, &c.RecoverySource, &c.RecoveryNote, &c.RecoveryEmailSentAt, &c.OrderID, &c.CheckedOutAt,
		&c.CreatedAt, &c.UpdatedAt, &c.DiscountCode, &c.ShipTo, &c.ShippingRateID, &c.PaymentMethod, &c.GiftCardIDs)
	return c, err
}

func hashToken(token string) []byte {
	sum := sha256.Sum256([]byte(token))
	return sum[:]
}

// IssueCartToken mints a key to a cart: the buyer's at creation, or one for
// a recovery email's link. Only its hash is kept.
func (tx *Tx) IssueCartToken(ctx context.Context, storeID, cartID uuid.UUID, kind string) (string, error) {
	secret := make([]byte, 32)
	if _, err := rand.Read(secret); err != nil {
		return "", err
	}
	token := "svc_ct_" + base64.RawURLEncoding.EncodeToString(secret)
	if _, err := tx.tx.Exec(ctx, `INSERT INTO cart_tokens (token_hash, store_id, cart_id, kind, created_at) VALUES ($1, $2, $3, $4, $5)`,
		hashToken(token), storeID, cartID, kind, tx.now()); err != nil {
		return "", fmt.Errorf("issue cart token: %w", err)
	}
	return token, nil
}

// CartTokenValid reports whether token opens the store's cart.
func (r reader) CartTokenValid(ctx context.Context, storeID, cartID uuid.UUID, token string) (bool, error) {
	var ok bool
	err := r.q.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM cart_tokens WHERE token_hash = $1 AND store_id = $2 AND cart_id = $3)`,
		hashToken(token), storeID, cartID).Scan(&ok)
	if err != nil {
		return false, fmt.Errorf("check cart token: %w", err)
	}
	return ok, nil
}

// CreateCart opens an empty cart in the store's currency and returns the
// buyer's token.
func (tx *Tx) CreateCart(ctx context.Context, storeID uuid.UUID) (Cart, string, error) {
	now := tx.now()
	c, err := scanCart(tx.tx.QueryRow(ctx, `INSERT INTO carts (id, store_id, currency, last_activity_at, created_at, updated_at)
		SELECT $1, id, currency, $3, $3, $3 FROM stores WHERE id = $2 RETURNING `+cartColumns, NewID(), storeID, now))
	if err != nil {
		return Cart{}, "", notFoundIfNoRows(err, "create cart")
	}
	token, err := tx.IssueCartToken(ctx, storeID, c.ID, "buyer")
	if err != nil {
		return Cart{}, "", err
	}
	c.Lines = []CartLine{}
	return c, token, nil
}

// FindCart reads a cart with its lines at current prices (not priced:
// FindPricedCart).
func (r reader) FindCart(ctx context.Context, storeID, cartID uuid.UUID) (Cart, error) {
	c, err := scanCart(r.q.QueryRow(ctx, `SELECT `+cartColumns+` FROM carts WHERE store_id = $1 AND id = $2`, storeID, cartID))
	if err != nil {
		return Cart{}, notFoundIfNoRows(err, "find cart "+cartID.String())
	}
	if c.Lines, err = r.cartLines(ctx, storeID, cartID); err != nil {
		return Cart{}, err
	}
	return c, nil
}

// FindPricedCart reads a cart priced as its buyer sees it: open, by
// PriceCart with its own terms; checked out, at its order's prices.
func (r reader) FindPricedCart(ctx context.Context, storeID, cartID uuid.UUID) (Cart, error) {
	c, err := r.FindCart(ctx, storeID, cartID)
	if err != nil {
		return Cart{}, err
	}
	if c.CheckedOutAt != nil && c.OrderID != nil {
		return c, r.orderPrice(ctx, &c)
	}
	return c, r.PriceCart(ctx, &c, c.Terms())
}

// orderPrice shows a checked-out cart at the prices of the order it
// became (its lines are gone).
func (r reader) orderPrice(ctx context.Context, c *Cart) error {
	var lines []ShippingLine
	p := &c.Price
	err := r.q.QueryRow(ctx, `SELECT subtotal, shipping_fee, discount, total, discounts, shipping_lines FROM orders WHERE store_id = $1 AND id = $2`,
		c.StoreID, *c.OrderID).Scan(&p.Subtotal, &p.ShippingFee, &p.Discount, &p.Total, &p.Discounts, &lines)
	if err != nil {
		return notFoundIfNoRows(err, "find the cart's order")
	}
	if p.GiftCards, err = r.orderGiftCards(ctx, c.StoreID, *c.OrderID); err != nil {
		return err
	}
	p.AmountDue = p.Total - SumApplied(p.GiftCards)
	p.Shipping = ShippingChoice{Status: ShippingNotRequired, Options: []RateOption{}}
	if len(lines) > 0 {
		p.Shipping.Status, p.Shipping.ZoneID = ShippingQuoted, &lines[0].ZoneID
		p.Shipping.Rate = &ShippingRate{ID: lines[0].RateID, ZoneID: lines[0].ZoneID, Name: lines[0].Name}
	}
	return nil
}

func (r reader) cartLines(ctx context.Context, storeID, cartID uuid.UUID) ([]CartLine, error) {
	rows, err := r.q.Query(ctx, `SELECT l.variant_id, v.product_id, p.name, COALESCE(v.sku, p.sku), v.options, v.price, l.quantity, v.price * l.quantity,
			COALESCE(v.weight_grams, p.weight_grams, 0) * l.quantity, l.recipient
		FROM cart_lines l
		JOIN variants v ON v.store_id = l.store_id AND v.id = l.variant_id
		JOIN products p ON p.store_id = v.store_id AND p.id = v.product_id
		WHERE l.store_id = $1 AND l.cart_id = $2 ORDER BY l.position`, storeID, cartID)
	if err != nil {
		return nil, fmt.Errorf("find cart lines: %w", err)
	}
	return pgx.CollectRows(rows, pgx.RowToStructByPos[CartLine])
}

// CartUpdate replaces a cart's lines and sets its contact details and
// what it is priced with.
type CartUpdate struct {
	Lines          []NewOrderLine // nil leaves them
	Email          Field[string]
	Phone          Field[string]
	DiscountCode   Field[string]
	ShipTo         Field[ShipTo]
	ShippingRateID Field[uuid.UUID]
	PaymentMethod  Field[string]
	// GiftCardIDs replaces the cart's cards (null removes them); the
	// caller found each by its code and checked it usable.
	GiftCardIDs Field[[]uuid.UUID]
}

func (tx *Tx) lockCart(ctx context.Context, storeID, cartID uuid.UUID) (Cart, error) {
	c, err := scanCart(tx.tx.QueryRow(ctx, `SELECT `+cartColumns+` FROM carts WHERE store_id = $1 AND id = $2 FOR UPDATE`, storeID, cartID))
	if err != nil {
		return Cart{}, notFoundIfNoRows(err, "find cart "+cartID.String())
	}
	return c, nil
}

// UpdateCart replaces the lines (each variant must be the store's, of an
// active product, and in stock for the quantity) and the contact details,
// and counts as activity. A checked-out cart refuses.
func (tx *Tx) UpdateCart(ctx context.Context, storeID, cartID uuid.UUID, upd CartUpdate) (Cart, error) {
	c, err := tx.lockCart(ctx, storeID, cartID)
	if err != nil {
		return Cart{}, err
	}
	if c.CheckedOutAt != nil {
		return Cart{}, ErrCartCheckedOut
	}
	if upd.Lines != nil {
		if err := tx.checkCartQuantities(ctx, storeID, upd.Lines); err != nil {
			return Cart{}, err
		}
		if _, err := tx.tx.Exec(ctx, `DELETE FROM cart_lines WHERE store_id = $1 AND cart_id = $2`, storeID, cartID); err != nil {
			return Cart{}, fmt.Errorf("replace cart lines: %w", err)
		}
		for i, l := range upd.Lines {
			var (
				stock        int
				status, kind string
			)
			err := tx.tx.QueryRow(ctx, `SELECT v.quantity, p.status, p.kind FROM variants v
				JOIN products p ON p.store_id = v.store_id AND p.id = v.product_id
				WHERE v.store_id = $1 AND v.id = $2`, storeID, l.VariantID).Scan(&stock, &status, &kind)
			if errors.Is(err, pgx.ErrNoRows) || (err == nil && status != "active") {
				return Cart{}, &InvalidError{Field: fmt.Sprintf("lines[%d].variant_id", i), Code: "not_found", Message: "no such variant for sale in this store"}
			}
			if err != nil {
				return Cart{}, fmt.Errorf("check cart variant: %w", err)
			}
			if l.Quantity > stock && kind != ProductKindGiftCard { // a gift card is never out of stock (§19)
				return Cart{}, &StockError{Line: i, VariantID: l.VariantID, Available: max(stock, 0), Requested: l.Quantity}
			}
			if l.Recipient != nil && kind != ProductKindGiftCard {
				return Cart{}, errRecipientNotAllowed(i)
			}
			if _, err := tx.tx.Exec(ctx, `INSERT INTO cart_lines (store_id, cart_id, variant_id, quantity, position, recipient)
				VALUES ($1, $2, $3, $4, $5, $6)`, storeID, cartID, l.VariantID, l.Quantity, i+1, l.Recipient); err != nil {
				return Cart{}, fmt.Errorf("add cart line: %w", err)
			}
		}
	}
	if upd.Email.Set {
		c.Email = upd.Email.ptr()
	}
	if upd.Phone.Set {
		c.Phone = upd.Phone.ptr()
	}
	if upd.DiscountCode.Set {
		c.DiscountCode = nil
		if !upd.DiscountCode.Null {
			// A code that cannot be used is refused (422) and the cart left
			// unchanged; a live one is kept as the store spells it.
			d, err := tx.liveCode(ctx, storeID, upd.DiscountCode.Value)
			if err != nil {
				return Cart{}, err
			}
			c.DiscountCode = &d.Code
		}
	}
	if upd.ShipTo.Set {
		c.ShipTo = upd.ShipTo.ptr()
	}
	if upd.ShippingRateID.Set {
		c.ShippingRateID = upd.ShippingRateID.ptr()
	}
	if upd.PaymentMethod.Set {
		c.PaymentMethod = upd.PaymentMethod.ptr()
	}
	if c.PaymentMethod != nil && *c.PaymentMethod == "cod" && (upd.PaymentMethod.Set || upd.Lines != nil) {
		if holds, err := tx.CartHoldsGiftCards(ctx, storeID, cartID); err != nil || holds { // §19: no cod for gift cards
			return Cart{}, cmp.Or(err, errGiftCardsNotOnCOD)
		}
	}
	if upd.GiftCardIDs.Set {
		c.GiftCardIDs = nil
		if !upd.GiftCardIDs.Null {
			c.GiftCardIDs = upd.GiftCardIDs.Value
		}
	}
	if c.GiftCardIDs == nil {
		c.GiftCardIDs = []uuid.UUID{}
	}
	if upd.ShippingRateID.Set && c.ShippingRateID != nil {
		var known bool
		if err := tx.tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM shipping_rates WHERE store_id = $1 AND id = $2)`,
			storeID, *c.ShippingRateID).Scan(&known); err != nil {
			return Cart{}, fmt.Errorf("find rate: %w", err)
		}
		if !known {
			return Cart{}, &InvalidError{Field: "shipping_rate_id", Code: "not_found", Message: "is not a shipping rate of the store"}
		}
	}
	now := tx.now()
	c, err = scanCart(tx.tx.QueryRow(ctx, `UPDATE carts SET email = $3, phone = $4, last_activity_at = $5, updated_at = $5,
			discount_code = $6, ship_to = $7, shipping_rate_id = $8, payment_method = $9, gift_card_ids = $10,
			subtotal = COALESCE((SELECT sum(v.price * l.quantity) FROM cart_lines l JOIN variants v ON v.store_id = l.store_id AND v.id = l.variant_id
				WHERE l.store_id = $1 AND l.cart_id = $2), 0),
			item_count = COALESCE((SELECT sum(quantity) FROM cart_lines WHERE store_id = $1 AND cart_id = $2), 0)
		WHERE store_id = $1 AND id = $2 RETURNING `+cartColumns, storeID, cartID, c.Email, c.Phone, now,
		c.DiscountCode, c.ShipTo, c.ShippingRateID, c.PaymentMethod, c.GiftCardIDs))
	if err != nil {
		return Cart{}, fmt.Errorf("update cart: %w", err)
	}
	if c.Lines, err = tx.cartLines(ctx, storeID, cartID); err != nil {
		return Cart{}, err
	}
	if err := tx.PriceCart(ctx, &c, c.Terms()); err != nil {
		return Cart{}, err
	}
	// The rate the buyer just asked for must be offered where the cart goes
	// (the cart is left unchanged otherwise).
	shipping := c.Price.Shipping
	switch {
	case upd.ShippingRateID.Set && c.ShippingRateID != nil && shipping.Refused != "":
		return Cart{}, notOffered(shipping.Refused)
	case upd.PaymentMethod.Set && shipping.Status == ShippingNotDeliverable && shipping.Refused == "payment_method":
		return Cart{}, notOffered(shipping.Refused)
	}
	return c, nil
}

// checkCartQuantities holds a storefront cart to the store's caps: pieces
// per line and pieces in all (422 on the line, or on lines).
func (tx *Tx) checkCartQuantities(ctx context.Context, storeID uuid.UUID, lines []NewOrderLine) error {
	var perLine, perOrder int
	if err := tx.tx.QueryRow(ctx, `SELECT max_line_quantity, max_order_quantity FROM stores WHERE id = $1`, storeID).
		Scan(&perLine, &perOrder); err != nil {
		return notFoundIfNoRows(err, "read cart caps")
	}
	total := 0
	for i, l := range lines {
		if l.Quantity > perLine {
			return &InvalidError{Field: fmt.Sprintf("lines[%d].quantity", i), Code: "too_many",
				Message: fmt.Sprintf("at most %d pieces per line in this store", perLine)}
		}
		total += l.Quantity
	}
	if total > perOrder {
		return &InvalidError{Field: "lines", Code: "too_many", Message: fmt.Sprintf("at most %d pieces per order in this store", perOrder)}
	}
	return nil
}

// finishCart drops a finished cart's lines (its subtotal and item count
// stay), which frees their variants for deletion.
func (tx *Tx) finishCart(ctx context.Context, storeID, cartID uuid.UUID) error {
	if _, err := tx.tx.Exec(ctx, `DELETE FROM cart_lines WHERE store_id = $1 AND cart_id = $2`, storeID, cartID); err != nil {
		return fmt.Errorf("clear cart lines: %w", err)
	}
	return nil
}

// CheckoutCart places the cart's order through the same path as the admin
// create (stock, trust check, order.created, the order-placed workflow),
// repriced in its transaction with the cart's code and the store's
// automatic discounts, shipped by the zone covering in.ShipTo (a code that
// no longer applies is a DiscountNotApplicableError, another total than
// in.ExpectedTotal ErrCartTotalChanged),
// issues the buyer's order token for the payment-proof upload, and closes
// the cart. An abandoned cart becomes recovered (recovery_source "order").
func (tx *Tx) CheckoutCart(ctx context.Context, storeID, cartID uuid.UUID, in NewOrder) (Order, string, Cart, error) {
	c, err := tx.lockCart(ctx, storeID, cartID)
	if err != nil {
		return Order{}, "", Cart{}, err
	}
	if c.CheckedOutAt != nil {
		return Order{}, "", Cart{}, ErrCartCheckedOut
	}
	lines, err := tx.cartLines(ctx, storeID, cartID)
	if err != nil {
		return Order{}, "", Cart{}, err
	}
	if len(lines) == 0 {
		return Order{}, "", Cart{}, &InvalidError{Field: "lines", Code: "required", Message: "the cart is empty"}
	}
	// A product may have been withdrawn since its line was added: checkout
	// sells only what is for sale now.
	var withdrawn *int
	if err := tx.tx.QueryRow(ctx, `SELECT min(l.position) FROM cart_lines l
		JOIN variants v ON v.store_id = l.store_id AND v.id = l.variant_id
		JOIN products p ON p.store_id = v.store_id AND p.id = v.product_id
		WHERE l.store_id = $1 AND l.cart_id = $2 AND p.status <> 'active'`, storeID, cartID).Scan(&withdrawn); err != nil {
		return Order{}, "", Cart{}, fmt.Errorf("check cart products: %w", err)
	}
	if withdrawn != nil {
		return Order{}, "", Cart{}, &InvalidError{Field: fmt.Sprintf("lines[%d].variant_id", *withdrawn-1), Code: "not_found",
			Message: "no longer for sale in this store"}
	}
	in.StoreID, in.Draft = storeID, false
	in.DiscountCode, in.ApplyAutomatic, in.PreferredRateID = c.DiscountCode, true, c.ShippingRateID
	in.GiftCardIDs = c.GiftCardIDs
	in.Lines = make([]NewOrderLine, 0, len(lines))
	for _, l := range lines {
		in.Lines = append(in.Lines, NewOrderLine{VariantID: l.VariantID, Quantity: l.Quantity, Recipient: l.Recipient})
	}
	// The store may have lowered its caps since the cart was filled.
	if err := tx.checkCartQuantities(ctx, storeID, in.Lines); err != nil {
		return Order{}, "", Cart{}, err
	}
	o, err := tx.CreateOrder(ctx, in)
	var invalid *InvalidError
	if errors.As(err, &invalid) && invalid.Field == "discount_code" {
		// The code was usable when the buyer saw the cart.
		err = &DiscountNotApplicableError{Reason: invalid.Code}
	}
	if err != nil {
		return Order{}, "", Cart{}, err
	}
	token, err := tx.IssueOrderToken(ctx, storeID, o.ID)
	if err != nil {
		return Order{}, "", Cart{}, err
	}
	now := tx.now()
	status, recoveredAt, source := CartCheckedOut, c.RecoveredAt, c.RecoverySource
	if c.Status == CartAbandoned {
		order := "order"
		status, recoveredAt, source = CartRecovered, &now, &order
	} else if c.Status == CartRecovered {
		status = CartRecovered
	}
	c, err = scanCart(tx.tx.QueryRow(ctx, `UPDATE carts SET status = $3, recovered_at = $4, recovery_source = $5, order_id = $6,
			checked_out_at = $7, updated_at = $7, last_activity_at = $7
		WHERE store_id = $1 AND id = $2 RETURNING `+cartColumns, storeID, cartID, status, recoveredAt, source, o.ID, now))
	if err != nil {
		return Order{}, "", Cart{}, fmt.Errorf("close cart: %w", err)
	}
	c.Lines = lines
	return o, token, c, tx.finishCart(ctx, storeID, cartID)
}

// MarkCartsAbandoned marks one store's active carts with lines that have
// been inactive for at least threshold (the lazy marking of a list load).
func (tx *Tx) MarkCartsAbandoned(ctx context.Context, storeID uuid.UUID, threshold time.Duration) (int, error) {
	now := tx.now()
	tag, err := tx.tx.Exec(ctx, `UPDATE carts SET status = 'abandoned', abandoned_at = $3, updated_at = $3
		WHERE store_id = $1 AND status = 'active' AND item_count > 0 AND last_activity_at <= $2`, storeID, now.Add(-threshold), now)
	if err != nil {
		return 0, fmt.Errorf("mark carts abandoned: %w", err)
	}
	return int(tag.RowsAffected()), nil
}

// SweepAbandonedCarts marks the inactive carts of every store with the
// store's own threshold. Repeating it changes nothing more; checked-out
// carts are never touched.
func (db *DB) SweepAbandonedCarts(ctx context.Context) (int, error) {
	now := db.now()
	tag, err := db.pool.Exec(ctx, `UPDATE carts c SET status = 'abandoned', abandoned_at = $1::timestamptz, updated_at = $1::timestamptz
		FROM stores s
		WHERE s.id = c.store_id AND c.status = 'active' AND c.item_count > 0
		  AND c.last_activity_at <= $1::timestamptz - make_interval(mins => s.abandonment_threshold_minutes)`, now)
	if err != nil {
		return 0, fmt.Errorf("sweep abandoned carts: %w", err)
	}
	return int(tag.RowsAffected()), nil
}

// CheckoutFilter narrows the abandoned-checkout list.
type CheckoutFilter struct {
	IncludeRecovered bool
	OnlyRecovered    bool
	HasContact       *bool
	Page             Page
}

// FindAbandonedCheckouts lists abandoned carts (and recovered ones when
// asked), most recently abandoned first.
func (r reader) FindAbandonedCheckouts(ctx context.Context, storeID uuid.UUID, f CheckoutFilter) ([]Cart, int, error) {
	statuses := []CartStatus{CartAbandoned}
	switch {
	case f.OnlyRecovered:
		statuses = []CartStatus{CartRecovered}
	case f.IncludeRecovered:
		statuses = append(statuses, CartRecovered)
	}
	return findPage(ctx, r, "abandoned checkouts", listQuery{
		columns: cartColumns,
		from: `FROM carts WHERE store_id = $1 AND abandoned_at IS NOT NULL AND status = ANY ($2)
			AND ($3::boolean IS NULL OR (email IS NOT NULL OR phone IS NOT NULL) = $3)`, args: []any{storeID, statuses, f.HasContact},
		orderBy: "abandoned_at DESC, id DESC",
	}, f.Page.Limit, int(f.Page.Offset()), func(row pgx.CollectableRow) (Cart, error) { return scanCart(row) })
}

// MarkCheckoutRecovered records that an abandoned checkout was recovered
// another way (an order by phone, say). Again on a recovered one it answers
// the checkout unchanged; an active cart refuses.
func (tx *Tx) MarkCheckoutRecovered(ctx context.Context, storeID, cartID uuid.UUID, orderID *uuid.UUID, note *string) (Cart, error) {
	c, err := tx.lockCart(ctx, storeID, cartID)
	if err != nil {
		return Cart{}, err
	}
	switch c.Status {
	case CartRecovered:
		c.Lines, err = tx.cartLines(ctx, storeID, cartID)
		return c, err
	case CartAbandoned:
	default:
		return Cart{}, ErrCheckoutNotAbandoned
	}
	if orderID != nil {
		if _, err := tx.FindOrderByRef(ctx, storeID, orderID.String()); errors.Is(err, ErrNotFound) {
			return Cart{}, &InvalidError{Field: "order_id", Code: "not_found", Message: "no such order in this store"}
		} else if err != nil {
			return Cart{}, err
		}
	}
	now := tx.now()
	c, err = scanCart(tx.tx.QueryRow(ctx, `UPDATE carts SET status = 'recovered', recovered_at = $3, recovery_source = 'manual',
			order_id = COALESCE($4, order_id), recovery_note = $5, updated_at = $3
		WHERE store_id = $1 AND id = $2 RETURNING `+cartColumns, storeID, cartID, now, orderID, note))
	if err != nil {
		return Cart{}, fmt.Errorf("mark checkout recovered: %w", err)
	}
	c.Lines = []CartLine{}
	return c, tx.finishCart(ctx, storeID, cartID)
}

// RecordRecoveryEmail sets when the last recovery email went out.
func (db *DB) RecordRecoveryEmail(ctx context.Context, storeID, cartID uuid.UUID) (time.Time, error) {
	var at time.Time
	err := db.pool.QueryRow(ctx, `UPDATE carts SET recovery_email_sent_at = $3, updated_at = $3 WHERE store_id = $1 AND id = $2
		RETURNING recovery_email_sent_at`, storeID, cartID, db.now()).Scan(&at)
	if err != nil {
		return time.Time{}, notFoundIfNoRows(err, "record recovery email")
	}
	return at, nil
}

// CheckoutTally is a count of carts and what they are worth.
type CheckoutTally struct {
	Count int
	Value int64
}

// CheckoutSummary is the abandoned-checkout dashboard's figures.
type CheckoutSummary struct {
	Abandoned           CheckoutTally
	Recovered           CheckoutTally
	EmailsSent          int
	RecoveredAfterEmail CheckoutTally
}

// SummarizeCheckouts counts carts abandoned in [from, to): those still
// abandoned, those recovered, emails sent, and recoveries after an email.
func (r reader) SummarizeCheckouts(ctx context.Context, storeID uuid.UUID, from, to *time.Time) (CheckoutSummary, error) {
	var s CheckoutSummary
	err := r.q.QueryRow(ctx, `SELECT
			count(*) FILTER (WHERE status = 'abandoned'), COALESCE(sum(subtotal) FILTER (WHERE status = 'abandoned'), 0),
			count(*) FILTER (WHERE status = 'recovered'), COALESCE(sum(subtotal) FILTER (WHERE status = 'recovered'), 0),
			count(*) FILTER (WHERE recovery_email_sent_at IS NOT NULL),
			count(*) FILTER (WHERE status = 'recovered' AND recovered_at > recovery_email_sent_at),
			COALESCE(sum(subtotal) FILTER (WHERE status = 'recovered' AND recovered_at > recovery_email_sent_at), 0)
		FROM carts WHERE store_id = $1 AND abandoned_at IS NOT NULL
		  AND ($2::timestamptz IS NULL OR abandoned_at >= $2) AND ($3::timestamptz IS NULL OR abandoned_at < $3)`,
		storeID, from, to).Scan(&s.Abandoned.Count, &s.Abandoned.Value, &s.Recovered.Count, &s.Recovered.Value, &s.EmailsSent,
		&s.RecoveredAfterEmail.Count, &s.RecoveredAfterEmail.Value)
	if err != nil {
		return CheckoutSummary{}, fmt.Errorf("summarize checkouts: %w", err)
	}
	return s, nil
}

// AbandonmentThreshold is the store's default threshold in minutes.
func (r reader) AbandonmentThreshold(ctx context.Context, storeID uuid.UUID) (int, error) {
	var minutes int
	if err := r.q.QueryRow(ctx, `SELECT abandonment_threshold_minutes FROM stores WHERE id = $1`, storeID).Scan(&minutes); err != nil {
		return 0, notFoundIfNoRows(err, "find abandonment threshold")
	}
	return minutes, nil
}

// Statuses of a cart's discount code (§14): applied; not_applicable while
// its conditions fail (it applies once they hold); unusable when it cannot
// be used at all any more (not found, disabled, not started, expired or
// used up), which checkout refuses.
const (
	CodeApplied       = "applied"
	CodeNotApplicable = "not_applicable"
	CodeUnusable      = "unusable"
)

// CartCode is the discount code on a cart and whether it applies.
type CartCode struct {
	Code             string
	Status           string
	Reason           string
	RequiredSubtotal *int64
}

// CartPrice is a cart priced by §14 and §15.
type CartPrice struct {
	Pricing
	Code     *CartCode
	Shipping ShippingChoice
	// GiftCards are the cart's cards as they apply, in the order given;
	// AmountDue is the total less what they pay (§19).
	GiftCards []AppliedGiftCard
	AmountDue int64
}

// CartTerms are what a cart is priced with besides its lines: its own, or
// a checkout's (which may name another address, rate, payment method and
// customer).
type CartTerms struct {
	DiscountCode   *string
	ShipTo         *ShipTo
	ShippingRateID *uuid.UUID
	PaymentMethod  string
	Phone, Email   *string
	GiftCardIDs    []uuid.UUID
}

// Terms are the cart's own pricing terms.
func (c Cart) Terms() CartTerms {
	t := CartTerms{DiscountCode: c.DiscountCode, ShipTo: c.ShipTo, ShippingRateID: c.ShippingRateID, Phone: c.Phone, Email: c.Email,
		GiftCardIDs: c.GiftCardIDs}
	if c.PaymentMethod != nil {
		t.PaymentMethod = *c.PaymentMethod
	}
	return t
}

// PriceCart prices a cart's lines with the one pricing function, as
// checkout would place them: the store's automatic discounts, the code
// (its per-customer limit for the customer the contact finds), and the
// shipping of the zone covering the address, the rate asked for when it is
// offered, else the cheapest.
func (r reader) PriceCart(ctx context.Context, c *Cart, t CartTerms) error {
	input := PricingInput{Lines: make([]PricedLine, len(c.Lines))}
	grams := 0
	for i, l := range c.Lines {
		input.Lines[i] = PricedLine{Total: l.Total, ProductID: &l.ProductID}
		grams += l.Grams
	}
	customerID, err := r.customerByContact(ctx, c.StoreID, t.Phone, t.Email)
	if err != nil {
		return err
	}
	var code *CartCode
	if t.DiscountCode != nil {
		code = &CartCode{Code: *t.DiscountCode}
	}
	_, err = r.discountsFor(ctx, c.StoreID, &input, t.DiscountCode, true, customerID)
	var invalid *InvalidError
	if errors.As(err, &invalid) && invalid.Field == "discount_code" {
		code.Status, code.Reason = CodeUnusable, invalid.Code
		_, err = r.discountsFor(ctx, c.StoreID, &input, nil, true, customerID)
	}
	if err != nil {
		return err
	}
	shipping, err := r.chooseShipping(ctx, c.StoreID, t.ShipTo, grams, Price(input).DiscountedSubtotal, t.PaymentMethod, t.ShippingRateID)
	if err != nil {
		return err
	}
	input.Shipping = shipping.Quote
	c.Price = CartPrice{Pricing: Price(input), Code: code, Shipping: shipping}
	if code != nil && code.Status == "" {
		code.Status = CodeApplied
		if c.Price.CodeReason != "" {
			code.Status, code.Reason, code.RequiredSubtotal = CodeNotApplicable, c.Price.CodeReason, c.Price.RequiredSubtotal
		}
	}
	// Cards apply last and pay shipping; the cart's application leaves the
	// COD fee out (the checkout debits against the final total), and gift
	// cards bought in the cart (a card never pays for a card, §19).
	var bought int64
	for _, l := range input.Lines {
		if l.GiftCard {
			bought += l.Total
		}
	}
	if c.Price.GiftCards, err = r.applyGiftCards(ctx, c.StoreID, t.GiftCardIDs, c.Price.Total-c.Price.CODFee-bought); err != nil {
		return err
	}
	c.Price.AmountDue = c.Price.Total - SumApplied(c.Price.GiftCards)
	return nil
}

// customerByContact is the store's customer with the phone, else the
// email (as orders find them, §4), or nil.
func (r reader) customerByContact(ctx context.Context, storeID uuid.UUID, phone, email *string) (*uuid.UUID, error) {
	if phone == nil && email == nil {
		return nil, nil
	}
	var id uuid.UUID
	err := r.q.QueryRow(ctx, `SELECT id FROM customers WHERE store_id = $1 AND (phone = $2 OR email = $3)
		ORDER BY phone = $2 DESC NULLS LAST LIMIT 1`, storeID, phone, email).Scan(&id)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("find customer by contact: %w", err)
	}
	return &id, nil
}
