package storage

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	sq "github.com/Masterminds/squirrel"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/merchantsvc/svc/storage/orderref"
) // PaymentMethods are the accepted payment_method values (decisions §4).
var PaymentMethods = []string{"cod", "card", "instapay", "mobile_wallet", "bank_transfer"}

// PaymentStatuses and FulfillmentStatuses are the list filters' values.
var (
	PaymentStatuses = []PaymentStatus{PaymentPending, PaymentAwaitingReview, PaymentPartiallyPaid, PaymentPaid,
		PaymentPartiallyRefunded, PaymentRefunded}
	FulfillmentStatuses = []FulfillmentStatus{FulfillmentUnfulfilled, FulfillmentInTransit, FulfillmentDelivered,
		FulfillmentPartiallyDelivered, FulfillmentReturned}
)

// firstOrderNumber is where every store's numbering starts.
const firstOrderNumber = 1001

// PaymentStatus is how far an order is paid (decisions §4).
type PaymentStatus string

// Payment statuses.
const (
	PaymentPending           PaymentStatus = "pending"
	PaymentAwaitingReview    PaymentStatus = "awaiting_review"
	PaymentPartiallyPaid     PaymentStatus = "partially_paid"
	PaymentPaid              PaymentStatus = "paid"
	PaymentPartiallyRefunded PaymentStatus = "partially_refunded"
	PaymentRefunded          PaymentStatus = "refunded"
)

// FulfillmentStatus is where an order's goods are.
type FulfillmentStatus string

// Fulfillment statuses.
const (
	FulfillmentUnfulfilled        FulfillmentStatus = "unfulfilled"
	FulfillmentInTransit          FulfillmentStatus = "in_transit"
	FulfillmentDelivered          FulfillmentStatus = "delivered"
	FulfillmentPartiallyDelivered FulfillmentStatus = "partially_delivered"
	FulfillmentReturned           FulfillmentStatus = "returned"
)

// Order is a placed (or draft) order with its lines.
type Order struct {
	ID                uuid.UUID
	StoreID           uuid.UUID
	OrderNumber       string
	Status            OrderStatus
	PaymentStatus     PaymentStatus
	FulfillmentStatus FulfillmentStatus
	PaymentMethod     string
	Currency          string
	CustomerID        *uuid.UUID
	Customer          OrderCustomer
	ShippingAddress   json.RawMessage
	Subtotal          int64
	ShippingFee       int64
	Discount          int64
	Total             int64
	PaidTotal         int64
	CollectibleTotal  int64
	CollectedTotal    int64
	RefundDue         int64
	TrackingNumber    *string
	Notes             string
	CancelReason      *string
	CreatedAt         time.Time
	UpdatedAt         time.Time
	// PlacedAt is when the order counts in analytics (§17): its creation,
	// or a draft's conversion; nil for a draft.
	PlacedAt *time.Time
	Lines    []OrderLine
	// Discounts are the discounts applied (§14); Discount is their sum.
	Discounts []AppliedDiscount
	// ShippingLines snapshot the rate the order ships with (§15).
	ShippingLines []ShippingLine
}

// ShippingLine is the rate an order ships with, as it was at placement:
// shipping_fee is fee + cod_fee.
type ShippingLine struct {
	RateID uuid.UUID `json:"rate_id"`
	ZoneID uuid.UUID `json:"zone_id"`
	Name   string    `json:"name"`
	Fee    int64     `json:"fee"`
	CODFee int64     `json:"cod_fee"`
}

// BalanceDue is what is still to be paid of the collectible total.
func (o Order) BalanceDue() int64 { return max(o.CollectibleTotal-o.PaidTotal, 0) }

// OrderLine is a snapshot of what was bought.
type OrderLine struct {
	ID               uuid.UUID
	VariantID        *uuid.UUID
	ProductID        *uuid.UUID
	Name             string
	SKU              *string
	Quantity         int
	UnitPrice        int64
	Total            int64
	ReturnedQuantity int
	Discount         int64 // the line's share of the order's discounts
	// GiftCardValue is, on a line of a gift card product (§19), the
	// balance each unit issues when the order is paid, snapshot at
	// placing; nil on every other line. Such a line reserves no stock and
	// takes no discount.
	GiftCardValue *int64
	// GiftCardRecipient is, on a gift card line, whom its cards are sent
	// to; nil sends them to the order's customer.
	GiftCardRecipient *GiftCardRecipient
	// grams is the line's weight (the variant's, else the product's, else
	// 0, times the quantity) when it was read for placing.
	grams int
}

