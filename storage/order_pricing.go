package storage

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"math/bits"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// Pricing (decisions §14, §15): one function prices carts, order previews,
// checkout and merchant orders, so a buyer pays what they were shown.
//
// Order of computation: line totals; the automatic discount, then the code,
// as line discounts; shipping on the discounted subtotal; a free-shipping
// code waives the rate fee (and the COD fee with include_cod_fee); the
// manual discount last; total = subtotal + shipping_fee − discount ≥ 0.

// Discount types, methods and the reasons a code does not apply.
const (
	DiscountPercentage   = "percentage"
	DiscountFixedAmount  = "fixed_amount"
	DiscountFreeShipping = "free_shipping"

	DiscountMethodCode      = "code"
	DiscountMethodAutomatic = "automatic"
	DiscountKindManual      = "manual"

	ReasonMinSubtotalNotMet    = "min_subtotal_not_met"
	ReasonNoEligibleLines      = "no_eligible_lines"
	ReasonNotCombinable        = "not_combinable"
	ReasonCustomerLimitReached = "customer_limit_reached"
)

// PricedLine is a cart or order line as pricing sees it.
type PricedLine struct {
	Total     int64
	ProductID *uuid.UUID
	// Categories are the product's category and its ancestors.
	Categories []uuid.UUID
	// GiftCard marks a line of a gift card product (§19): no discount,
	// automatic, code or manual, ever takes a share of it.
	GiftCard bool
}

// DiscountRule is a live discount's terms.
type DiscountRule struct {
	ID                    uuid.UUID
	Method                string
	Code                  string
	Title                 string
	Type                  string
	Value                 int64
	MaxDiscount           *int64
	IncludeCODFee         bool
	Scope                 string // order, products, categories
	ProductIDs            []uuid.UUID
	CategoryIDs           []uuid.UUID
	MinSubtotal           *int64
	CombinesWithAutomatic bool
	CreatedAt             time.Time
}

// ShippingQuote is the chosen rate's charge: its fee (before
// free_above_subtotal) and the COD fee when paying cash on delivery.
type ShippingQuote struct {
	Fee               int64
	CODFee            int64
	FreeAboveSubtotal *int64
}

// PricingInput is everything a price depends on.
type PricingInput struct {
	Lines     []PricedLine
	Automatic []DiscountRule // the live automatic discounts
	Code      *DiscountRule  // the live code asked for
	// CodeBlocked, when set, is why the code does not apply although it is
	// live (customer_limit_reached).
	CodeBlocked string
	// Shipping is the rate's quote; nil: ManualShippingFee.
	Shipping          *ShippingQuote
	ManualShippingFee int64
	ManualDiscount    int64
}

// AppliedDiscount is one discount on a priced order.
type AppliedDiscount struct {
	DiscountID     *uuid.UUID `json:"discount_id"`
	Kind           string     `json:"kind"`
	Code           *string    `json:"code"`
	Title          string     `json:"title"`
	Amount         int64      `json:"amount"`
	ShippingAmount int64      `json:"shipping_amount"`
}

// Pricing is a priced cart or order.
type Pricing struct {
	Subtotal int64
	// DiscountedSubtotal is the subtotal after the automatic discount and
	// the code: what free_above_subtotal compares.
	DiscountedSubtotal int64
	Fee                int64 // the rate's fee after free_above_subtotal
	CODFee             int64
	ShippingFee        int64 // Fee + CODFee
	Discount           int64 // every line discount and shipping amount
	Total              int64
	// LineDiscounts are the lines' discounts, in their order.
	LineDiscounts []int64
	Discounts     []AppliedDiscount
	// CodeReason is why the code asked for does not apply ("" when it
	// does, or none was asked); RequiredSubtotal goes with min_subtotal.
	CodeReason       string
	RequiredSubtotal *int64
}

