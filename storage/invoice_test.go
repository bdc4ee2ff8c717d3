package storage

import (
	"math/rand/v2"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
)

// Amounts from inclusive prices (§27): per rate, the net of the whole is
// round_half_up(total × 10000 ÷ (10000 + rate_bp)) and the lines, spread by
// largest remainder, sum to it.
func TestTaxLinesFromInclusivePrices(t *testing.T) {
	lines := []InvoiceLine{{TotalIncl: 11500, TaxRateBP: 1500}, {TotalIncl: 100, TaxRateBP: 1500}, {TotalIncl: 101, TaxRateBP: 1500},
		{TotalIncl: 5000, TaxRateBP: 0}}
	totals := taxLines(lines)
	require.EqualValues(t, 1500, lines[0].Tax)
	// 11701 × 10000 ÷ 11500 = 10174.78… → 10175 net for the 15 % lines.
	require.EqualValues(t, 11701-10175, lines[0].Tax+lines[1].Tax+lines[2].Tax)
	require.EqualValues(t, 0, lines[3].Tax)
	require.Equal(t, InvoiceTotals{Net: 16701 - 1526, Tax: 1526, Total: 16701}, totals)

	// Half up: 23 × 10000 ÷ 11500 = 20.0 exactly; 1 × 10000 ÷ 11500 = 0.87 → 1.
	require.EqualValues(t, 20, withoutTax(23, 1500))
	require.EqualValues(t, 1, withoutTax(1, 1500))
	require.EqualValues(t, 87, withoutTax(100, 1500)) // 86.956…

	// Any lines: the sums hold and no line's tax is negative or above its total.
	for range 500 {
		var ls []InvoiceLine
		for range 1 + rand.IntN(6) {
			ls = append(ls, InvoiceLine{TotalIncl: rand.Int64N(1_000_000), TaxRateBP: []int{0, 500, 1400, 1500}[rand.IntN(4)]})
		}
		tt := taxLines(ls)
		var sum, tax int64
		byRate := map[int]int64{}
		for _, l := range ls {
			require.True(t, l.Tax >= 0 && l.Tax <= l.TotalIncl, "%+v", l)
			sum, tax = sum+l.TotalIncl, tax+l.Tax
			byRate[l.TaxRateBP] += l.TotalIncl
		}
		var want int64
		for rate, whole := range byRate {
			want += whole - withoutTax(whole, rate)
		}
		require.Equal(t, tt.Total, sum)
		require.Equal(t, tt.Tax, tax)
		require.Equal(t, want, tax)
	}
}

// An invoice's lines are what the buyer keeps: kept pieces less their share
// of the discount, shipping less its discount; gift cards sold are exempt.
func TestInvoiceLinesOfAnOrder(t *testing.T) {
	card := int64(5000)
	o := Order{ShippingFee: 3000, Lines: []OrderLine{
		{ID: uuid.New(), Name: "Abaya", Quantity: 3, ReturnedQuantity: 1, UnitPrice: 11500, Discount: 3000},
		{ID: uuid.New(), Name: "Card", Quantity: 1, UnitPrice: 5000, GiftCardValue: &card},
		{ID: uuid.New(), Name: "Gone", Quantity: 1, ReturnedQuantity: 1, UnitPrice: 100}},
		Discounts: []AppliedDiscount{{ShippingAmount: 1000}}}
	lines := invoiceLinesOf(o, taxTerms{defaultRateBP: 1500})
	require.Len(t, lines, 3)
	require.EqualValues(t, 2*11500-2000, lines[0].TotalIncl)
	require.Equal(t, 2, lines[0].Quantity)
	require.EqualValues(t, 10000, lines[0].UnitPriceExcl)
	require.Equal(t, TaxClassExempt, lines[1].TaxClass)
	require.Equal(t, 0, lines[1].TaxRateBP)
	require.Equal(t, "shipping", lines[2].Key)
	require.EqualValues(t, 2000, lines[2].TotalIncl)
}

func TestAmountInWords(t *testing.T) {
	for _, tc := range []struct {
		amount   int64
		currency string
		ar, en   string
	}{
		{123450, "SAR", "فقط ألف ومائتان وأربعة وثلاثون ريال سعودي وخمسون هللة لا غير", "One thousand two hundred thirty-four Saudi riyals and fifty halalas"},
		{200000, "EGP", "فقط ألفان جنيه مصري لا غير", "Two thousand Egyptian pounds"},
		{1500000000, "EGP", "فقط خمسة عشر مليونًا جنيه مصري لا غير", "Fifteen million Egyptian pounds"},
		{31100, "SAR", "فقط ثلاثمائة وأحد عشر ريال سعودي لا غير", "Three hundred eleven Saudi riyals"},
		{0, "SAR", "فقط صفر ريال سعودي لا غير", "Zero Saudi riyals"},
		{1250, "KWD", "فقط واحد دينار كويتي ومائتان وخمسون فلس لا غير", "One Kuwaiti dinar and two hundred fifty fils"},
	} {
		got := AmountInWords(tc.amount, tc.currency)
		require.Equal(t, tc.ar, got.AR)
		require.Equal(t, tc.en, got.EN)
	}
}