// OrderCustomer is the customer snapshot kept on an order.
type OrderCustomer struct {
	ID    uuid.UUID `json:"id"`
	Name  string    `json:"name"`
	Email *string   `json:"email"`
	Phone *string   `json:"phone"`
}

// NewOrderLine asks for a quantity of a variant.
type NewOrderLine struct {
	VariantID uuid.UUID
	Quantity  int
	// Recipient is whom a gift card line's cards are for (§19); only a
	// gift card product's line may name one.
	Recipient *GiftCardRecipient
}

// NewOrder is an order to place (or a draft to save).
type NewOrder struct {
	StoreID         uuid.UUID
	Draft           bool
	CustomerID      *uuid.UUID
	Customer        *OrderCustomer // inline: found or created by phone, then email
	Lines           []NewOrderLine
	ShippingAddress json.RawMessage
	PaymentMethod   string
	ShippingFee     int64
	Discount        int64
	Notes           string
	ActorUserID     *uuid.UUID
	// DiscountCode and ApplyAutomatic price the order with the store's
	// discounts (§14); without them an order prices as before.
	DiscountCode   *string
	ApplyAutomatic bool
	// ShippingRateID prices the shipping with a rate of the store (§15)
	// instead of ShippingFee; zone checks are skipped for merchant orders.
	ShippingRateID *uuid.UUID
	// ShipTo, set by a storefront checkout, is matched with the store's
	// zones: the rate is ShippingRateID (refused when not offered there),
	// else PreferredRateID (the cart's) when offered, else the cheapest; a
	// store without zones ships for 0.
	ShipTo          *ShipTo
	PreferredRateID *uuid.UUID
	// ExpectedTotal, when set, is the total the buyer saw: any other total
	// is ErrCartTotalChanged and nothing is written.
	ExpectedTotal *int64
	// GiftCardIDs pay the order (§19), applied in this order: a placed
	// order debits them in its transaction; a draft keeps them for its
	// conversion. Without PaymentMethod the cards must pay the whole total.
	GiftCardIDs []uuid.UUID
}

// StockError names a variant without enough stock.
type StockError struct {
	Line      int
	VariantID uuid.UUID
	Available int
	Requested int
}

func (e *StockError) Error() string {
	return fmt.Sprintf("variant %s has %d in stock, %d requested", e.VariantID, e.Available, e.Requested)
}

func (e *TransitionError) Error() string {
	return fmt.Sprintf("cannot move an order from %s to %s", e.From, e.To)
}

const orderColumns = `id, store_id, order_number, status, payment_status, fulfillment_status, payment_method, currency,
	customer_id, customer, shipping_address, subtotal, shipping_fee, discount, total, paid_total, collectible_total,
	collected_total, refund_due, tracking_number, notes, cancel_reason, created_at, updated_at, discounts, shipping_lines, placed_at`

func scanOrder(row pgx.Row) (Order, error) {
	var o Order
	err := row.Scan(&o.ID, &o.StoreID, &o.OrderNumber, &o.Status, &o.PaymentStatus, &o.FulfillmentStatus, &o.PaymentMethod,
		&o.Currency, &o.CustomerID, &o.Customer, &o.ShippingAddress, &o.Subtotal, &o.ShippingFee, &o.Discount, &o.Total,
		&o.PaidTotal, &o.CollectibleTotal, &o.CollectedTotal, &o.RefundDue, &o.TrackingNumber, &o.Notes, &o.CancelReason,
		&o.CreatedAt, &o.UpdatedAt, &o.Discounts, &o.ShippingLines, &o.PlacedAt)
	return o, err
}

