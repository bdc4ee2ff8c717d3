package api_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/merchantsvc/svc/api"
)

// A shipment returned to sender opens an approved return of its pieces
// (refused_delivery); when every departed shipment is back the order is
// RETURNED without touching stock; receiving a return is what restocks.
func TestReturnedToSenderOpensAnApprovedReturn(t *testing.T) {
	h := newHarness(t, api.Config{})
	s := newShop(t, h, "rts", 10)
	location := h.defaultLocation(s.m.storeID)
	placed := h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders"), auth: bearer(s.token), body: orderBody(s.variantID, 3, "+201006667771")})
	require.Equal(t, http.StatusCreated, placed.Status, string(placed.Raw))
	orderID, lineID := placed.data()["id"].(string), orderLineID(placed.data())
	ship := func(qty int, tracking string) string {
		resp := h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders/"+orderID+"/shipments"), auth: bearer(s.token),
			body: map[string]any{"carrier": "aramex", "tracking_number": tracking, "lines": []any{map[string]any{"line_id": lineID, "quantity": qty}}}})
		require.Equal(t, http.StatusCreated, resp.Status, string(resp.Raw))
		id := resp.data()["id"].(string)
		require.Equal(t, http.StatusOK, h.shipmentEvent(s, id, map[string]any{"status": "in_transit"}).Status)
		return id
	}
	first, second := ship(2, "RTS-1"), ship(1, "RTS-2")
	onHand, reserved := h.level(s.variantID, location)
	require.Equal(t, [2]int{7, 0}, [2]int{onHand, reserved})

	refused := h.shipmentEvent(s, first, map[string]any{"status": "returned_to_sender", "note": "العميل رفض الاستلام"})
	require.Equal(t, http.StatusOK, refused.Status, string(refused.Raw))
	require.Equal(t, "none", refused.data()["cod_state"])
	require.Equal(t, "SHIPPED", h.order(s, orderID)["status"], "the second shipment is still on the road")
	returns := h.do(request{method: "GET", path: storePath(s.m.storeID, "/orders/"+orderID+"/returns"), auth: bearer(s.token)}).list()
	require.Len(t, returns, 1)
	ret := returns[0].(map[string]any)
	require.Equal(t, "approved", ret["status"])
	require.Equal(t, first, ret["shipment_id"])
	require.Equal(t, "RTS-1", ret["tracking_number"])
	require.EqualValues(t, 90000-667, ret["suggested_refund"], "two of three pieces less their share of the line's 10.00 discount, half up")
	require.Equal(t, []any{map[string]any{"line_id": lineID, "quantity": float64(2), "reason": "refused_delivery", "note": nil,
		"received_quantity": float64(0), "restocked_quantity": float64(0), "location_id": location}}, ret["lines"])
	require.ElementsMatch(t, []any{"received", "cancelled"}, ret["allowed_next"])

	require.Equal(t, http.StatusOK, h.shipmentEvent(s, second, map[string]any{"status": "returned_to_sender"}).Status)
	order := h.order(s, orderID)
	require.Equal(t, "RETURNED", order["status"], "every departed shipment came back")
	onHand, reserved = h.level(s.variantID, location)
	require.Equal(t, [2]int{7, 0}, [2]int{onHand, reserved}, "nothing is restocked before it is received")

	returnPath := storePath(s.m.storeID, "/returns/"+ret["id"].(string))
	receive := func(path string, lines ...map[string]any) response {
		items := make([]any, len(lines))
		for i, l := range lines {
			items[i] = l
		}
		return h.do(request{method: "POST", path: path + "/receive", auth: bearer(s.token), body: map[string]any{"lines": items}})
	}
	for _, c := range []struct {
		line        map[string]any
		field, code string
	}{
		{map[string]any{"line_id": lineID, "received_quantity": 3, "restock": true}, "lines[0].received_quantity", "out_of_range"},
		{map[string]any{"line_id": lineID, "received_quantity": 2}, "lines[0].restock", "required"},
		{map[string]any{"line_id": lineID, "received_quantity": 2, "restock": true, "location_id": "0190d3c4-0000-7000-8000-000000000009"}, "lines[0].location_id", "not_found"},
		{map[string]any{"line_id": "0190d3c4-0000-7000-8000-000000000008", "received_quantity": 1, "restock": true}, "lines[0].line_id", "not_found"},
	} {
		resp := receive(returnPath, c.line)
		require.Equal(t, http.StatusUnprocessableEntity, resp.Status, string(resp.Raw))
		require.Equal(t, c.code, resp.fieldCode(c.field), string(resp.Raw))
	}
	got := receive(returnPath, map[string]any{"line_id": lineID, "received_quantity": 2, "restock": true})
	require.Equal(t, http.StatusOK, got.Status, string(got.Raw))
	require.Equal(t, "received", got.data()["status"])
	line := got.data()["lines"].([]any)[0].(map[string]any)
	require.EqualValues(t, 2, line["restocked_quantity"])
	onHand, reserved = h.level(s.variantID, location)
	require.Equal(t, [2]int{9, 0}, [2]int{onHand, reserved}, "received and restocked at the shipment's origin")
	again := receive(returnPath, map[string]any{"line_id": lineID, "received_quantity": 2, "restock": true})
	require.Equal(t, http.StatusConflict, again.Status)
	require.Equal(t, "INVALID_RETURN_TRANSITION", again.errorCode())
	require.Equal(t, []any{}, again.errorField("allowed_next"))

	other := h.do(request{method: "GET", path: storePath(s.m.storeID, "/returns?status=approved"), auth: bearer(s.token)}).list()
	require.Len(t, other, 1)
	damaged := receive(storePath(s.m.storeID, "/returns/"+other[0].(map[string]any)["id"].(string)),
		map[string]any{"line_id": lineID, "received_quantity": 1, "restock": false})
	require.Equal(t, http.StatusOK, damaged.Status, string(damaged.Raw))
	onHand, _ = h.level(s.variantID, location)
	require.Equal(t, 9, onHand, "a piece not restocked touches no stock")
	order = h.order(s, orderID)
	require.EqualValues(t, 3, order["lines"].([]any)[0].(map[string]any)["returned_quantity"])
	require.Len(t, h.do(request{method: "GET", path: storePath(s.m.storeID, "/returns?status=received"), auth: bearer(s.token)}).list(), 2)
	require.Equal(t, http.StatusUnprocessableEntity, h.do(request{method: "GET", path: storePath(s.m.storeID, "/returns?status=lost"), auth: bearer(s.token)}).Status)
	h.requireLedgerBalances(s.m.storeID)
}

