package storage

import (
	"math/bits"
	"math/rand/v2"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
)

func TestPaymentStatusFor(t *testing.T) {
	awaiting, rejected := ProofAwaitingReview, ProofRejected
	for _, tc := range []struct {
		name        string
		current     PaymentStatus
		paid, due   int64
		latestProof *ProofStatus
		want        PaymentStatus
	}{
		{"nothing paid", "pending", 0, 49000, nil, "pending"},
		{"part paid", "pending", 20000, 49000, nil, "partially_paid"},
		{"exactly covered", "partially_paid", 49000, 49000, nil, "paid"},
		{"over-covered after partial acceptance lowered the total", "paid", 49000, 45000, nil, "paid"},
		{"a proof waits", "pending", 0, 49000, &awaiting, "awaiting_review"},
		{"a proof waits on a part-paid order", "partially_paid", 100, 49000, &awaiting, "awaiting_review"},
		{"the latest proof was rejected", "awaiting_review", 0, 49000, &rejected, "pending"},
		{"paid beats a waiting proof", "awaiting_review", 49000, 49000, &awaiting, "paid"},
		{"nothing to collect is not paid by itself", "pending", 0, 0, nil, "pending"},
		{"nothing to collect stays paid once marked", "paid", 0, 0, nil, "paid"},
		{"unmarked: back to pending", "pending", 0, 49000, nil, "pending"},
		{"refund states are kept", "refunded", 0, 49000, nil, "refunded"},
		{"partial refund kept", "partially_refunded", 49000, 49000, nil, "partially_refunded"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, PaymentStatusFor(tc.current, tc.paid, tc.due, tc.latestProof))
		})
	}
}

func TestCommissionRoundsHalfUp(t *testing.T) {
	for _, tc := range []struct {
		amount int64
		bps    int
		want   int64
	}{
		{49000, 100, 490},
		{49050, 100, 491}, // 490.5 → 491
		{49049, 100, 490}, // 490.49 → 490
		{1, 100, 0},
		{50, 100, 1}, // 0.5 → 1
		{123456, 250, 3086},
		{0, 100, 0},
		{99999, 0, 0},
		{100, 10000, 100},
	} {
		require.Equal(t, tc.want, Commission(tc.amount, tc.bps), "%d at %d bps", tc.amount, tc.bps)
	}
}

func TestAcceptedValue(t *testing.T) {
	a, b := uuid.New(), uuid.New()
	// The 10.00 manual discount as pricing spreads it: 9.93 on a, 0.07 on b.
	order := func(returnedA, returnedB int, ship, shipOff int64, legacy bool) Order {
		o := Order{ShippingFee: ship, Discount: 1000 + shipOff,
			Lines: []OrderLine{{ID: a, Quantity: 3, UnitPrice: 45000, ReturnedQuantity: returnedA, Discount: 993},
				{ID: b, Quantity: 2, UnitPrice: 1000, ReturnedQuantity: returnedB, Discount: 7}},
			Discounts: []AppliedDiscount{{Kind: DiscountKindManual, Amount: 1000, ShippingAmount: shipOff}}}
		if legacy {
			o.Discounts = nil
			for i := range o.Lines {
				o.Lines[i].Discount = 0
			}
		}
		return o
	}
	for _, tc := range []struct {
		name string
		o    Order
		want int64
	}{
		{"all kept", order(0, 0, 5000, 0, false), 3*45000 + 2*1000 + 5000 - 1000},
		{"b had one back: its discount prorated half up", order(0, 1, 5000, 0, false), 3*45000 - 993 + 1000 - 4 + 5000},
		{"one of a kept", order(2, 0, 5000, 0, false), 45000 - 331 + 2000 - 7 + 5000},
		{"two of a kept", order(1, 0, 5000, 0, false), 90000 - 662 + 2000 - 7 + 5000},
		{"nothing kept, shipping still owed", order(3, 2, 5000, 0, false), 5000},
		{"a discount on the shipping stays off it", order(3, 2, 5000, 2000, false), 3000},
		{"before line discounts: the whole discount", order(2, 1, 5000, 0, true), 45000 + 1000 + 5000 - 1000},
		{"before line discounts: never below zero", order(3, 2, 0, 0, true), 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, AcceptedValue(tc.o))
		})
	}
}

// Multi-index hashing is exact only if every hash within distance 8 shares
// a band within distance 2: check it on random hashes and their neighbours.
func TestBandsFindEveryHashWithinEight(t *testing.T) {
	require.Len(t, bandNeighbours(0xBEEF, 21, 2), 1+21+210)
	require.Len(t, bandNeighbours(0xBEEF, 22, 2), 1+22+231)
	seen := map[int32]bool{}
	for _, v := range bandNeighbours(0xBEEF, 21, 2) {
		require.False(t, seen[v], "no value twice")
		seen[v] = true
		require.LessOrEqual(t, bits.OnesCount32(uint32(v^0xBEEF)), 2)
		require.Less(t, v, int32(1<<21))
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 5000 {
		q := rng.Uint64()
		near := q
		for range rng.IntN(SimilarDistance + 1) {
			near ^= 1 << rng.IntN(64)
		}
		qb, nb := bandsOf(q), bandsOf(near)
		found := false
		for i := range bandWidths {
			for _, v := range bandNeighbours(qb[i], bandWidths[i], bandRadius) {
				if v == nb[i] {
					found = true
				}
			}
		}
		require.True(t, found, "%016x vs %016x (distance %d)", q, near, bits.OnesCount64(q^near))
	}
	// A hash 9 bits away, 3 in each band, is out of reach: the radius is tight.
	far := uint64(0b111)<<43 | uint64(0b111)<<22 | 0b111
	qb, fb := bandsOf(0), bandsOf(far)
	for i := range bandWidths {
		require.NotContains(t, bandNeighbours(qb[i], bandWidths[i], bandRadius), fb[i])
	}
	require.Equal(t, [3]int32{0x1FFFFF, 0, 0x3FFFFF}, bandsOf(0xFFFFF80000_3FFFFF))
}