// CreateOrder places an order: it snapshots each variant's name, SKU and
// price, reserves stock (refusing with a StockError), takes the store's next
// number, and writes order.created. A draft reserves nothing, writes no
// event, and is not counted until it is converted.
func (tx *Tx) CreateOrder(ctx context.Context, in NewOrder) (Order, error) {
	var store Store
	customer, err := tx.orderCustomer(ctx, in, &store)
	if err != nil {
		return Order{}, err
	}
	o := Order{ID: NewID(), StoreID: in.StoreID, Status: OrderPending, PaymentStatus: PaymentPending, FulfillmentStatus: FulfillmentUnfulfilled,
		PaymentMethod: in.PaymentMethod, Currency: store.Currency, CustomerID: &customer.ID, Customer: customer,
		ShippingAddress: in.ShippingAddress, ShippingFee: in.ShippingFee, Discount: in.Discount, Notes: in.Notes}
	if in.Draft {
		o.Status = OrderDraft
	}
	rows, err := tx.readOrderRows(ctx, in.StoreID, in.Lines, !in.Draft)
	if err != nil {
		return Order{}, err
	}
	o.Lines = rows.lines
	if err := refuseGiftCardsOnCOD(o); err != nil {
		return Order{}, err
	}
	limits, err := tx.priceOrder(ctx, &o, in)
	if err != nil {
		return Order{}, err
	}
	if in.ExpectedTotal != nil && *in.ExpectedTotal != o.Total {
		return Order{}, ErrCartTotalChanged
	}
	cards, err := tx.planGiftCards(ctx, &o, in.GiftCardIDs, in.PaymentMethod, !in.Draft)
	if err != nil {
		return Order{}, err
	}
	if !in.Draft && SumApplied(cards) > 0 {
		// The cards' debits go in the order's write batch below: the order
		// is written already counting them.
		o.PaidTotal = SumApplied(cards)
		o.PaymentStatus = PaymentStatusFor(PaymentPending, o.PaidTotal, o.Total, nil)
	}
	o.CollectibleTotal = o.Total
	o.OrderNumber = fmt.Sprintf("ORD-%d", rows.number)
	now := tx.now()
	o.CreatedAt, o.UpdatedAt = now, now
	search := strings.ToLower(strings.Join([]string{o.OrderNumber, customer.Name, deref(customer.Email), deref(customer.Phone)}, " "))
	// placed_at is when the order counts in analytics (§17): now, or a
	// draft's conversion.
	if !in.Draft {
		o.PlacedAt = &now
	}
	writes := &pgx.Batch{}
	// gift_cards_sold is what the order's gift card lines sold for: §19
	// counts it apart from gross_sales.
	var giftCardsSold int64
	for _, l := range o.Lines {
		if l.GiftCardValue != nil {
			giftCardsSold += l.Total
		}
	}
	writes.Queue(`INSERT INTO orders (`+orderColumns+`, search_text, customer_phone, trace_parent, gift_cards_sold) VALUES ($1, $2, $3, $4, $5, $6, $7,
		$8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $23, $23, $27, $28, $29, $24, $25, NULLIF($26, ''), $30)`,
		o.ID, o.StoreID, o.OrderNumber, o.Status, o.PaymentStatus, o.FulfillmentStatus, o.PaymentMethod, o.Currency, o.CustomerID,
		o.Customer, o.ShippingAddress, o.Subtotal, o.ShippingFee, o.Discount, o.Total, o.PaidTotal, o.CollectibleTotal,
		o.CollectedTotal, o.RefundDue, o.TrackingNumber, o.Notes, o.CancelReason, now, search, customer.Phone, traceParent(ctx), o.Discounts, nonNilShippingLines(o.ShippingLines),
		o.PlacedAt, giftCardsSold)
	// The order and its lines go in one round trip: the variants' stock
	// rows are locked from readOrderRows to the commit, so every round trip
	// here holds back the next order for the same variants.
	queueOrderLines(writes, o.StoreID, o.ID, o.Lines, o.PlacedAt)
	if len(in.GiftCardIDs) > 0 {
		writes.Queue(`UPDATE orders SET gift_card_ids = $3 WHERE store_id = $1 AND id = $2`, o.StoreID, o.ID, in.GiftCardIDs)
	}
	kind := ActivityOrderCreated
	if in.Draft {
		kind = ActivityDraftCreated
	}
	if err := tx.queueActivity(writes, o, kind, "", map[string]any{"status": o.Status}, in.ActorUserID); err != nil {
		return Order{}, err
	}
	// A placed order's stock, status count, COD risk and event go in the
	// same round trip: what it reserves was read from the locked levels.
	var risk *CODRisk
	if !in.Draft {
		if err := tx.queueReservation(writes, o, rows.levels, UserActor(in.ActorUserID)); err != nil {
			return Order{}, err
		}
		if err := tx.queueGiftCardDebits(writes, o, cards, in.ActorUserID); err != nil {
			return Order{}, err
		}
		queueCountStatus(writes, o.StoreID, "", o.Status)
		risk = queueCODRisk(writes, o, customer.Phone)
		if err := tx.queueEmit(ctx, writes, o.StoreID, EventOrderCreated, orderCreatedEventOf(o)); err != nil {
			return Order{}, err
		}
	}
	if err := tx.tx.SendBatch(ctx, writes).Close(); err != nil {
		return Order{}, fmt.Errorf("create order: %w", err)
	}
	if in.Draft {
		return o, nil
	}
	if err := tx.countDiscounts(ctx, o, limits); err != nil {
		return Order{}, err
	}
	if o.PaymentStatus == PaymentPaid && o.PaidTotal > 0 {
		// Gift cards paid it whole: what a transition to paid brings, once.
		if err := tx.recordPaid(ctx, &o, PaymentGiftCard, in.ActorUserID); err != nil {
			return Order{}, err
		}
	}
	return o, tx.flagCODRisk(ctx, o, risk)
}