// A buyer sends back one of three shirts: the return is requested,
// approved with its tracking number, received and restocked; what may be
// returned is what was delivered less what came back and open returns.
func TestReturnRequestedApprovedReceived(t *testing.T) {
	h := newHarness(t, api.Config{})
	s := newShop(t, h, "returns", 10)
	location := h.defaultLocation(s.m.storeID)
	placed := h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders"), auth: bearer(s.token), body: orderBody(s.variantID, 3, "+201006667772")})
	require.Equal(t, http.StatusCreated, placed.Status)
	orderID, lineID := placed.data()["id"].(string), orderLineID(placed.data())
	ask := func(lines []any, approve bool) response {
		return h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders/"+orderID+"/returns"), auth: bearer(s.token),
			body: map[string]any{"lines": lines, "approve": approve}})
	}
	line := func(qty int, reason string, note any) map[string]any {
		l := map[string]any{"line_id": lineID, "quantity": qty, "reason": reason}
		if note != nil {
			l["note"] = note
		}
		return l
	}
	early := ask([]any{line(1, "size_or_fit", nil)}, false)
	require.Equal(t, http.StatusConflict, early.Status)
	require.Equal(t, "ORDER_NOT_RETURNABLE", early.errorCode())
	for _, status := range []string{"SHIPPED", "DELIVERED"} {
		require.Equal(t, http.StatusOK, h.do(request{method: "PATCH", path: storePath(s.m.storeID, "/orders/"+orderID+"/status"), auth: bearer(s.token),
			body: map[string]any{"status": status}}).Status)
	}
	for _, c := range []struct {
		line        map[string]any
		field, code string
	}{
		{line(4, "size_or_fit", nil), "lines[0].quantity", "exceeds_returnable"},
		{line(1, "refused_delivery", nil), "lines[0].reason", "one_of"},
		{line(1, "other", nil), "lines[0].note", "required"},
	} {
		resp := ask([]any{c.line}, false)
		require.Equal(t, http.StatusUnprocessableEntity, resp.Status, string(resp.Raw))
		require.Equal(t, c.code, resp.fieldCode(c.field))
		require.NotEmpty(t, resp.fieldMessageAr(c.field))
	}
	requested := ask([]any{line(1, "size_or_fit", "مقاس صغير")}, false)
	require.Equal(t, http.StatusCreated, requested.Status, string(requested.Raw))
	require.Equal(t, "requested", requested.data()["status"])
	require.EqualValues(t, 45000-333, requested.data()["suggested_refund"])
	require.Equal(t, "exceeds_returnable", ask([]any{line(3, "changed_mind", nil)}, false).fieldCode("lines[0].quantity"), "an open return holds its piece")

	returnPath := storePath(s.m.storeID, "/returns/"+requested.data()["id"].(string))
	move := func(verb string, body map[string]any) response {
		return h.do(request{method: "POST", path: returnPath + "/" + verb, auth: bearer(s.token), body: body})
	}
	early = h.do(request{method: "POST", path: returnPath + "/receive", auth: bearer(s.token),
		body: map[string]any{"lines": []any{map[string]any{"line_id": lineID, "received_quantity": 1, "restock": true}}}})
	require.Equal(t, http.StatusConflict, early.Status)
	require.Equal(t, "INVALID_RETURN_TRANSITION", early.errorCode())
	require.ElementsMatch(t, []any{"approved", "declined", "cancelled"}, early.errorField("allowed_next"))
	require.Equal(t, "required", move("decline", map[string]any{}).fieldCode("reason"))
	approved := move("approve", map[string]any{"tracking_number": "RET-1"})
	require.Equal(t, http.StatusOK, approved.Status, string(approved.Raw))
	require.Equal(t, "approved", approved.data()["status"])
	require.Equal(t, "RET-1", approved.data()["tracking_number"])
	require.Equal(t, "INVALID_RETURN_TRANSITION", move("decline", map[string]any{"reason": "late"}).errorCode())
	received := h.do(request{method: "POST", path: returnPath + "/receive", auth: bearer(s.token),
		body: map[string]any{"lines": []any{map[string]any{"line_id": lineID, "received_quantity": 1, "restock": true}}}})
	require.Equal(t, http.StatusOK, received.Status, string(received.Raw))
	onHand, reserved := h.level(s.variantID, location)
	require.Equal(t, [2]int{8, 0}, [2]int{onHand, reserved}, "one of three back on the shelf")
	require.Equal(t, "DELIVERED", h.order(s, orderID)["status"], "two pieces are still with the buyer")

	rest := ask([]any{line(2, "changed_mind", nil)}, true)
	require.Equal(t, http.StatusCreated, rest.Status, string(rest.Raw))
	require.Equal(t, "approved", rest.data()["status"])
	restPath := storePath(s.m.storeID, "/returns/"+rest.data()["id"].(string))
	cancelled := h.do(request{method: "POST", path: restPath + "/cancel", auth: bearer(s.token), body: map[string]any{"reason": "the buyer kept them"}})
	require.Equal(t, http.StatusOK, cancelled.Status, string(cancelled.Raw))
	require.Equal(t, "cancelled", cancelled.data()["status"])
	again := h.do(request{method: "POST", path: restPath + "/cancel", auth: bearer(s.token), body: map[string]any{}})
	require.Equal(t, "INVALID_RETURN_TRANSITION", again.errorCode())
	require.Equal(t, []any{}, again.errorField("allowed_next"))

	kinds := map[string]int{}
	for _, a := range h.do(request{method: "GET", path: storePath(s.m.storeID, "/orders/"+orderID+"/activities?limit=100"), auth: bearer(s.token)}).list() {
		kinds[a.(map[string]any)["kind"].(string)]++
	}
	for _, kind := range []string{"return_requested", "return_approved", "return_received", "return_cancelled"} {
		require.Positive(t, kinds[kind], "%s in %v", kind, kinds)
	}
	h.requireLedgerBalances(s.m.storeID)
}
