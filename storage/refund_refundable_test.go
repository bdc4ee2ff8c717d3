package storage

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// What an order can still give back is one rule, read by the returns page
// (FindRefundable) and held by CreateRefund: the paid total less live
// refunds, and, back to the card, no more than the card payment has left.
func TestRefundableForMethod(t *testing.T) {
	card := func(left int64) *gatewayPayment {
		return &gatewayPayment{provider: "stripe", reference: "pi_1", refundable: left}
	}
	for _, tc := range []struct {
		name                  string
		paid, refunded        int64
		card                  *gatewayPayment
		giftCards             int64
		manual, backToTheCard int64
	}{
		{"cash order", 10000, 0, nil, 0, 10000, 10000},
		{"cash order partly refunded", 10000, 2500, nil, 0, 7500, 7500},
		{"card order, nothing back yet", 10000, 0, card(10000), 0, 10000, 10000},
		{"card order with a recorded payment beside the card", 15000, 0, card(10000), 0, 15000, 10000},
		{"card order, part already back on the card", 15000, 4000, card(6000), 0, 11000, 6000},
		{"over-refunded never goes negative", 10000, 12000, card(0), 0, 0, 0},
		{"card order part-paid by gift cards: the cards first, then the card", 15000, 0, card(10000), 5000, 15000, 15000},
		{"gift cards and card, part back on each", 15000, 6000, card(7000), 2000, 9000, 9000},
		{"gift cards cover a recorded payment's part too", 15000, 0, card(5000), 5000, 15000, 10000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := refundableOf(Order{PaidTotal: tc.paid}, refundedSoFar{amount: tc.refunded}, tc.card, tc.giftCards)
			require.Equal(t, tc.manual, r.ForMethod(RefundCash))
			require.Equal(t, tc.backToTheCard, r.ForMethod(RefundOriginal))
			require.Equal(t, tc.card != nil, r.ToCard != nil)
		})
	}
}