// queueOrderLines gives each line an id and queues their insert, all lines
// in one statement. The first line of each product counts the order once
// for it in top products, however many variants of it the order holds.
func queueOrderLines(batch *pgx.Batch, storeID, orderID uuid.UUID, lines []OrderLine, soldAt *time.Time) {
	n := len(lines)
	var (
		ids                = make([]uuid.UUID, n)
		variants, products = make([]*uuid.UUID, n), make([]*uuid.UUID, n)
		names              = make([]string, n)
		skus               = make([]*string, n)
		quantities         = make([]int32, n)
		unitPrices, totals = make([]int64, n), make([]int64, n)
		discounts          = make([]int64, n)
		giftCardValues     = make([]*int64, n)
		recipients         = make([]*GiftCardRecipient, n)
		firstOfProduct     = make([]bool, n)
		productsSeen       = map[uuid.UUID]bool{}
	)
	for i := range lines {
		l := &lines[i]
		l.ID = NewID()
		ids[i], variants[i], products[i], names[i], skus[i] = l.ID, l.VariantID, l.ProductID, l.Name, l.SKU
		quantities[i], unitPrices[i], totals[i], discounts[i] = int32(l.Quantity), l.UnitPrice, l.Total, l.Discount
		giftCardValues[i], recipients[i] = l.GiftCardValue, l.GiftCardRecipient
		firstOfProduct[i] = l.ProductID != nil && !productsSeen[*l.ProductID]
		if l.ProductID != nil {
			productsSeen[*l.ProductID] = true
		}
	}
	batch.Queue(`INSERT INTO order_lines (id, store_id, order_id, variant_id, product_id, name, sku, quantity,
			unit_price, total, position, discount, sold_at, first_of_product, gift_card_value, gift_card_recipient)
		SELECT l.id, $1, $2, l.variant_id, l.product_id, l.name, l.sku, l.quantity, l.unit_price, l.total, l.position,
			l.discount, $3, l.first_of_product, l.gift_card_value, l.gift_card_recipient
		FROM unnest($4::uuid[], $5::uuid[], $6::uuid[], $7::text[], $8::text[], $9::int[], $10::bigint[], $11::bigint[],
			$12::bigint[], $13::boolean[], $14::bigint[], $15::jsonb[])
			WITH ORDINALITY AS l (id, variant_id, product_id, name, sku, quantity, unit_price, total, discount, first_of_product,
				gift_card_value, gift_card_recipient, position)`,
		storeID, orderID, soldAt, ids, variants, products, names, skus, quantities, unitPrices, totals, discounts, firstOfProduct,
		giftCardValues, recipients)
}

// orderRows is what placing an order reads under its locks: its lines,
// its variants' levels (when it reserves) and its number.
type orderRows struct {
	lines  []OrderLine
	levels []lockedLevel
	number int64
}