// Price prices lines by §14 and §15. Total below zero (a manual discount
// above everything) is reported by Total < 0; callers refuse it.
func Price(in PricingInput) Pricing {
	p := Pricing{LineDiscounts: make([]int64, len(in.Lines))}
	full := make([]int64, len(in.Lines))
	for i, l := range in.Lines {
		full[i] = l.Total
		p.Subtotal += l.Total
	}

	auto, autoSaving := bestAutomatic(in, full)
	remaining := slices.Clone(full)
	var applied []AppliedDiscount
	// apply takes a discount's shares from what remains of the lines.
	apply := func(d DiscountRule) {
		shares := lineShares(d, in.Lines, remaining)
		for i, share := range shares {
			p.LineDiscounts[i] += share
			remaining[i] -= share
		}
		entry := AppliedDiscount{DiscountID: &d.ID, Kind: d.Method, Title: d.Title, Amount: sum(shares)}
		if d.Method == DiscountMethodCode {
			entry.Code = &d.Code
		}
		applied = append(applied, entry)
	}

	var code *DiscountRule
	if in.Code != nil {
		code = in.Code
		reason, required := qualifies(*code, in.Lines)
		switch {
		case in.CodeBlocked != "":
			p.CodeReason, code = in.CodeBlocked, nil
		case reason != "":
			p.CodeReason, p.RequiredSubtotal, code = reason, required, nil
		case auto != nil && !code.CombinesWithAutomatic:
			if codeSaving(*code, in, full) >= autoSaving {
				auto = nil
			} else {
				p.CodeReason, code = ReasonNotCombinable, nil
			}
		}
	}
	if auto != nil {
		apply(*auto)
	}
	if code != nil && code.Type != DiscountFreeShipping {
		apply(*code)
	}

	p.DiscountedSubtotal = sum(remaining)
	p.Fee, p.CODFee = shippingCharge(in, p.DiscountedSubtotal)
	p.ShippingFee = p.Fee + p.CODFee
	if code != nil && code.Type == DiscountFreeShipping {
		waived := p.Fee
		if code.IncludeCODFee {
			waived += p.CODFee
		}
		applied = append(applied, AppliedDiscount{DiscountID: &code.ID, Kind: DiscountMethodCode, Code: &code.Code, Title: code.Title,
			ShippingAmount: waived})
	}

	if in.ManualDiscount > 0 {
		// On what remains of the lines, the rest on the shipping (past the
		// shipping too, the total goes below zero: the caller refuses it).
		open := slices.Clone(remaining)
		for i, l := range in.Lines {
			if l.GiftCard {
				open[i] = 0
			}
		}
		onLines := min(in.ManualDiscount, sum(open))
		for i, share := range spread(onLines, open) {
			p.LineDiscounts[i] += share
		}
		applied = append(applied, AppliedDiscount{Kind: DiscountKindManual, Title: "Manual discount", Amount: onLines,
			ShippingAmount: in.ManualDiscount - onLines})
	}

	p.Discounts = applied
	if p.Discounts == nil {
		p.Discounts = []AppliedDiscount{}
	}
	for _, d := range applied {
		p.Discount += d.Amount + d.ShippingAmount
	}
	p.Total = p.Subtotal + p.ShippingFee - p.Discount
	return p
}

// bestAutomatic is the qualifying automatic discount saving most on the
// cart by itself (ties: the older, then the lower id), and its saving.
func bestAutomatic(in PricingInput, full []int64) (*DiscountRule, int64) {
	var best *DiscountRule
	var bestSaving int64
	for i := range in.Automatic {
		d := &in.Automatic[i]
		if reason, _ := qualifies(*d, in.Lines); reason != "" || d.Type == DiscountFreeShipping {
			continue
		}
		saving := sum(lineShares(*d, in.Lines, full))
		if saving <= 0 {
			continue
		}
		switch {
		case best == nil, saving > bestSaving,
			saving == bestSaving && d.CreatedAt.Before(best.CreatedAt),
			saving == bestSaving && d.CreatedAt.Equal(best.CreatedAt) && bytes.Compare(d.ID[:], best.ID[:]) < 0:
			best, bestSaving = d, saving
		}
	}
	return best, bestSaving
}

