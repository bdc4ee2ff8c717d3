package api_test

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/merchantsvc/svc/api"
)

// movementRef is what a movement says caused it (decisions §11), "" for
// null.
type movementRef struct {
	reason, order, shipment, ret, adjustment string
}

func refOf(m map[string]any) movementRef {
	id := func(name string) string {
		s, _ := m[name].(string)
		return s
	}
	return movementRef{reason: m["reason"].(string), order: id("order_id"), shipment: id("shipment_id"), ret: id("return_id"),
		adjustment: id("adjustment_id")}
}

// Every movement names what caused it, read back through the ledger: one
// row per reason and cause, each checking the movements that step wrote,
// so a rewrite of the stock moves cannot drop a reference unseen.
func TestEveryMovementNamesItsCause(t *testing.T) {
	h := newHarness(t, api.Config{})
	m := h.signup("ledger-refs")
	token := h.pat(m, "catalog:read", "catalog:write", "orders:read", "orders:write", "settings:write")
	s := shop{m: m, token: token}
	product := h.createProduct(token, m.storeID, map[string]any{"name": "Galabeya", "price": 25000, "quantity": 20})
	variants := h.do(request{method: "GET", path: storePath(m.storeID, "/products/"+product["id"].(string)+"/variants"), auth: bearer(token)}).list()
	s.variantID = variants[0].(map[string]any)["id"].(string)
	home := h.defaultLocation(m.storeID)
	alex := h.do(request{method: "POST", path: storePath(m.storeID, "/locations"), auth: bearer(token), body: map[string]any{"name": "Alexandria",
		"priority": 200, "address": map[string]any{"line1": "1 Corniche", "city": "Alexandria", "country": "EG"}}})
	require.Equal(t, http.StatusCreated, alex.Status, string(alex.Raw))
	alexID := alex.data()["id"].(string)

	// written reads the movements written since the last call, newest first.
	seen := map[string]bool{}
	written := func() []movementRef {
		t.Helper()
		list := h.do(request{method: "GET", path: storePath(m.storeID, "/inventory/movements?limit=100"), auth: bearer(token)})
		require.Equal(t, http.StatusOK, list.Status, string(list.Raw))
		refs := []movementRef{}
		for _, item := range list.list() {
			mv := item.(map[string]any)
			if !seen[mv["id"].(string)] {
				seen[mv["id"].(string)] = true
				refs = append(refs, refOf(mv))
			}
		}
		return refs
	}
	written()
	place := func(qty int, phone string) (orderID, lineID string) {
		t.Helper()
		placed := h.do(request{method: "POST", path: storePath(m.storeID, "/orders"), auth: bearer(token), body: orderBody(s.variantID, qty, phone)})
		require.Equal(t, http.StatusCreated, placed.Status, string(placed.Raw))
		return placed.data()["id"].(string), orderLineID(placed.data())
	}
	shipment := func(orderID, lineID string, qty int, location string) string {
		t.Helper()
		resp := h.do(request{method: "POST", path: storePath(m.storeID, "/orders/"+orderID+"/shipments"), auth: bearer(token),
			body: map[string]any{"carrier": "bosta", "location_id": location, "lines": []any{map[string]any{"line_id": lineID, "quantity": qty}}}})
		require.Equal(t, http.StatusCreated, resp.Status, string(resp.Raw))
		return resp.data()["id"].(string)
	}
	event := func(shipmentID, status string) {
		t.Helper()
		resp := h.shipmentEvent(s, shipmentID, map[string]any{"status": status})
		require.Equal(t, http.StatusOK, resp.Status, string(resp.Raw))
	}
	// sent places an order of qty, ships it whole from home and moves
	// the shipment through statuses.
	sent := func(qty int, phone string, statuses ...string) (orderID, lineID, shipmentID string) {
		t.Helper()
		orderID, lineID = place(qty, phone)
		shipmentID = shipment(orderID, lineID, qty, home)
		for _, status := range statuses {
			event(shipmentID, status)
		}
		return orderID, lineID, shipmentID
	}
	post := func(path string, body map[string]any) response {
		t.Helper()
		resp := h.do(request{method: "POST", path: storePath(m.storeID, path), auth: bearer(token), body: body})
		require.Less(t, resp.Status, 300, string(resp.Raw))
		return resp
	}
	adjustment := func(key string, body map[string]any) string {
		t.Helper()
		resp := h.adjust(s, key, body)
		require.Equal(t, http.StatusCreated, resp.Status, string(resp.Raw))
		return resp.data()["adjustment_id"].(string)
	}
	change := func(location string, field string, n int) []any {
		return []any{map[string]any{"variant_id": s.variantID, "location_id": location, field: n}}
	}
	var (
		reserved, cancelled, twoParcels, atTheDoor, refusedOrder, keptOrder string
		moved, first, second, door, refused, refusal, kept, keptReturn      string
	)

	for _, row := range []struct {
		name string
		// step makes the change (and whatever it needs first, read off by
		// written) and says what its movements must name.
		step func() []movementRef
	}{
		{"correction by a quantity write", func() []movementRef {
			resp := h.do(request{method: "PATCH", path: storePath(m.storeID, "/products/"+product["id"].(string)), auth: bearer(token),
				body: map[string]any{"quantity": 30}})
			require.Equal(t, http.StatusOK, resp.Status, string(resp.Raw))
			return []movementRef{{reason: "correction"}}
		}},
		{"received by an adjustment", func() []movementRef {
			id := adjustment("received", map[string]any{"reason": "received", "changes": change(alexID, "delta", 5)})
			return []movementRef{{reason: "received", adjustment: id}}
		}},
		{"damaged by an adjustment", func() []movementRef {
			id := adjustment("damaged", map[string]any{"reason": "damaged", "changes": change(home, "delta", -1)})
			return []movementRef{{reason: "damaged", adjustment: id}}
		}},
		{"correction by an adjustment", func() []movementRef {
			id := adjustment("correction", map[string]any{"reason": "correction", "changes": change(home, "set_on_hand", 25)})
			return []movementRef{{reason: "correction", adjustment: id}}
		}},
		{"order_reserve at placement", func() []movementRef {
			reserved, _ = place(2, "+201007770001")
			return []movementRef{{reason: "order_reserve", order: reserved}}
		}},
		{"order_release at the order's cancellation", func() []movementRef {
			cancelled = reserved
			resp := h.do(request{method: "DELETE", path: storePath(m.storeID, "/orders/"+cancelled), auth: bearer(token)})
			require.Equal(t, http.StatusNoContent, resp.Status, string(resp.Raw))
			return []movementRef{{reason: "order_release", order: cancelled}}
		}},
		{"reservation moved to a shipment's location", func() []movementRef {
			var line string
			twoParcels, line = place(3, "+201007770002")
			written()
			moved = shipment(twoParcels, line, 2, alexID)
			return []movementRef{{reason: "order_reserve", order: twoParcels, shipment: moved}, {reason: "order_release", order: twoParcels, shipment: moved}}
		}},
		{"shipment cancellation keeps its reservations and moves nothing", func() []movementRef {
			post("/shipments/"+moved+"/cancel", map[string]any{"reason": "wrong courier"})
			return []movementRef{}
		}},
		{"order_ship at the first parcel's departure", func() []movementRef {
			line := orderLineID(h.order(s, twoParcels))
			first, second = shipment(twoParcels, line, 2, alexID), shipment(twoParcels, line, 1, home)
			require.Empty(t, written(), "each parcel's pieces are reserved where it leaves from")
			event(first, "in_transit")
			return []movementRef{{reason: "order_ship", order: twoParcels, shipment: first}}
		}},
		{"order_ship at the second parcel's departure", func() []movementRef {
			event(second, "out_for_delivery")
			return []movementRef{{reason: "order_ship", order: twoParcels, shipment: second}}
		}},
		{"return_restock of pieces refused at the door (COD partial acceptance)", func() []movementRef {
			var line string
			atTheDoor, line, door = sent(3, "+201007770003", "in_transit")
			written()
			post("/orders/"+atTheDoor+"/partial-acceptance", map[string]any{"lines": []any{map[string]any{"line_id": line, "accepted_quantity": 1}}})
			return []movementRef{{reason: "return_restock", order: atTheDoor, shipment: door}}
		}},
		{"return_restock at the receipt of a shipment's refused return", func() []movementRef {
			var line string
			refusedOrder, line, refused = sent(2, "+201007770004", "in_transit", "returned_to_sender")
			returns := h.do(request{method: "GET", path: storePath(m.storeID, "/orders/"+refusedOrder+"/returns"), auth: bearer(token)}).list()
			require.Len(t, returns, 1)
			refusal = returns[0].(map[string]any)["id"].(string)
			written()
			post("/returns/"+refusal+"/receive", map[string]any{"lines": []any{map[string]any{"line_id": line, "received_quantity": 2, "restock": true}}})
			return []movementRef{{reason: "return_restock", order: refusedOrder, shipment: refused, ret: refusal}}
		}},
		{"return_restock at the receipt of a customer's return", func() []movementRef {
			var line string
			keptOrder, line, kept = sent(1, "+201007770005", "delivered")
			keptReturn = post("/orders/"+keptOrder+"/returns", map[string]any{"approve": true,
				"lines": []any{map[string]any{"line_id": line, "quantity": 1, "reason": "size_or_fit"}}}).data()["id"].(string)
			written()
			post("/returns/"+keptReturn+"/receive", map[string]any{"lines": []any{map[string]any{"line_id": line, "received_quantity": 1, "restock": true}}})
			return []movementRef{{reason: "return_restock", order: keptOrder, ret: keptReturn}}
		}},
	} {
		want := row.step()
		require.ElementsMatch(t, want, written(), row.name)
	}

	// The ledger filters by the shipment and the return that caused a movement.
	for _, c := range []struct {
		query string
		want  []movementRef
	}{
		{"shipment_id=" + moved, []movementRef{{reason: "order_reserve", order: twoParcels, shipment: moved}, {reason: "order_release", order: twoParcels, shipment: moved}}},
		{"shipment_id=" + first, []movementRef{{reason: "order_ship", order: twoParcels, shipment: first}}},
		{"shipment_id=" + refused, []movementRef{{reason: "order_ship", order: refusedOrder, shipment: refused},
			{reason: "return_restock", order: refusedOrder, shipment: refused, ret: refusal}}},
		{"return_id=" + refusal, []movementRef{{reason: "return_restock", order: refusedOrder, shipment: refused, ret: refusal}}},
		{"return_id=" + keptReturn + "&reason=return_restock", []movementRef{{reason: "return_restock", order: keptOrder, ret: keptReturn}}},
		{"shipment_id=" + kept, []movementRef{{reason: "order_ship", order: keptOrder, shipment: kept}}},
	} {
		resp := h.do(request{method: "GET", path: storePath(m.storeID, "/inventory/movements?"+c.query), auth: bearer(token)})
		require.Equal(t, http.StatusOK, resp.Status, string(resp.Raw))
		got := []movementRef{}
		for _, item := range resp.list() {
			got = append(got, refOf(item.(map[string]any)))
		}
		require.ElementsMatch(t, c.want, got, c.query)
	}
	for _, field := range []string{"shipment_id", "return_id"} {
		resp := h.do(request{method: "GET", path: storePath(m.storeID, fmt.Sprintf("/inventory/movements?%s=ORD-1001-1", field)), auth: bearer(token)})
		require.Equal(t, http.StatusUnprocessableEntity, resp.Status, string(resp.Raw))
		require.Equal(t, "invalid_uuid", resp.fieldCode(field), string(resp.Raw))
	}
	h.requireLedgerBalances(m.storeID)
}