// readOrderRows reads an order's variants and takes the store's next
// order number in one round trip; with place set it locks the variants and
// then their levels, in the order every stock write locks them. The
// number is taken last: every order of a store waits for it until the
// commit before, so it is held for as few round trips as may be.
func (tx *Tx) readOrderRows(ctx context.Context, storeID uuid.UUID, requested []NewOrderLine, place bool) (orderRows, error) {
	ids := variantIDsOf(requested)
	var (
		out   orderRows
		found map[uuid.UUID]OrderLine
	)
	batch := &pgx.Batch{}
	batch.Queue(variantsForOrderQuery(place), storeID, ids).Query(func(rows pgx.Rows) error {
		var err error
		found, err = scanVariantsForOrder(rows)
		return err
	})
	if place {
		batch.Queue(lockLevelsQuery, storeID, ids).Query(func(rows pgx.Rows) error {
			var err error
			out.levels, err = collectLockedLevels(rows)
			return err
		})
	}
	batch.Queue(`INSERT INTO order_counters (store_id, last_number) VALUES ($1, $2)
		ON CONFLICT (store_id) DO UPDATE SET last_number = order_counters.last_number + 1 RETURNING last_number`,
		storeID, firstOrderNumber).QueryRow(func(row pgx.Row) error { return row.Scan(&out.number) })
	if err := tx.tx.SendBatch(ctx, batch).Close(); err != nil {
		return orderRows{}, fmt.Errorf("read the order's variants: %w", err)
	}
	var err error
	out.lines, err = linesOf(found, requested)
	return out, err
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// ContactPhone is the phone that identifies the order's inline customer
// (§4: phone, then email): customer.phone, else the shipping address's.
// COD buyers are known by the phone the courier calls; without it an order
// that left customer.phone out was found by its email alone, and a fresh
// email with the same phone was a new customer whose per-customer discount
// limits started again (issue 48, item 11).
func (in NewOrder) ContactPhone() *string {
	if in.Customer != nil && in.Customer.Phone != nil {
		return in.Customer.Phone
	}
	var addr struct {
		Phone string `json:"phone"`
	}
	if json.Unmarshal(in.ShippingAddress, &addr) != nil || addr.Phone == "" {
		return nil
	}
	return &addr.Phone
}

// orderCustomer finds (or, inline, creates) the order's customer and reads
// its store into store: an inline customer's lookups and the store go in
// one round trip.
func (tx *Tx) orderCustomer(ctx context.Context, in NewOrder, store *Store) (OrderCustomer, error) {
	if in.CustomerID != nil {
		var err error
		if *store, err = tx.FindStoreByID(ctx, in.StoreID); err != nil {
			return OrderCustomer{}, err
		}
		c, err := tx.FindCustomerByID(ctx, in.StoreID, *in.CustomerID)
		if errors.Is(err, ErrNotFound) {
			return OrderCustomer{}, &InvalidError{Field: "customer_id", Code: "not_found", Message: "no such customer in this store"}
		}
		if err != nil {
			return OrderCustomer{}, err
		}
		return OrderCustomer{ID: c.ID, Name: c.Name, Email: c.Email, Phone: c.Phone}, nil
	}
	c, err := tx.findOrCreateCustomer(ctx, in.StoreID, in.Customer.Name, in.Customer.Email, in.ContactPhone(), store)
	if err != nil {
		return OrderCustomer{}, err
	}
	return OrderCustomer{ID: c.ID, Name: c.Name, Email: c.Email, Phone: c.Phone}, nil
}

// orderLines snapshots the variants (name, SKU — the variant's, else the
// product's — and price). With lock set it locks them in id order, as every
// stock write does, so the reservation that follows reads settled stock.
func (tx *Tx) orderLines(ctx context.Context, storeID uuid.UUID, requested []NewOrderLine, lock bool) ([]OrderLine, error) {
	rows, err := tx.tx.Query(ctx, variantsForOrderQuery(lock), storeID, variantIDsOf(requested))
	if err != nil {
		return nil, fmt.Errorf("read variants: %w", err)
	}
	found, err := scanVariantsForOrder(rows)
	if err != nil {
		return nil, err
	}
	return linesOf(found, requested)
}

func variantIDsOf(requested []NewOrderLine) []uuid.UUID {
	ids := make([]uuid.UUID, 0, len(requested))
	for _, r := range requested {
		ids = append(ids, r.VariantID)
	}
	return ids
}

// variantsForOrderQuery reads a store's variants ($2) with what an order
// line snapshots, locking them in id order when lock is set.
func variantsForOrderQuery(lock bool) string {
	query := `SELECT v.id, v.product_id, p.name, COALESCE(v.sku, p.sku), v.price, COALESCE(v.weight_grams, p.weight_grams, 0),
			CASE WHEN p.kind = 'gift_card' THEN COALESCE(v.value, v.price) END
		FROM variants v JOIN products p ON p.store_id = v.store_id AND p.id = v.product_id
		WHERE v.store_id = $1 AND v.id = ANY ($2) ORDER BY v.id`
	if lock {
		query += ` FOR UPDATE OF v`
	}
	return query
}

func scanVariantsForOrder(rows pgx.Rows) (map[uuid.UUID]OrderLine, error) {
	defer rows.Close()
	found := map[uuid.UUID]OrderLine{}
	for rows.Next() {
		var (
			l                    OrderLine
			variantID, productID uuid.UUID
		)
		if err := rows.Scan(&variantID, &productID, &l.Name, &l.SKU, &l.UnitPrice, &l.grams, &l.GiftCardValue); err != nil {
			return nil, fmt.Errorf("read variants: %w", err)
		}
		l.VariantID, l.ProductID = &variantID, &productID
		found[variantID] = l
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read variants: %w", err)
	}
	return found, nil
}

// linesOf makes the requested lines from the variants found.
func linesOf(found map[uuid.UUID]OrderLine, requested []NewOrderLine) ([]OrderLine, error) {
	lines := make([]OrderLine, len(requested))
	for i, req := range requested {
		l, ok := found[req.VariantID]
		if !ok {
			return nil, &InvalidError{Field: fmt.Sprintf("lines[%d].variant_id", i), Code: "not_found", Message: "no such variant in this store"}
		}
		total, ok := mulAmount(l.UnitPrice, req.Quantity)
		if !ok || total > MaxAmount {
			return nil, &InvalidError{Field: fmt.Sprintf("lines[%d].quantity", i), Code: "out_of_range",
				Message: "the line total must not exceed 10^12 minor units"}
		}
		if req.Recipient != nil && l.GiftCardValue == nil {
			return nil, errRecipientNotAllowed(i)
		}
		l.Quantity, l.Total, l.grams, l.GiftCardRecipient = req.Quantity, total, l.grams*req.Quantity, req.Recipient
		lines[i] = l
	}
	return lines, nil
}

// orderCreatedEvent is the data of order.created (docs/webhooks.md); every
// field is always present.
type orderCreatedEvent struct {
	StoreID       uuid.UUID   `json:"store_id"`
	OrderID       uuid.UUID   `json:"order_id"`
	OrderNumber   string      `json:"order_number"`
	Status        OrderStatus `json:"status"`
	PaymentMethod string      `json:"payment_method"`
	Total         string      `json:"total"`
}

// orderStatusChangedEvent is the data of order.status_changed; every field
// is always present, tracking_number null when there is none (spec §6.1).
type orderStatusChangedEvent struct {
	StoreID        uuid.UUID   `json:"store_id"`
	OrderID        uuid.UUID   `json:"order_id"`
	OrderNumber    string      `json:"order_number"`
	OldStatus      OrderStatus `json:"old_status"`
	NewStatus      OrderStatus `json:"new_status"`
	TrackingNumber *string     `json:"tracking_number"`
}

// emitOrderCreated writes order.created for a placed order.
func (tx *Tx) emitOrderCreated(ctx context.Context, o Order) error {
	return tx.emit(ctx, o.StoreID, EventOrderCreated, orderCreatedEventOf(o))
}

func orderCreatedEventOf(o Order) orderCreatedEvent {
	return orderCreatedEvent{StoreID: o.StoreID, OrderID: o.ID, OrderNumber: o.OrderNumber, Status: o.Status,
		PaymentMethod: o.PaymentMethod, Total: FormatPrice(o.Total, CurrencyExponent(o.Currency))}
}

// emitStatusChanged writes order.status_changed for an order that moved from from.
func (tx *Tx) emitStatusChanged(ctx context.Context, o Order, from OrderStatus) error {
	return tx.emit(ctx, o.StoreID, EventOrderStatusChanged, orderStatusChangedEvent{StoreID: o.StoreID, OrderID: o.ID,
		OrderNumber: o.OrderNumber, OldStatus: from, NewStatus: o.Status, TrackingNumber: o.TrackingNumber})
}

// orderByIDQuery reads one order of a store, without its lines.
const orderByIDQuery = `SELECT ` + orderColumns + ` FROM orders WHERE store_id = $1 AND id = $2`

const orderLinesQuery = `SELECT id, variant_id, product_id, name, sku, quantity, unit_price, total, returned_quantity, discount,
	gift_card_value, gift_card_recipient
	FROM order_lines WHERE store_id = $1 AND order_id = $2 ORDER BY position`

func (r reader) orderLinesOf(ctx context.Context, storeID, orderID uuid.UUID) ([]OrderLine, error) {
	rows, err := r.q.Query(ctx, orderLinesQuery, storeID, orderID)
	if err != nil {
		return nil, fmt.Errorf("find order lines: %w", err)
	}
	return collectOrderLines(rows)
}

func collectOrderLines(rows pgx.Rows) ([]OrderLine, error) {
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (OrderLine, error) {
		var l OrderLine
		err := row.Scan(&l.ID, &l.VariantID, &l.ProductID, &l.Name, &l.SKU, &l.Quantity, &l.UnitPrice, &l.Total, &l.ReturnedQuantity, &l.Discount,
			&l.GiftCardValue, &l.GiftCardRecipient)
		return l, err
	})
}

