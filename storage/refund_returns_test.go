package storage_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/merchantsvc/svc/storage"
)

// Every (from, to) pair of the return machine (§13): requested → approved,
// declined or cancelled; approved → received or cancelled; received,
// declined and cancelled are final.
func TestReturnStatusMachine(t *testing.T) {
	allowed := map[[2]storage.ReturnStatus]bool{
		{storage.ReturnRequested, storage.ReturnApproved}:  true,
		{storage.ReturnRequested, storage.ReturnDeclined}:  true,
		{storage.ReturnRequested, storage.ReturnCancelled}: true,
		{storage.ReturnApproved, storage.ReturnReceived}:   true,
		{storage.ReturnApproved, storage.ReturnCancelled}:  true,
	}
	for _, from := range storage.ReturnStatuses {
		for _, to := range storage.ReturnStatuses {
			t.Run(fmt.Sprintf("%s to %s", from, to), func(t *testing.T) {
				require.Equal(t, allowed[[2]storage.ReturnStatus{from, to}], containsStatus(storage.ReturnAllowedNext(from), to))
			})
		}
	}
	require.Empty(t, storage.ReturnAllowedNext(storage.ReturnReceived))
	require.NotNil(t, storage.ReturnAllowedNext(storage.ReturnDeclined), "an empty list, never null: allowed_next is always an array")
}

func containsStatus(list []storage.ReturnStatus, s storage.ReturnStatus) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// A line's refundable value: its pieces less their pro-rata share of the
// discount, floored, never below zero.
func TestLineValue(t *testing.T) {
	for _, c := range []struct {
		name                         string
		unit                         int64
		pieces                       int
		subtotal, discount, expected int64
	}{
		{"no discount", 45000, 2, 90000, 0, 90000},
		{"whole order", 45000, 3, 135000, 1000, 135000 - 1000},
		{"one of three, floored share", 45000, 1, 135000, 1000, 45000 - 333},
		{"two of three", 45000, 2, 135000, 1000, 90000 - 666},
		{"uneven lines", 10000, 1, 30000, 100, 10000 - 33},
		{"discount above the subtotal", 5000, 1, 5000, 9000, 0},
		{"no subtotal (free goods)", 0, 2, 0, 500, 0},
		{"no pieces", 45000, 0, 135000, 1000, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			require.Equal(t, c.expected, storage.LineValue(c.unit, c.pieces, c.subtotal, c.discount))
		})
	}
}

// A refund's amount by §13: an explicit (goodwill) amount wins; lines and
// shipping pay their sum; neither pays refund_due (0 on COD).
func TestRefundAmount(t *testing.T) {
	amount := func(v int64) *int64 { return &v }
	for _, c := range []struct {
		name                  string
		explicit              *int64
		covers                bool
		linesAndShipping, due int64
		expected              int64
	}{
		{"lines at their value", nil, true, 45000 - 333, 0, 45000 - 333},
		{"lines and shipping", nil, true, 45000 - 333 + 5000, 0, 50000 - 333},
		{"shipping alone", nil, true, 5000, 0, 5000},
		{"goodwill without lines", amount(2500), false, 0, 0, 2500},
		{"goodwill below the lines", amount(1000), true, 44667, 0, 1000},
		{"goodwill above the lines (the cap decides)", amount(60000), true, 44667, 0, 60000},
		{"nothing sent: what is owed (prepaid partial acceptance)", nil, false, 0, 45000, 45000},
		{"nothing sent on COD: nothing owed", nil, false, 0, 0, 0},
		{"lines sent beat refund_due", nil, true, 44667, 90000, 44667},
	} {
		t.Run(c.name, func(t *testing.T) {
			require.Equal(t, c.expected, storage.RefundAmount(c.explicit, c.covers, c.linesAndShipping, c.due))
		})
	}
}
