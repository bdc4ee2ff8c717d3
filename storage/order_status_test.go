package storage_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/merchantsvc/svc/storage"
)

// Every pair of statuses, allowed or refused, against the decisions §4 table.
func TestOrderStatusMachine(t *testing.T) {
	allowed := map[storage.OrderStatus][]storage.OrderStatus{
		"DRAFT":         {},
		"PENDING":       {"CONFIRMED", "PROCESSING", "READY_TO_SHIP", "SHIPPED", "CANCELLED"},
		"CONFIRMED":     {"PROCESSING", "READY_TO_SHIP", "SHIPPED", "CANCELLED"},
		"PROCESSING":    {"READY_TO_SHIP", "SHIPPED", "CANCELLED"},
		"READY_TO_SHIP": {"SHIPPED", "PROCESSING", "CANCELLED"},
		"SHIPPED":       {"DELIVERED", "RETURNED"},
		"DELIVERED":     {"RETURNED"},
		"RETURNED":      {},
		"CANCELLED":     {},
	}
	for _, from := range storage.OrderStatuses {
		for _, to := range storage.OrderStatuses {
			want := false
			for _, s := range allowed[from] {
				want = want || s == to
			}
			require.Equal(t, want, storage.CanMove(from, to), "%s → %s", from, to)
		}
		require.ElementsMatch(t, allowed[from], storage.AllowedNext(from), from)
	}
}