// FindOrderByRef returns an order of the store by id or by order number.
func (r reader) FindOrderByRef(ctx context.Context, storeID uuid.UUID, ref string) (Order, error) {
	query := `SELECT ` + orderColumns + ` FROM orders WHERE store_id = $1 AND order_number = $2`
	var arg any = ref
	if id, ok := orderref.Parse(ref); ok {
		query, arg = orderByIDQuery, id
	}
	o, err := scanOrder(r.q.QueryRow(ctx, query, storeID, arg))
	if err != nil {
		return Order{}, notFoundIfNoRows(err, "find order "+ref)
	}
	if o.Lines, err = r.orderLinesOf(ctx, storeID, o.ID); err != nil {
		return Order{}, err
	}
	return o, nil
}

// OrderFilter narrows the order list and the counts.
type OrderFilter struct {
	Status            *OrderStatus
	PaymentStatus     *PaymentStatus
	FulfillmentStatus *FulfillmentStatus
	Search            *string
	DateFrom          *time.Time
	DateTo            *time.Time
	CustomerID        *uuid.UUID
	Page              Page
}

// unfiltered reports a filter that narrows nothing but the store.
func (f OrderFilter) unfiltered() bool {
	return f.Search == nil && f.DateFrom == nil && f.DateTo == nil && f.CustomerID == nil
}

