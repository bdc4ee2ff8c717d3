package storage

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestCODRiskScoreAndThreshold(t *testing.T) {
	for _, tc := range []struct {
		name  string
		risk  CODRisk
		score int
		high  bool
	}{
		{"no history", CODRisk{}, 0, false},
		{"one own return", CODRisk{OwnReturned: 1, OwnCompleted: 1}, 100, false},
		{"two own returns", CODRisk{OwnReturned: 2, OwnCompleted: 3}, 67, true},
		{"two own returns among many deliveries", CODRisk{OwnReturned: 2, OwnCompleted: 10}, 20, false},
		{"one other store, all returns", CODRisk{networkReturned: 3, networkCompleted: 3, networkStores: 1}, 100, false},
		{"two other stores with returns", CODRisk{networkReturned: 2, networkCompleted: 3, networkStores: 2}, 67, true},
		{"one own and one elsewhere", CODRisk{OwnReturned: 1, OwnCompleted: 1, networkReturned: 1, networkCompleted: 2, networkStores: 1}, 75, true},
		{"own deliveries outweigh the network", CODRisk{OwnCompleted: 4, networkReturned: 4, networkCompleted: 4, networkStores: 2}, 33, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.score, tc.risk.Score())
			require.Equal(t, tc.high, tc.risk.High())
		})
	}
}
