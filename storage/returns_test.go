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