// where is the filter as SQL; drafts are never listed or counted.
func (f OrderFilter) where(storeID uuid.UUID, withStatus bool) sq.And {
	w := sq.And{sq.Eq{"store_id": storeID}, sq.NotEq{"status": OrderDraft}}
	if f.Search != nil {
		w = append(w, sq.ILike{"search_text": "%" + escapeLike(strings.ToLower(*f.Search)) + "%"})
	}
	if f.DateFrom != nil {
		w = append(w, sq.GtOrEq{"created_at": *f.DateFrom})
	}
	if f.DateTo != nil {
		w = append(w, sq.LtOrEq{"created_at": *f.DateTo})
	}
	if f.CustomerID != nil {
		w = append(w, sq.Eq{"customer_id": *f.CustomerID})
	}
	if !withStatus {
		return w
	}
	if f.Status != nil {
		w = append(w, sq.Eq{"status": *f.Status})
	}
	if f.PaymentStatus != nil {
		w = append(w, sq.Eq{"payment_status": *f.PaymentStatus})
	}
	if f.FulfillmentStatus != nil {
		w = append(w, sq.Eq{"fulfillment_status": *f.FulfillmentStatus})
	}
	return w
}

// FindOrders returns a page of the store's orders, newest first, without lines.
func (r reader) FindOrders(ctx context.Context, storeID uuid.UUID, f OrderFilter) ([]Order, int, error) {
	where := f.where(storeID, true)
	query, args, err := psql.Select(orderColumns).From("orders").Where(where).
		OrderBy("created_at DESC", "id DESC").Limit(uint64(f.Page.Limit)).Offset(f.Page.Offset()).ToSql()
	if err != nil {
		return nil, 0, err
	}
	rows, err := r.q.Query(ctx, query, args...)
	if err != nil {
		return nil, 0, fmt.Errorf("find orders: %w", err)
	}
	orders, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (Order, error) { return scanOrder(row) })
	if err != nil {
		return nil, 0, fmt.Errorf("find orders: %w", err)
	}
	var total int
	if len(orders) < f.Page.Limit && (len(orders) > 0 || f.Page.Page == 1) {
		total = int(f.Page.Offset()) + len(orders)
	} else if f.unfiltered() && f.PaymentStatus == nil && f.FulfillmentStatus == nil {
		// Totals of the whole store, or of one status, come from the counters.
		counts, all, err := r.CountOrders(ctx, storeID, f)
		if err != nil {
			return nil, 0, err
		}
		total = all
		if f.Status != nil {
			total = counts[*f.Status]
		}
	} else {
		countSQL, countArgs, _ := psql.Select("count(*)").From("orders").Where(where).ToSql()
		if err := r.q.QueryRow(ctx, countSQL, countArgs...).Scan(&total); err != nil {
			return nil, 0, fmt.Errorf("count orders: %w", err)
		}
	}
	return orders, total, nil
}

