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
