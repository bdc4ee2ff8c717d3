package storage

import "math/bits"

// MaxAmount is the largest amount of money anything holds: 10^12 minor
// units (decisions part two). Inputs beyond it answer 422, and an order
// whose total would pass it is refused, so no sum or commission overflows.
const MaxAmount int64 = 1_000_000_000_000

// addAmounts adds amounts, reporting false on int64 overflow.
func addAmounts(a, b int64) (int64, bool) {
	sum := a + b
	return sum, (a >= 0) != (b >= 0) || (sum >= 0) == (a >= 0)
}

// mulAmount multiplies a non-negative amount by a non-negative count,
// reporting false on int64 overflow.
func mulAmount(amount int64, count int) (int64, bool) {
	if amount < 0 || count < 0 {
		return 0, false
	}
	hi, lo := bits.Mul64(uint64(amount), uint64(count))
	return int64(lo), hi == 0 && lo <= 1<<63-1
}
