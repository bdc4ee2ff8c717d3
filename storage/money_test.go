package storage

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestCheckedAmounts(t *testing.T) {
	for _, tc := range []struct {
		a, b int64
		sum  int64
		ok   bool
	}{
		{1, 2, 3, true},
		{math.MaxInt64, 1, 0, false},
		{math.MaxInt64 - 1, 1, math.MaxInt64, true},
		{math.MinInt64, -1, 0, false},
		{-5, 3, -2, true},
		{math.MaxInt64, math.MinInt64, -1, true},
	} {
		sum, ok := addAmounts(tc.a, tc.b)
		require.Equal(t, tc.ok, ok, "%d + %d", tc.a, tc.b)
		if ok {
			require.Equal(t, tc.sum, sum)
		}
	}
	for _, tc := range []struct {
		amount int64
		count  int
		ok     bool
	}{
		{MaxAmount, 10_000, true},
		{math.MaxInt64 / 2, 2, true},
		{math.MaxInt64/2 + 1, 2, false},
		{math.MaxInt64, math.MaxInt32, false},
		{-1, 1, false},
	} {
		product, ok := mulAmount(tc.amount, tc.count)
		require.Equal(t, tc.ok, ok, "%d × %d", tc.amount, tc.count)
		if ok {
			require.Equal(t, tc.amount*int64(tc.count), product)
		}
	}
}
