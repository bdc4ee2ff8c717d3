package storage_test

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/merchantsvc/svc/storage"
)

func amountOf(v int64) *int64 { return &v }

// Pricing by §14's rules, case by case.
func TestPrice(t *testing.T) {
	shirt, scarf := uuid.New(), uuid.New()
	summer := uuid.New()
	lines := []storage.PricedLine{
		{Total: 45000, ProductID: &shirt, Categories: []uuid.UUID{summer}},
		{Total: 12000, ProductID: &scarf},
		{Total: 3333, ProductID: &scarf},
	} // subtotal 60333
	t0 := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	pct := func(v int64) storage.DiscountRule {
		return storage.DiscountRule{ID: uuid.New(), Method: storage.DiscountMethodAutomatic, Title: "pct", Type: storage.DiscountPercentage,
			Value: v, Scope: "order", CombinesWithAutomatic: true, CreatedAt: t0}
	}
	code := func(typ string, v int64) *storage.DiscountRule {
		return &storage.DiscountRule{ID: uuid.New(), Method: storage.DiscountMethodCode, Code: "RAMADAN", Title: "Ramadan", Type: typ, Value: v,
			Scope: "order", CombinesWithAutomatic: true, CreatedAt: t0}
	}
	for _, c := range []struct {
		name          string
		in            storage.PricingInput
		lineDiscounts []int64
		discount      int64
		shippingFee   int64
		total         int64
		codeReason    string
	}{
		{name: "old way: manual discount and fee, totals as before",
			in:            storage.PricingInput{Lines: lines, ManualShippingFee: 5000, ManualDiscount: 1000},
			lineDiscounts: []int64{746, 199, 55}, discount: 1000, shippingFee: 5000, total: 60333 + 5000 - 1000},
		{name: "percentage per line, half up",
			in:            storage.PricingInput{Lines: lines, Code: code(storage.DiscountPercentage, 15)},
			lineDiscounts: []int64{6750, 1800, 500}, discount: 9050, total: 60333 - 9050}, // 3333 × 15 = 49995 → 500
		{name: "percentage capped, the cap spread by largest remainder",
			in: storage.PricingInput{Lines: lines, Code: func() *storage.DiscountRule {
				d := code(storage.DiscountPercentage, 50)
				d.MaxDiscount = amountOf(1000)
				return d
			}()},
			lineDiscounts: []int64{746, 199, 55}, discount: 1000, total: 59333},
		{name: "fixed amount up to the eligible total",
			in: storage.PricingInput{Lines: lines, Code: func() *storage.DiscountRule {
				d := code(storage.DiscountFixedAmount, 100000)
				d.Scope, d.ProductIDs = "products", []uuid.UUID{scarf}
				return d
			}()},
			lineDiscounts: []int64{0, 12000, 3333}, discount: 15333, total: 45000},
		{name: "category scope", in: storage.PricingInput{Lines: lines, Code: func() *storage.DiscountRule {
			d := code(storage.DiscountPercentage, 10)
			d.Scope, d.CategoryIDs = "categories", []uuid.UUID{summer}
			return d
		}()}, lineDiscounts: []int64{4500, 0, 0}, discount: 4500, total: 60333 - 4500},
		{name: "automatic then the code on what remains",
			in:            storage.PricingInput{Lines: lines, Automatic: []storage.DiscountRule{pct(10)}, Code: code(storage.DiscountFixedAmount, 5000)},
			lineDiscounts: []int64{4500 + 3729, 1200 + 995, 333 + 276}, discount: 6033 + 5000, total: 60333 - 11033},
		{name: "the automatic saving most wins",
			in:            storage.PricingInput{Lines: lines, Automatic: []storage.DiscountRule{pct(5), pct(20), pct(10)}},
			lineDiscounts: []int64{9000, 2400, 667}, discount: 12067, total: 60333 - 12067},
		{name: "a code not combinable that saves less is reported",
			in: storage.PricingInput{Lines: lines, Automatic: []storage.DiscountRule{pct(20)}, Code: func() *storage.DiscountRule {
				d := code(storage.DiscountFixedAmount, 5000)
				d.CombinesWithAutomatic = false
				return d
			}()},
			lineDiscounts: []int64{9000, 2400, 667}, discount: 12067, total: 60333 - 12067, codeReason: storage.ReasonNotCombinable},
		{name: "a code not combinable that saves more applies alone",
			in: storage.PricingInput{Lines: lines, Automatic: []storage.DiscountRule{pct(5)}, Code: func() *storage.DiscountRule {
				d := code(storage.DiscountFixedAmount, 5000)
				d.CombinesWithAutomatic = false
				return d
			}()},
			lineDiscounts: []int64{3729, 995, 276}, discount: 5000, total: 55333},
		{name: "min_subtotal not met",
			in: storage.PricingInput{Lines: lines, Code: func() *storage.DiscountRule {
				d := code(storage.DiscountPercentage, 10)
				d.MinSubtotal = amountOf(100000)
				return d
			}()},
			lineDiscounts: []int64{0, 0, 0}, total: 60333, codeReason: storage.ReasonMinSubtotalNotMet},
		{name: "no eligible lines",
			in: storage.PricingInput{Lines: lines, Code: func() *storage.DiscountRule {
				d := code(storage.DiscountPercentage, 10)
				d.Scope, d.ProductIDs = "products", []uuid.UUID{uuid.New()}
				return d
			}()},
			lineDiscounts: []int64{0, 0, 0}, total: 60333, codeReason: storage.ReasonNoEligibleLines},
		{name: "free shipping waives the fee, not the COD fee",
			in: storage.PricingInput{Lines: lines, Code: code(storage.DiscountFreeShipping, 0),
				Shipping: &storage.ShippingQuote{Fee: 4500, CODFee: 1000}},
			lineDiscounts: []int64{0, 0, 0}, discount: 4500, shippingFee: 5500, total: 60333 + 1000},
		{name: "free shipping with include_cod_fee waives both",
			in: storage.PricingInput{Lines: lines, Code: func() *storage.DiscountRule {
				d := code(storage.DiscountFreeShipping, 0)
				d.IncludeCODFee = true
				return d
			}(), Shipping: &storage.ShippingQuote{Fee: 4500, CODFee: 1000}},
			lineDiscounts: []int64{0, 0, 0}, discount: 5500, shippingFee: 5500, total: 60333},
		{name: "free_above_subtotal compares the discounted subtotal",
			in: storage.PricingInput{Lines: lines, Automatic: []storage.DiscountRule{pct(10)},
				Shipping: &storage.ShippingQuote{Fee: 4500, FreeAboveSubtotal: amountOf(60000)}},
			lineDiscounts: []int64{4500, 1200, 333}, discount: 6033, shippingFee: 4500, total: 60333 - 6033 + 4500},
		{name: "manual discount last, over the lines and then the shipping",
			in:            storage.PricingInput{Lines: lines, ManualShippingFee: 5000, ManualDiscount: 62000},
			lineDiscounts: []int64{45000, 12000, 3333}, discount: 62000, shippingFee: 5000, total: 3333},
		{name: "customer limit reached",
			in:            storage.PricingInput{Lines: lines, Code: code(storage.DiscountPercentage, 10), CodeBlocked: storage.ReasonCustomerLimitReached},
			lineDiscounts: []int64{0, 0, 0}, total: 60333, codeReason: storage.ReasonCustomerLimitReached},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := storage.Price(c.in)
			require.Equal(t, c.lineDiscounts, p.LineDiscounts)
			require.Equal(t, c.discount, p.Discount)
			require.Equal(t, c.shippingFee, p.ShippingFee)
			require.Equal(t, c.total, p.Total)
			require.Equal(t, c.codeReason, p.CodeReason)
			var sum int64
			for _, d := range p.Discounts {
				sum += d.Amount + d.ShippingAmount
			}
			require.Equal(t, p.Discount, sum, "the discounts add up to the order's")
		})
	}
}