// codeSaving is what a code saves on the cart alone (a free-shipping code:
// the shipping it waives).
func codeSaving(d DiscountRule, in PricingInput, full []int64) int64 {
	if d.Type != DiscountFreeShipping {
		return sum(lineShares(d, in.Lines, full))
	}
	fee, cod := shippingCharge(in, sum(full))
	if d.IncludeCODFee {
		return fee + cod
	}
	return fee
}

func shippingCharge(in PricingInput, discountedSubtotal int64) (fee, cod int64) {
	if in.Shipping == nil {
		return in.ManualShippingFee, 0
	}
	fee = in.Shipping.Fee
	if in.Shipping.FreeAboveSubtotal != nil && discountedSubtotal >= *in.Shipping.FreeAboveSubtotal {
		fee = 0
	}
	return fee, in.Shipping.CODFee
}

// eligible reports which lines a discount covers.
func eligible(d DiscountRule, lines []PricedLine) []bool {
	out := make([]bool, len(lines))
	for i, l := range lines {
		if l.GiftCard {
			continue
		}
		switch d.Scope {
		case "products":
			out[i] = l.ProductID != nil && slices.Contains(d.ProductIDs, *l.ProductID)
		case "categories":
			out[i] = slices.ContainsFunc(l.Categories, func(c uuid.UUID) bool { return slices.Contains(d.CategoryIDs, c) })
		default:
			out[i] = true
		}
	}
	return out
}

// qualifies checks a discount's conditions on the cart: eligible lines,
// and min_subtotal against their total before discounts.
func qualifies(d DiscountRule, lines []PricedLine) (reason string, required *int64) {
	var total int64
	found := false
	for i, ok := range eligible(d, lines) {
		if ok {
			found = true
			total += lines[i].Total
		}
	}
	if !found {
		return ReasonNoEligibleLines, nil
	}
	if d.MinSubtotal != nil && total < *d.MinSubtotal {
		return ReasonMinSubtotalNotMet, d.MinSubtotal
	}
	return "", nil
}

// lineShares is a discount's share of each line, taken from what remains of
// the lines: a percentage per eligible line, half up, capped by
// max_discount; a fixed amount up to the eligible total; caps and fixed
// amounts spread by largest remainder.
func lineShares(d DiscountRule, lines []PricedLine, remaining []int64) []int64 {
	base := make([]int64, len(lines))
	var baseTotal int64
	for i, ok := range eligible(d, lines) {
		if ok {
			base[i] = max(remaining[i], 0)
			baseTotal += base[i]
		}
	}
	switch d.Type {
	case DiscountPercentage:
		shares := make([]int64, len(lines))
		var total int64
		for i, b := range base {
			shares[i] = PercentOf(b, d.Value)
			total += shares[i]
		}
		if d.MaxDiscount != nil && total > *d.MaxDiscount {
			return spread(*d.MaxDiscount, base)
		}
		return shares
	case DiscountFixedAmount:
		return spread(min(d.Value, baseTotal), base)
	default:
		return make([]int64, len(lines))
	}
}

// PercentOf is pct percent of amount, half up: (amount × pct + 50) div 100.
func PercentOf(amount, pct int64) int64 {
	return (amount*pct + 50) / 100
}

// spread divides amount over weights pro rata by largest remainder: each
// gets floor(amount × w / Σw), and what is left goes one unit at a time to
// the largest remainders, ties to the earlier. The shares sum to amount
// (when Σw ≥ amount) and none exceeds its weight.
func spread(amount int64, weights []int64) []int64 {
	shares := make([]int64, len(weights))
	total := sum(weights)
	if amount <= 0 || total <= 0 {
		return shares
	}
	amount = min(amount, total)
	rems := make([]uint64, len(weights))
	var given int64
	for i, w := range weights {
		if w <= 0 {
			continue
		}
		hi, lo := bits.Mul64(uint64(amount), uint64(w))
		q, r := bits.Div64(hi, lo, uint64(total)) // amount ≤ total: hi < total
		shares[i], rems[i] = int64(q), r
		given += int64(q)
	}
	order := make([]int, 0, len(weights))
	for i, w := range weights {
		if w > 0 {
			order = append(order, i)
		}
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(rems[b], rems[a]) })
	for k := 0; given < amount; k++ {
		shares[order[k%len(order)]]++
		given++
	}
	return shares
}

