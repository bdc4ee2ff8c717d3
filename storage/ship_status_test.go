package storage_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/merchantsvc/svc/storage"
)

// Every (from, to) pair of shipment statuses against decisions §12's
// machine: what is allowed, and what each refusal lists as allowed_next.
func TestShipmentStatusMachine(t *testing.T) {
	const (
		label     = storage.ShipmentLabelCreated
		transit   = storage.ShipmentInTransit
		out       = storage.ShipmentOutForDelivery
		failed    = storage.ShipmentFailedAttempt
		delivered = storage.ShipmentDelivered
		returned  = storage.ShipmentReturnedToSender
		cancelled = storage.ShipmentCancelled
	)
	allowed := map[storage.ShipmentStatus][]storage.ShipmentStatus{
		label:     {transit, out, delivered, cancelled},
		transit:   {out, failed, delivered, returned},
		out:       {transit, failed, delivered, returned},
		failed:    {transit, out, delivered, returned},
		delivered: {},
		returned:  {},
		cancelled: {},
	}
	require.Len(t, allowed, len(storage.ShipmentStatuses))
	for _, from := range storage.ShipmentStatuses {
		require.ElementsMatch(t, allowed[from], storage.ShipmentAllowedNext(from), "allowed_next of %s", from)
		require.Equal(t, len(allowed[from]) == 0, from.Final(), "%s final", from)
		for _, to := range storage.ShipmentStatuses {
			want := false
			for _, s := range allowed[from] {
				want = want || s == to
			}
			require.Equal(t, want, storage.ShipmentCanMove(from, to), "%s → %s", from, to)
			if from == to {
				require.False(t, storage.ShipmentCanMove(from, to), "a move to the status it has is refused")
			}
		}
	}
	for status, departed := range map[storage.ShipmentStatus]bool{label: false, transit: true, out: true, failed: true,
		delivered: true, returned: true, cancelled: false} {
		require.Equal(t, departed, status.Departed(), "%s departed", status)
	}
	require.False(t, storage.ShipmentStatus("created").Valid())
	require.False(t, storage.ShipmentCanMove("created", transit), "an unknown status goes nowhere")
}
