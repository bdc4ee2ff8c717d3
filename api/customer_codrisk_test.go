package api_test

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/merchantsvc/svc/api"
)

// carrierOrders places n COD orders to phone in a store, ships each with
// one of its carrier accounts, and has the carrier report the outcome
// (delivered, returned_to_sender) through its signed callback. It answers
// the orders' ids.
func (h *harness) carrierOrders(s shop, phone string, n int, outcome string) []string {
	h.t.Helper()
	var ids []string
	account := h.carrierAccount(s, "aramex", "Risk "+outcome)
	for i := range n {
		o := h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders"), auth: bearer(s.token), body: orderBody(s.variantID, 1, phone)})
		require.Equal(h.t, http.StatusCreated, o.Status, string(o.Raw))
		orderID, tracking := o.data()["id"].(string), fmt.Sprintf("RISK-%s-%s-%d", s.m.storeID[:8], outcome, i)
		shipped := h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders/"+orderID+"/shipments"), auth: bearer(s.token),
			body: map[string]any{"carrier_account_id": account.id, "tracking_number": tracking}})
		require.Equal(h.t, http.StatusCreated, shipped.Status, string(shipped.Raw))
		now := time.Now().UTC()
		cb := h.callback(account.id, account.secret, now, []map[string]any{
			{"event_id": tracking + "-1", "tracking_number": tracking, "status": "in_transit", "occurred_at": now.Add(-2 * time.Hour).Format(time.RFC3339)},
			{"event_id": tracking + "-2", "tracking_number": tracking, "status": outcome, "occurred_at": now.Add(-time.Hour).Format(time.RFC3339)}})
		require.Equal(h.t, http.StatusOK, cb.Status, string(cb.Raw))
		require.EqualValues(h.t, 2, cb.data()["applied"], string(cb.Raw))
		ids = append(ids, orderID)
	}
	return ids
}

// The cross-store COD network is fed by what carriers confirm (decisions
// §28): returns a carrier reported in two other stores flag the phone, and
// a carrier-confirmed delivery a merchant turns into a return through the
// API counts in its own store only (issue 48 §11).
func TestCODNetworkFedByCarrierCallbacks(t *testing.T) {
	h := newHarness(t, api.Config{})
	one, two, s := newShop(t, h, "net-one", 10), newShop(t, h, "net-two", 10), newShop(t, h, "net-victim", 10)
	const phone = "+201009998866"
	place := func(s shop, phone string) string {
		placed := h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders"), auth: bearer(s.token), body: orderBody(s.variantID, 1, phone)})
		require.Equal(t, http.StatusCreated, placed.Status, string(placed.Raw))
		return placed.data()["id"].(string)
	}

	// Delivered by the carrier, then moved to RETURNED by each merchant:
	// the merchant's word counts in its own store only.
	const delivered = "+201009998855"
	for _, other := range []shop{one, two} {
		for _, id := range h.carrierOrders(other, delivered, 1, "delivered") {
			moved := h.do(request{method: "PATCH", path: storePath(other.m.storeID, "/orders/"+id+"/status"), auth: bearer(other.token),
				body: map[string]any{"status": "RETURNED"}})
			require.Equal(t, http.StatusOK, moved.Status, string(moved.Raw))
		}
	}
	place(s, delivered)
	require.Empty(t, h.flags(s), "returns the merchants set themselves do not cross stores")

	h.carrierOrders(one, phone, 1, "returned_to_sender")
	h.carrierOrders(two, phone, 1, "returned_to_sender")
	flagged := place(s, phone)
	flags := h.flags(s)
	require.Len(t, flags, 1, "two other stores' carrier-confirmed returns flag the phone")
	require.Equal(t, flagged, flags[0].(map[string]any)["order_id"])
}