// CountOrders counts the store's orders per status (drafts excluded) under
// the filter's date, search and customer conditions.
func (r reader) CountOrders(ctx context.Context, storeID uuid.UUID, f OrderFilter) (map[OrderStatus]int, int, error) {
	query, args, err := psql.Select("status", "count(*)").From("orders").Where(f.where(storeID, false)).GroupBy("status").ToSql()
	if f.unfiltered() {
		// The counters kept with every status change answer without a scan.
		query, args = `SELECT status, n FROM order_status_counts WHERE store_id = $1`, []any{storeID}
	}
	if err != nil {
		return nil, 0, err
	}
	rows, err := r.q.Query(ctx, query, args...)
	if err != nil {
		return nil, 0, fmt.Errorf("count orders: %w", err)
	}
	defer rows.Close()
	counts := map[OrderStatus]int{}
	for _, s := range OrderStatuses {
		if s != OrderDraft {
			counts[s] = 0
		}
	}
	total := 0
	for rows.Next() {
		var (
			status OrderStatus
			n      int
		)
		if err := rows.Scan(&status, &n); err != nil {
			return nil, 0, fmt.Errorf("count orders: %w", err)
		}
		counts[status] = n
		total += n
	}
	return counts, total, rows.Err()
}

// OrderUpdate is a partial update of an order's editable fields.
type OrderUpdate struct {
	Notes           *string
	ShippingAddress json.RawMessage
	TrackingNumber  Field[string]
}

// ErrOrderShipped refuses an address change once the parcel has left.
var ErrOrderShipped = errors.New("order already shipped")

// UpdateOrder edits notes, the tracking number, and the shipping address
// (until the order ships).
func (tx *Tx) UpdateOrder(ctx context.Context, storeID, id uuid.UUID, upd OrderUpdate, actor *uuid.UUID) (Order, error) {
	o, err := tx.lockOrder(ctx, storeID, id)
	if err != nil {
		return Order{}, err
	}
	if upd.ShippingAddress != nil {
		switch o.Status {
		case OrderShipped, OrderDelivered, OrderReturned, OrderCancelled:
			return Order{}, fmt.Errorf("change address of %s order: %w", o.Status, ErrOrderShipped)
		}
		o.ShippingAddress = upd.ShippingAddress
	}
	if upd.Notes != nil {
		o.Notes = *upd.Notes
	}
	if upd.TrackingNumber.Set {
		o.TrackingNumber = upd.TrackingNumber.ptr()
	}
	o.UpdatedAt = tx.now()
	if _, err := tx.tx.Exec(ctx, `UPDATE orders SET notes = $3, shipping_address = $4, tracking_number = $5, updated_at = $6
		WHERE store_id = $1 AND id = $2`, storeID, id, o.Notes, o.ShippingAddress, o.TrackingNumber, o.UpdatedAt); err != nil {
		return Order{}, fmt.Errorf("update order: %w", err)
	}
	return o, tx.addActivity(ctx, o, ActivityOrderUpdated, "", map[string]any{}, actor)
}

func nonNilShippingLines(lines []ShippingLine) []ShippingLine {
	if lines == nil {
		return []ShippingLine{}
	}
	return lines
}