// ProrateDiscount is the share of a line's discount that pieces of its
// quantity carry: half up (§14, for partial acceptance and returns).
func ProrateDiscount(lineDiscount int64, pieces, quantity int) int64 {
	if quantity <= 0 || pieces <= 0 {
		return 0
	}
	if pieces >= quantity {
		return lineDiscount
	}
	return (lineDiscount*int64(pieces)*2 + int64(quantity)) / (int64(quantity) * 2)
}

func sum(xs []int64) int64 {
	var s int64
	for _, x := range xs {
		s += x
	}
	return s
}

// priceOrder prices a new order with the one pricing function: the code
// asked for (a 422 when it cannot be used at all, a
// DiscountNotApplicableError when its conditions fail), the automatic
// discounts when asked for, the shipping (a merchant's rate or manual fee,
// or a storefront order's zone), and the manual discount. A total above
// 10^12 minor units, or below zero, is refused. It returns each counted
// discount's per-customer limit, for countDiscounts.
func (tx *Tx) priceOrder(ctx context.Context, o *Order, in NewOrder) (map[uuid.UUID]*int, error) {
	tooLarge := &InvalidError{Field: "lines", Code: "out_of_range", Message: "the order total must not exceed 10^12 minor units"}
	lines := make([]PricedLine, len(o.Lines))
	var subtotal int64
	for i, l := range o.Lines {
		var ok bool
		if subtotal, ok = addAmounts(subtotal, l.Total); !ok {
			return nil, tooLarge
		}
		lines[i] = PricedLine{Total: l.Total, ProductID: l.ProductID, GiftCard: l.GiftCardValue != nil}
	}
	input := PricingInput{Lines: lines, ManualShippingFee: in.ShippingFee, ManualDiscount: in.Discount}
	limits, err := tx.discountsFor(ctx, o.StoreID, &input, in.DiscountCode, in.ApplyAutomatic, o.CustomerID)
	if err != nil {
		return nil, err
	}
	var rate *ShippingRate
	switch {
	case in.ShipTo != nil:
		if rate, input.Shipping, err = tx.zoneShipping(ctx, o, in, Price(input).DiscountedSubtotal); err != nil {
			return nil, err
		}
	case in.ShippingRateID != nil:
		if rate, input.Shipping, err = tx.rateQuote(ctx, o, *in.ShippingRateID); err != nil {
			return nil, err
		}
	}
	p := Price(input)
	if p.CodeReason != "" {
		return nil, &DiscountNotApplicableError{Reason: p.CodeReason, RequiredSubtotal: p.RequiredSubtotal}
	}
	if p.Total > MaxAmount {
		return nil, tooLarge
	}
	if p.Total < 0 {
		return nil, &InvalidError{Field: "discount", Code: "out_of_range", Message: "must not exceed the subtotal plus shipping"}
	}
	o.Subtotal, o.ShippingFee, o.Discount, o.Total, o.Discounts = p.Subtotal, p.ShippingFee, p.Discount, p.Total, p.Discounts
	if rate != nil {
		o.ShippingLines = []ShippingLine{{RateID: rate.ID, ZoneID: rate.ZoneID, Name: rate.Name, Fee: p.Fee, CODFee: p.CODFee}}
	}
	for i := range o.Lines {
		o.Lines[i].Discount = p.LineDiscounts[i]
	}
	return limits, nil
}