// For random carts and discounts, line discounts sum to the discounts'
// line amounts, no line goes below zero, and the total is what is left.
func TestPriceProperties(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	products := []uuid.UUID{uuid.New(), uuid.New(), uuid.New()}
	for range 5000 {
		lines := make([]storage.PricedLine, 1+rng.IntN(8))
		for i := range lines {
			lines[i] = storage.PricedLine{Total: rng.Int64N(1_000_000), ProductID: &products[rng.IntN(len(products))]}
		}
		rule := func(method string) storage.DiscountRule {
			d := storage.DiscountRule{ID: uuid.New(), Method: method, Code: "X", Scope: "order", CombinesWithAutomatic: rng.IntN(2) == 0}
			switch rng.IntN(3) {
			case 0:
				d.Type, d.Value = storage.DiscountPercentage, 1+rng.Int64N(100)
				if rng.IntN(2) == 0 {
					d.MaxDiscount = amountOf(1 + rng.Int64N(500_000))
				}
			case 1:
				d.Type, d.Value = storage.DiscountFixedAmount, 1+rng.Int64N(2_000_000)
			default:
				d.Type, d.Value = storage.DiscountPercentage, 100
			}
			if rng.IntN(3) == 0 {
				d.Scope, d.ProductIDs = "products", []uuid.UUID{products[rng.IntN(len(products))]}
			}
			return d
		}
		in := storage.PricingInput{Lines: lines, Automatic: []storage.DiscountRule{rule(storage.DiscountMethodAutomatic)},
			ManualShippingFee: rng.Int64N(10_000), ManualDiscount: rng.Int64N(50_000)}
		c := rule(storage.DiscountMethodCode)
		in.Code = &c
		p := storage.Price(in)
		var lineSum, amounts int64
		for i, d := range p.LineDiscounts {
			require.GreaterOrEqual(t, d, int64(0))
			require.LessOrEqual(t, d, lines[i].Total, "no line below zero")
			lineSum += d
		}
		for _, d := range p.Discounts {
			amounts += d.Amount
		}
		require.Equal(t, amounts, lineSum, "line discounts sum to the order's line discounts")
		require.Equal(t, p.Subtotal+p.ShippingFee-p.Discount, p.Total)
	}
}

// A line's discount prorated over pieces, half up.
func TestProrateDiscount(t *testing.T) {
	for _, c := range []struct {
		discount    int64
		pieces, qty int
		expected    int64
	}{
		{1000, 1, 3, 333}, {1000, 2, 3, 667}, {1000, 3, 3, 1000}, {5, 1, 2, 3}, {0, 1, 2, 0}, {999, 0, 3, 0}, {7, 5, 3, 7},
	} {
		require.Equal(t, c.expected, storage.ProrateDiscount(c.discount, c.pieces, c.qty), "%+v", c)
	}
}