// discountsFor fills in what a price's discounts depend on: the code asked
// for (a 422 on discount_code when it cannot be used at all) and whether
// the customer used it up, the live automatic discounts when asked for,
// and, when a discount is scoped to categories, the lines' categories. It returns the code's per-customer limit.
func (r reader) discountsFor(ctx context.Context, storeID uuid.UUID, in *PricingInput, code *string, automatic bool,
	customerID *uuid.UUID) (map[uuid.UUID]*int, error) {
	limits := map[uuid.UUID]*int{}
	if code == nil && !automatic {
		return limits, nil
	}
	d, rules, err := r.liveDiscounts(ctx, storeID, code, automatic)
	if err != nil {
		return nil, err
	}
	in.Automatic = rules
	if err := r.markGiftCardLines(ctx, storeID, in.Lines); err != nil {
		return nil, err
	}
	if code != nil {
		in.Code, limits[d.ID] = &d.DiscountRule, d.UsageLimitPerCustomer
		reached, err := r.customerReachedLimit(ctx, d, customerID)
		if err != nil {
			return nil, err
		}
		if reached {
			in.CodeBlocked = ReasonCustomerLimitReached
		}
	}
	byCategory := in.Code != nil && in.Code.Scope == "categories"
	for _, a := range in.Automatic {
		byCategory = byCategory || a.Scope == "categories"
	}
	if !byCategory {
		return limits, nil
	}
	products := make([]uuid.UUID, 0, len(in.Lines))
	for _, l := range in.Lines {
		if l.ProductID != nil {
			products = append(products, *l.ProductID)
		}
	}
	categories, err := r.productCategories(ctx, storeID, products)
	if err != nil {
		return nil, err
	}
	for i, l := range in.Lines {
		if l.ProductID != nil {
			in.Lines[i].Categories = categories[*l.ProductID]
		}
	}
	return limits, nil
}

// zoneShipping is a storefront order's shipping (§15): the rate asked for
// (a 422 when not offered where the order goes), else the cart's when
// offered, else the cheapest; ErrNotDeliverable when no zone covers the
// address; nothing to charge in a store without zones.
func (tx *Tx) zoneShipping(ctx context.Context, o *Order, in NewOrder, discountedSubtotal int64) (*ShippingRate, *ShippingQuote, error) {
	wanted := in.ShippingRateID
	if wanted == nil {
		wanted = in.PreferredRateID
	}
	choice, err := tx.chooseShipping(ctx, o.StoreID, in.ShipTo, orderGrams(*o), discountedSubtotal, o.PaymentMethod, wanted)
	if err != nil {
		return nil, nil, err
	}
	switch {
	case choice.Status == ShippingNotRequired:
		return nil, nil, nil
	case choice.Status == ShippingNotDeliverable && choice.Refused == "":
		return nil, nil, ErrNotDeliverable
	case choice.Refused != "" && (in.ShippingRateID != nil || choice.Rate == nil):
		return nil, nil, notOffered(choice.Refused)
	}
	return choice.Rate, choice.Quote, nil
}

func notOffered(field string) *InvalidError {
	if field == "payment_method" {
		return &InvalidError{Field: field, Code: "not_offered", Message: "the shipping rate does not take cash on delivery"}
	}
	return &InvalidError{Field: field, Code: "not_offered", Message: "the shipping rate is not offered for this address or weight"}
}

// orderGrams is a new order's weight, from its lines as read for placing.
func orderGrams(o Order) int {
	grams := 0
	for _, l := range o.Lines {
		grams += l.grams
	}
	return grams
}

// rateQuote is the charge of a store's rate for an order's lines: the band
// its weight falls in, the COD fee for cod, free_above_subtotal left for
// the pricing to compare with the discounted subtotal.
func (tx *Tx) rateQuote(ctx context.Context, o *Order, rateID uuid.UUID) (*ShippingRate, *ShippingQuote, error) {
	rate, err := scanRate(tx.tx.QueryRow(ctx, `SELECT `+rateColumns+` FROM shipping_rates WHERE store_id = $1 AND id = $2`, o.StoreID, rateID))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil, &InvalidError{Field: "shipping_rate_id", Code: "not_found", Message: "is not a shipping rate of the store"}
	}
	if err != nil {
		return nil, nil, fmt.Errorf("find rate: %w", err)
	}
	quote, refused := rateCharge(rate, orderGrams(*o), o.PaymentMethod)
	if refused != "" {
		return nil, nil, notOffered(refused)
	}
	return &rate, &quote, nil
}
