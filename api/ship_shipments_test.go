package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/merchantsvc/svc/api"
	"github.com/merchantsvc/svc/internal/testenv"
	"github.com/merchantsvc/svc/internal/webhook"
)

// arabicOrderBody is orderBody with an Arabic consignee.
func arabicOrderBody(variantID string, qty int, phone string) map[string]any {
	body := orderBody(variantID, qty, phone)
	body["customer"] = map[string]any{"name": "منى عادل", "phone": phone}
	body["shipping_address"] = map[string]any{"name": "منى عادل", "phone": phone, "line1": "12 شارع التحرير، الدقي",
		"city": "الجيزة", "country": "EG"}
	return body
}

// carrierAccount is a carrier account as created, with its secret.
type carrierAccount struct {
	id, secret, callbackURL string
}

func (h *harness) carrierAccount(s shop, carrier, name string) carrierAccount {
	h.t.Helper()
	resp := h.do(request{method: "POST", path: storePath(s.m.storeID, "/carrier-accounts"), auth: bearer(s.token),
		body: map[string]any{"carrier": carrier, "name": name}})
	require.Equal(h.t, http.StatusCreated, resp.Status, string(resp.Raw))
	d := resp.data()
	return carrierAccount{id: d["id"].(string), secret: d["callback_secret"].(string), callbackURL: d["callback_url"].(string)}
}

// callback posts a carrier's batch signed with secret at t.
func (h *harness) callback(accountID, secret string, t time.Time, events []map[string]any) response {
	h.t.Helper()
	body, err := json.Marshal(map[string]any{"events": events})
	require.NoError(h.t, err)
	v1, _ := webhook.Sign(secret, body, t)
	return h.do(request{method: "POST", path: "/api/v1/carrier-callbacks/" + accountID, body: body,
		headers: map[string]string{"X-SVC-Carrier-Signature": v1}})
}

func (h *harness) shipmentEvent(s shop, shipmentID string, body map[string]any) response {
	h.t.Helper()
	return h.do(request{method: "POST", path: storePath(s.m.storeID, "/shipments/"+shipmentID+"/events"), auth: bearer(s.token), body: body})
}

func (h *harness) order(s shop, orderID string) map[string]any {
	h.t.Helper()
	resp := h.do(request{method: "GET", path: storePath(s.m.storeID, "/orders/"+orderID), auth: bearer(s.token)})
	require.Equal(h.t, http.StatusOK, resp.Status, string(resp.Raw))
	return resp.data()
}

func (h *harness) openExceptions(storeID, orderID string) []string {
	h.t.Helper()
	rows, err := testenv.SQL(h.t, h.db).Query(context.Background(), `SELECT reason FROM autopilot_exceptions
		WHERE store_id = $1 AND order_id = $2 AND status = 'open' ORDER BY reason`, storeID, orderID)
	require.NoError(h.t, err)
	defer rows.Close()
	var reasons []string
	for rows.Next() {
		var r string
		require.NoError(h.t, rows.Scan(&r))
		reasons = append(reasons, r)
	}
	return reasons
}

func orderLineID(order map[string]any) string {
	return order["lines"].([]any)[0].(map[string]any)["id"].(string)
}

// One cash-on-delivery order, end to end: two shipments (one through a
// carrier's signed callbacks, one through the API), a failed attempt,
// delivery, the cash reconciled into a paid order, its waybill rendered by
// its workflow, and a remittance with one short item.
func TestOneOrderFromPlacementToRemittance(t *testing.T) {
	h := newHarness(t, api.Config{})
	h.startWorker(nil)
	s := newShop(t, h, "fulfil", 10)
	account := h.carrierAccount(s, "aramex", "Aramex Cairo")
	require.True(t, strings.HasPrefix(account.secret, "csec_"))
	require.Equal(t, h.url+"/api/v1/carrier-callbacks/"+account.id, account.callbackURL)
	listed := h.do(request{method: "GET", path: storePath(s.m.storeID, "/carrier-accounts/"+account.id), auth: bearer(s.token)})
	require.Equal(t, http.StatusOK, listed.Status)
	require.NotContains(t, string(listed.Raw), account.secret, "the secret is shown once")

	placed := h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders"), auth: bearer(s.token), body: arabicOrderBody(s.variantID, 3, "+201001112223")})
	require.Equal(t, http.StatusCreated, placed.Status, string(placed.Raw))
	orderID, lineID := placed.data()["id"].(string), orderLineID(placed.data())
	require.EqualValues(t, 139000, placed.data()["total"])
	location := h.defaultLocation(s.m.storeID)

	first := h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders/"+orderID+"/shipments"), auth: bearer(s.token),
		body: map[string]any{"lines": []any{map[string]any{"line_id": lineID, "quantity": 2}}, "carrier_account_id": account.id,
			"tracking_number": "AWB-FIRST-1", "cod_amount": 90000}})
	require.Equal(t, http.StatusCreated, first.Status, string(first.Raw))
	one := first.data()
	require.Equal(t, "ORD-1001-1", one["number"])
	require.Equal(t, "label_created", one["status"])
	require.Equal(t, "aramex", one["carrier"])
	require.Equal(t, "pending", one["cod_state"])
	require.Equal(t, map[string]any{"status": "pending", "download_url": nil}, one["waybill"])
	require.ElementsMatch(t, []any{"in_transit", "out_for_delivery", "delivered", "cancelled"}, one["allowed_next"])

	second := h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders/"+orderID+"/shipments"), auth: bearer(s.token),
		body: map[string]any{"carrier": "bosta", "tracking_number": "BOSTA-2"}})
	require.Equal(t, http.StatusCreated, second.Status, string(second.Raw))
	two := second.data()
	require.Equal(t, "ORD-1001-2", two["number"])
	require.Equal(t, []any{map[string]any{"line_id": lineID, "quantity": float64(1)}}, two["lines"], "the unshipped piece by default")
	require.EqualValues(t, 49000, two["cod_amount"], "the balance less the other open shipment")
	nothing := h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders/"+orderID+"/shipments"), auth: bearer(s.token),
		body: map[string]any{"carrier": "other"}})
	require.Equal(t, http.StatusConflict, nothing.Status)
	require.Equal(t, "NOTHING_TO_SHIP", nothing.errorCode())

	// The waybill, rendered by its workflow, downloads only through the API.
	shipmentPath := storePath(s.m.storeID, "/shipments/"+one["id"].(string))
	waitFor(t, "the first waybill", func() bool {
		return h.do(request{method: "GET", path: shipmentPath, auth: bearer(s.token)}).data()["waybill"].(map[string]any)["status"] == "ready"
	})
	got := h.do(request{method: "GET", path: shipmentPath, auth: bearer(s.token)}).data()
	require.Equal(t, h.url+"/api/v1/stores/"+s.m.storeID+"/shipments/"+one["id"].(string)+"/waybill", got["waybill"].(map[string]any)["download_url"])
	pdf := h.do(request{method: "GET", path: shipmentPath + "/waybill", auth: bearer(s.token)})
	require.Equal(t, http.StatusOK, pdf.Status, string(pdf.Raw))
	require.Equal(t, "application/pdf", pdf.Header.Get("Content-Type"))
	require.Equal(t, `attachment; filename="AWB-ORD-1001-1.pdf"`, pdf.Header.Get("Content-Disposition"))
	require.Equal(t, "private, no-store", pdf.Header.Get("Cache-Control"))
	file := filepath.Join(t.TempDir(), "awb.pdf")
	require.NoError(t, os.WriteFile(file, pdf.Raw, 0o600))
	text, err := exec.Command("pdftotext", "-enc", "UTF-8", file, "-").Output()
	require.NoError(t, err)
	for _, want := range []string{"منى عادل", "الجيزة", "AWB-FIRST-1", "+201001112223", "900.00 EGP", "٩٠٠٫٠٠"} {
		require.Contains(t, string(text), want)
	}
	other := newShop(t, h, "fulfil-other", 1)
	require.Equal(t, http.StatusForbidden, h.do(request{method: "GET", path: shipmentPath + "/waybill", auth: bearer(other.token)}).Status)

	// The carrier reports the first shipment on its way: the order ships.
	now := time.Now().UTC()
	cb := h.callback(account.id, account.secret, now, []map[string]any{
		{"event_id": "ev-1", "tracking_number": "AWB-FIRST-1", "status": "in_transit", "occurred_at": now.Add(-time.Hour).Format(time.RFC3339)}})
	require.Equal(t, http.StatusOK, cb.Status, string(cb.Raw))
	require.EqualValues(t, 1, cb.data()["applied"])
	order := h.order(s, orderID)
	require.Equal(t, "SHIPPED", order["status"])
	require.Equal(t, "AWB-FIRST-1", order["tracking_number"])
	onHand, reserved := h.level(s.variantID, location)
	require.Equal(t, [2]int{8, 1}, [2]int{onHand, reserved}, "two pieces left with the first shipment, one still reserved")

	// The second goes through the API: a failed attempt, then delivery.
	secondID := two["id"].(string)
	for _, status := range []string{"in_transit", "failed_attempt"} {
		resp := h.shipmentEvent(s, secondID, map[string]any{"status": status})
		require.Equal(t, http.StatusOK, resp.Status, string(resp.Raw))
	}
	require.Equal(t, []string{"delivery_failed"}, h.openExceptions(s.m.storeID, orderID))
	require.Equal(t, "SHIPPED", h.order(s, orderID)["status"], "a failed attempt changes no status")
	require.Equal(t, "BOSTA-2", h.order(s, orderID)["tracking_number"], "a later departure names its tracking number")
	require.Equal(t, http.StatusOK, h.shipmentEvent(s, secondID, map[string]any{"status": "out_for_delivery"}).Status)
	delivered := h.shipmentEvent(s, secondID, map[string]any{"status": "delivered", "cod_collected": 49000, "note": "تم التسليم"})
	require.Equal(t, http.StatusOK, delivered.Status, string(delivered.Raw))
	require.Equal(t, "collected", delivered.data()["cod_state"])
	require.Len(t, delivered.data()["events"], 5)
	require.Equal(t, "SHIPPED", h.order(s, orderID)["status"], "the first shipment is still on the road")

	cb = h.callback(account.id, account.secret, time.Now(), []map[string]any{
		{"event_id": "ev-2", "tracking_number": "AWB-FIRST-1", "status": "delivered", "occurred_at": time.Now().UTC().Format(time.RFC3339), "cod_collected": 90000}})
	require.Equal(t, http.StatusOK, cb.Status, string(cb.Raw))
	order = h.order(s, orderID)
	require.Equal(t, "DELIVERED", order["status"])
	require.Equal(t, "paid", order["payment_status"], "the couriers collected what the order expected")
	require.EqualValues(t, 139000, order["paid_total"])

	// The carrier pays out, 40.00 short on the second shipment.
	remit := func(key string, body map[string]any) response {
		return h.do(request{method: "POST", path: storePath(s.m.storeID, "/cod-remittances"), auth: bearer(s.token), body: body,
			headers: map[string]string{"Idempotency-Key": key}})
	}
	payout := map[string]any{"carrier_account_id": account.id, "reference": "ARX-2026-11-24", "remitted_at": time.Now().UTC().Format(time.RFC3339),
		"items": []any{
			map[string]any{"shipment_id": one["id"], "collected": 90000, "fee": 1500},
			map[string]any{"tracking_number": "BOSTA-2", "collected": 45000, "fee": 1000},
		}}
	rem := remit("payout-1", payout)
	require.Equal(t, http.StatusCreated, rem.Status, string(rem.Raw))
	require.EqualValues(t, 135000, rem.data()["total_collected"])
	require.EqualValues(t, 2500, rem.data()["total_fees"])
	require.EqualValues(t, 132500, rem.data()["net"])
	require.Equal(t, []any{map[string]any{"shipment_id": secondID, "expected": float64(49000), "collected": float64(45000), "kind": "short"}},
		rem.data()["discrepancies"])
	states := map[string]string{}
	for _, sh := range h.do(request{method: "GET", path: storePath(s.m.storeID, "/orders/"+orderID+"/shipments"), auth: bearer(s.token)}).list() {
		sh := sh.(map[string]any)
		states[sh["number"].(string)] = sh["cod_state"].(string)
	}
	require.Equal(t, map[string]string{"ORD-1001-1": "remitted", "ORD-1001-2": "mismatch"}, states)
	mismatched := h.do(request{method: "GET", path: storePath(s.m.storeID, "/shipments?cod_state=mismatch"), auth: bearer(s.token)}).list()
	require.Len(t, mismatched, 1)

	dup := remit("payout-2", payout)
	require.Equal(t, http.StatusConflict, dup.Status)
	require.Equal(t, "DUPLICATE_REMITTANCE", dup.errorCode())
	payout["reference"] = "ARX-2026-11-25"
	again := remit("payout-3", payout)
	require.Equal(t, http.StatusConflict, again.Status)
	require.Equal(t, "ALREADY_REMITTED", again.errorCode())
	noKey := h.do(request{method: "POST", path: storePath(s.m.storeID, "/cod-remittances"), auth: bearer(s.token), body: payout})
	require.Equal(t, http.StatusPreconditionRequired, noKey.Status)
	require.Equal(t, "IDEMPOTENCY_KEY_REQUIRED", noKey.errorCode())
	// The short 40.00 arrives later and settles the mismatch.
	correction := remit("payout-4", map[string]any{"carrier": "bosta", "reference": "BOSTA-FIX-1", "remitted_at": time.Now().UTC().Format(time.RFC3339),
		"items": []any{map[string]any{"shipment_id": secondID, "collected": 4000, "fee": 0}}})
	require.Equal(t, http.StatusCreated, correction.Status, string(correction.Raw))
	require.Empty(t, correction.data()["discrepancies"])
	require.Equal(t, "remitted", h.do(request{method: "GET", path: storePath(s.m.storeID, "/shipments/"+secondID), auth: bearer(s.token)}).data()["cod_state"])
	require.Len(t, h.do(request{method: "GET", path: storePath(s.m.storeID, "/cod-remittances"), auth: bearer(s.token)}).list(), 2)

	activities := h.do(request{method: "GET", path: storePath(s.m.storeID, "/orders/"+orderID+"/activities?limit=100"), auth: bearer(s.token)})
	kinds := map[string]int{}
	for _, a := range activities.list() {
		kinds[a.(map[string]any)["kind"].(string)]++
	}
	for _, kind := range []string{"shipment_created", "shipment_status", "waybill_ready", "cod_remitted", "status_changed", "payment_paid"} {
		require.Positive(t, kinds[kind], "the activity log has %s: %v", kind, kinds)
	}
	require.Len(t, h.events(s.m.storeID, "order.status_changed"), 2, "SHIPPED and DELIVERED, through order.status_changed only")
	h.requireLedgerBalances(s.m.storeID)
}

// carrierTimeline is a shipment's life as a carrier reports it.
func carrierTimeline(tracking, prefix string, start time.Time) []map[string]any {
	statuses := []string{"in_transit", "out_for_delivery", "failed_attempt", "out_for_delivery", "delivered"}
	events := make([]map[string]any, 0, len(statuses))
	for i, status := range statuses {
		events = append(events, map[string]any{"event_id": fmt.Sprintf("%s-%d", prefix, i), "tracking_number": tracking, "status": status,
			"occurred_at": start.Add(time.Duration(i) * time.Hour).Format(time.RFC3339)})
	}
	return events
}

// A carrier resends out of order: a shuffled batch of a shipment's events
// ends where the ordered batch does; stale, illegal, unknown and repeated
// reports are kept and listed, never refused.
func TestCarrierCallbacksConvergeWhateverTheOrder(t *testing.T) {
	h := newHarness(t, api.Config{})
	s := newShop(t, h, "callbacks", 10)
	account := h.carrierAccount(s, "smsa", "SMSA Riyadh")
	ship := func(tracking string) (orderID, shipmentID string) {
		placed := h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders"), auth: bearer(s.token), body: orderBody(s.variantID, 1, "+201002223334")})
		require.Equal(t, http.StatusCreated, placed.Status, string(placed.Raw))
		resp := h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders/"+placed.data()["id"].(string)+"/shipments"), auth: bearer(s.token),
			body: map[string]any{"carrier_account_id": account.id, "tracking_number": tracking}})
		require.Equal(t, http.StatusCreated, resp.Status, string(resp.Raw))
		return placed.data()["id"].(string), resp.data()["id"].(string)
	}
	start := time.Now().UTC().Add(-24 * time.Hour).Truncate(time.Second)
	orderedOrder, orderedShipment := ship("SMSA-ORDERED")
	shuffledOrder, shuffledShipment := ship("SMSA-SHUFFLED")
	ordered := h.callback(account.id, account.secret, time.Now(), carrierTimeline("SMSA-ORDERED", "o", start))
	require.Equal(t, http.StatusOK, ordered.Status, string(ordered.Raw))
	require.EqualValues(t, 5, ordered.data()["applied"], string(ordered.Raw))
	shuffled := carrierTimeline("SMSA-SHUFFLED", "s", start)
	rand.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	resp := h.callback(account.id, account.secret, time.Now(), shuffled)
	require.Equal(t, http.StatusOK, resp.Status, string(resp.Raw))
	require.EqualValues(t, 5, resp.data()["applied"])

	view := func(orderID, shipmentID string) map[string]any {
		sh := h.do(request{method: "GET", path: storePath(s.m.storeID, "/shipments/"+shipmentID), auth: bearer(s.token)}).data()
		var statuses []string
		for _, e := range sh["events"].([]any) {
			statuses = append(statuses, e.(map[string]any)["status"].(string))
		}
		o := h.order(s, orderID)
		return map[string]any{"status": sh["status"], "events": statuses, "cod_collected": sh["cod_collected"], "cod_state": sh["cod_state"],
			"order": o["status"], "payment": o["payment_status"], "exceptions": h.openExceptions(s.m.storeID, orderID)}
	}
	want := view(orderedOrder, orderedShipment)
	require.Equal(t, "delivered", want["status"])
	require.Equal(t, "DELIVERED", want["order"])
	require.Equal(t, "paid", want["payment"])
	require.Equal(t, []string{"delivery_failed"}, want["exceptions"])
	require.Equal(t, want, view(shuffledOrder, shuffledShipment))

	// The same batch again changes nothing.
	again := h.callback(account.id, account.secret, time.Now(), shuffled)
	require.Equal(t, http.StatusOK, again.Status)
	require.EqualValues(t, 0, again.data()["applied"])
	require.Len(t, again.data()["ignored"], 5)
	for _, i := range again.data()["ignored"].([]any) {
		require.Equal(t, "duplicate", i.(map[string]any)["reason"])
	}

	// Stale, illegal, same-status and unknown reports: kept, listed, 200.
	_, third := ship("SMSA-THIRD")
	require.EqualValues(t, 1, h.callback(account.id, account.secret, time.Now(), []map[string]any{
		{"event_id": "t-1", "tracking_number": "SMSA-THIRD", "status": "out_for_delivery", "occurred_at": start.Add(2 * time.Hour).Format(time.RFC3339)}}).data()["applied"])
	mixed := h.callback(account.id, account.secret, time.Now(), []map[string]any{
		{"event_id": "t-2", "tracking_number": "SMSA-THIRD", "status": "in_transit", "occurred_at": start.Add(time.Hour).Format(time.RFC3339)},
		{"event_id": "t-3", "tracking_number": "SMSA-THIRD", "status": "out_for_delivery", "occurred_at": start.Add(3 * time.Hour).Format(time.RFC3339)},
		{"event_id": "t-4", "tracking_number": "SMSA-THIRD", "status": "label_created", "occurred_at": start.Add(4 * time.Hour).Format(time.RFC3339)},
		{"event_id": "t-5", "tracking_number": "NO-SUCH", "status": "delivered", "occurred_at": start.Add(5 * time.Hour).Format(time.RFC3339)},
		{"event_id": "t-6", "tracking_number": "SMSA-THIRD", "status": "teleported", "occurred_at": start.Add(5 * time.Hour).Format(time.RFC3339)},
		{"event_id": 7},
	})
	require.Equal(t, http.StatusOK, mixed.Status, string(mixed.Raw))
	require.EqualValues(t, 0, mixed.data()["applied"])
	reasons := map[string]string{}
	for _, i := range mixed.data()["ignored"].([]any) {
		reasons[i.(map[string]any)["event_id"].(string)] = i.(map[string]any)["reason"].(string)
	}
	require.Equal(t, map[string]string{"t-2": "stale", "t-3": "same_status", "t-4": "illegal_transition", "t-5": "unknown_tracking_number",
		"t-6": "invalid", "7": "invalid"}, reasons)
	var kept int
	require.NoError(t, testenv.SQL(t, h.db).QueryRow(context.Background(),
		`SELECT count(*) FROM shipment_events WHERE shipment_id = $1 AND NOT applied`, third).Scan(&kept))
	require.Equal(t, 3, kept, "stale, same-status and illegal reports are kept")
	require.Equal(t, "out_for_delivery", h.do(request{method: "GET", path: storePath(s.m.storeID, "/shipments/"+third), auth: bearer(s.token)}).data()["status"])

	// Signatures: ±300 s, the previous secret for 24 h after a rotation.
	one := []map[string]any{{"event_id": "sig-1", "tracking_number": "SMSA-THIRD", "status": "delivered", "occurred_at": time.Now().UTC().Format(time.RFC3339)}}
	for name, resp := range map[string]response{
		"a wrong secret":           h.callback(account.id, "csec_wrong", time.Now(), one),
		"a signature 301 s old":    h.callback(account.id, account.secret, time.Now().Add(-301*time.Second), one),
		"an unknown account":       h.callback("0190d3c4-0000-7000-8000-000000000000", account.secret, time.Now(), one),
		"no signature":             h.do(request{method: "POST", path: "/api/v1/carrier-callbacks/" + account.id, body: map[string]any{"events": one}}),
		"an account id not a uuid": h.callback("nope", account.secret, time.Now(), one),
	} {
		require.Equal(t, http.StatusForbidden, resp.Status, name)
		require.Equal(t, "INVALID_SIGNATURE", resp.errorCode(), name)
	}
	rotated := h.do(request{method: "POST", path: storePath(s.m.storeID, "/carrier-accounts/"+account.id+"/rotate-secret"), auth: bearer(s.token)})
	require.Equal(t, http.StatusOK, rotated.Status, string(rotated.Raw))
	newSecret := rotated.data()["callback_secret"].(string)
	require.NotEqual(t, account.secret, newSecret)
	for _, n := range []int{0, maxCallbackEvents + 1} {
		events := make([]map[string]any, n)
		for i := range events {
			events[i] = one[0]
		}
		resp := h.callback(account.id, newSecret, time.Now(), events)
		require.Equal(t, http.StatusBadRequest, resp.Status, "%d events", n)
		require.Equal(t, "INVALID_CALLBACK", resp.errorCode())
	}
	old := h.callback(account.id, account.secret, time.Now(), one)
	require.Equal(t, http.StatusOK, old.Status, "the old secret verifies for 24 h: %s", old.Raw)
	require.EqualValues(t, 1, old.data()["applied"])
	_, err := testenv.SQL(t, h.db).Exec(context.Background(), `UPDATE carrier_accounts SET previous_secret_expires_at = now() - interval '1 second' WHERE id = $1`, account.id)
	require.NoError(t, err)
	require.Equal(t, http.StatusForbidden, h.callback(account.id, account.secret, time.Now(), one).Status, "not after")
	require.Equal(t, http.StatusOK, h.callback(account.id, newSecret, time.Now(), one).Status)
}

const maxCallbackEvents = 500

// The couriers' cash must be what the order expects: a short delivery
// opens cod_mismatch and pays nothing; the order is still DELIVERED.
func TestCODMismatchPaysNothing(t *testing.T) {
	h := newHarness(t, api.Config{})
	s := newShop(t, h, "codmismatch", 5)
	placed := h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders"), auth: bearer(s.token), body: orderBody(s.variantID, 1, "+201007778881")})
	require.Equal(t, http.StatusCreated, placed.Status)
	orderID := placed.data()["id"].(string)
	shipped := h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders/"+orderID+"/shipments"), auth: bearer(s.token),
		body: map[string]any{"carrier": "other"}})
	require.Equal(t, http.StatusCreated, shipped.Status)
	require.EqualValues(t, 49000, shipped.data()["cod_amount"])
	delivered := h.shipmentEvent(s, shipped.data()["id"].(string), map[string]any{"status": "delivered", "cod_collected": 40000})
	require.Equal(t, http.StatusOK, delivered.Status, string(delivered.Raw))
	order := h.order(s, orderID)
	require.Equal(t, "DELIVERED", order["status"])
	require.Equal(t, "pending", order["payment_status"], "nothing is paid on a mismatch")
	require.EqualValues(t, 0, order["paid_total"])
	require.Equal(t, []string{"cod_mismatch"}, h.openExceptions(s.m.storeID, orderID))
	var data string
	require.NoError(t, testenv.SQL(t, h.db).QueryRow(context.Background(), `SELECT data::text FROM autopilot_exceptions
		WHERE order_id = $1 AND reason = 'cod_mismatch'`, orderID).Scan(&data))
	require.JSONEq(t, `{"expected": 49000, "collected": 40000}`, data)
}

// Every refusal of the shipment routes: a clear 4xx that changes nothing.
func TestShipmentRefusals(t *testing.T) {
	h := newHarness(t, api.Config{})
	s := newShop(t, h, "shiprefuse", 10)
	place := func(body map[string]any) (string, string) {
		placed := h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders"), auth: bearer(s.token), body: body})
		require.Equal(t, http.StatusCreated, placed.Status, string(placed.Raw))
		return placed.data()["id"].(string), orderLineID(placed.data())
	}
	orderID, lineID := place(orderBody(s.variantID, 2, "+201003334445"))
	prepaidBody := orderBody(s.variantID, 1, "+201003334446")
	prepaidBody["payment_method"] = "bank_transfer"
	prepaidID, _ := place(prepaidBody)
	shipmentsOf := func(id string) string { return storePath(s.m.storeID, "/orders/"+id+"/shipments") }
	create := func(id string, body map[string]any) response {
		return h.do(request{method: "POST", path: shipmentsOf(id), auth: bearer(s.token), body: body})
	}
	taken := create(orderID, map[string]any{"carrier": "other", "tracking_number": "TAKEN-1", "lines": []any{map[string]any{"line_id": lineID, "quantity": 1}}})
	require.Equal(t, http.StatusCreated, taken.Status, string(taken.Raw))
	takenID := taken.data()["id"].(string)

	for _, c := range []struct {
		name  string
		order string
		body  map[string]any
		field string
		code  string
	}{
		{"no carrier", orderID, map[string]any{}, "carrier", "required"},
		{"an unknown carrier", orderID, map[string]any{"carrier": "pigeon"}, "carrier", "one_of"},
		{"a line of another order", orderID, map[string]any{"carrier": "other", "lines": []any{map[string]any{"line_id": "0190d3c4-0000-7000-8000-000000000001", "quantity": 1}}}, "lines[0].line_id", "not_found"},
		{"a line twice", orderID, map[string]any{"carrier": "other", "lines": []any{map[string]any{"line_id": lineID, "quantity": 1}, map[string]any{"line_id": lineID, "quantity": 1}}}, "lines[1].line_id", "duplicate"},
		{"more than unshipped", orderID, map[string]any{"carrier": "other", "lines": []any{map[string]any{"line_id": lineID, "quantity": 2}}}, "lines[0].quantity", "out_of_range"},
		{"a bad tracking url", orderID, map[string]any{"carrier": "other", "tracking_url": "javascript:alert(1)"}, "tracking_url", "invalid_url"},
		{"an unknown location", orderID, map[string]any{"carrier": "other", "location_id": "0190d3c4-0000-7000-8000-000000000002"}, "location_id", "not_found"},
		{"an unknown carrier account", orderID, map[string]any{"carrier_account_id": "0190d3c4-0000-7000-8000-000000000003"}, "carrier_account_id", "not_found"},
		{"cod above the balance", orderID, map[string]any{"carrier": "other", "cod_amount": 100000}, "cod_amount", "exceeds_balance"},
		{"cod on a prepaid order", prepaidID, map[string]any{"carrier": "other", "cod_amount": 100}, "cod_amount", "not_cod"},
	} {
		resp := create(c.order, c.body)
		require.Equal(t, http.StatusUnprocessableEntity, resp.Status, "%s: %s", c.name, resp.Raw)
		require.Equal(t, c.code, resp.fieldCode(c.field), "%s: %s", c.name, resp.Raw)
		require.NotEmpty(t, resp.fieldMessageAr(c.field), c.name)
	}
	dupTracking := create(orderID, map[string]any{"carrier": "other", "tracking_number": "TAKEN-1"})
	require.Equal(t, http.StatusConflict, dupTracking.Status)
	require.Equal(t, "DUPLICATE_TRACKING_NUMBER", dupTracking.errorCode())
	require.Len(t, h.do(request{method: "GET", path: shipmentsOf(orderID), auth: bearer(s.token)}).list(), 1, "refusals wrote nothing")

	cancelled, _ := place(orderBody(s.variantID, 1, "+201003334447"))
	require.Equal(t, http.StatusNoContent, h.do(request{method: "DELETE", path: storePath(s.m.storeID, "/orders/"+cancelled), auth: bearer(s.token)}).Status)
	notShippable := create(cancelled, map[string]any{"carrier": "other"})
	require.Equal(t, http.StatusConflict, notShippable.Status)
	require.Equal(t, "ORDER_NOT_SHIPPABLE", notShippable.errorCode())

	// Moves: refused with allowed_next; the event body's own rules.
	illegal := h.shipmentEvent(s, takenID, map[string]any{"status": "failed_attempt"})
	require.Equal(t, http.StatusConflict, illegal.Status)
	require.Equal(t, "INVALID_SHIPMENT_TRANSITION", illegal.errorCode())
	require.ElementsMatch(t, []any{"in_transit", "out_for_delivery", "delivered", "cancelled"}, illegal.errorField("allowed_next"))
	same := h.shipmentEvent(s, takenID, map[string]any{"status": "label_created"})
	require.Equal(t, "INVALID_SHIPMENT_TRANSITION", same.errorCode(), "a move to the status it has")
	for _, c := range []struct {
		body        map[string]any
		field, code string
	}{
		{map[string]any{"status": "lost"}, "status", "one_of"},
		{map[string]any{"status": "in_transit", "occurred_at": time.Now().Add(time.Hour).UTC().Format(time.RFC3339)}, "occurred_at", "out_of_range"},
		{map[string]any{"status": "in_transit", "cod_collected": 100}, "cod_collected", "only_when_delivered"},
	} {
		resp := h.shipmentEvent(s, takenID, c.body)
		require.Equal(t, http.StatusUnprocessableEntity, resp.Status, string(resp.Raw))
		require.Equal(t, c.code, resp.fieldCode(c.field))
	}
	notReady := h.do(request{method: "GET", path: storePath(s.m.storeID, "/shipments/"+takenID+"/waybill"), auth: bearer(s.token)})
	require.Equal(t, http.StatusConflict, notReady.Status, "no worker renders here")
	require.Equal(t, "WAYBILL_NOT_READY", notReady.errorCode())
	require.NotEmpty(t, notReady.Header.Get("Retry-After"))

	// Departed: cod_amount is fixed; partial acceptance needs all pieces on one side.
	require.Equal(t, http.StatusOK, h.shipmentEvent(s, takenID, map[string]any{"status": "in_transit"}).Status)
	departed := h.do(request{method: "PATCH", path: storePath(s.m.storeID, "/shipments/"+takenID), auth: bearer(s.token), body: map[string]any{"cod_amount": 1}})
	require.Equal(t, http.StatusUnprocessableEntity, departed.Status)
	require.Equal(t, "departed", departed.fieldCode("cod_amount"))
	partial := h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders/"+orderID+"/partial-acceptance"), auth: bearer(s.token),
		body: map[string]any{"lines": []any{map[string]any{"line_id": lineID, "accepted_quantity": 1}}}})
	require.Equal(t, http.StatusConflict, partial.Status, string(partial.Raw))
	require.Equal(t, "UNSHIPPED_QUANTITY", partial.errorCode())

	// Closed: no change, no cancel, no re-render.
	require.Equal(t, http.StatusOK, h.shipmentEvent(s, takenID, map[string]any{"status": "returned_to_sender"}).Status)
	closed := h.do(request{method: "PATCH", path: storePath(s.m.storeID, "/shipments/"+takenID), auth: bearer(s.token), body: map[string]any{"service": "express"}})
	require.Equal(t, http.StatusConflict, closed.Status)
	require.Equal(t, "SHIPMENT_CLOSED", closed.errorCode())
	rerender := h.do(request{method: "POST", path: storePath(s.m.storeID, "/shipments/"+takenID+"/waybill"), auth: bearer(s.token)})
	require.Equal(t, "SHIPMENT_CLOSED", rerender.errorCode())
	cancel := h.do(request{method: "POST", path: storePath(s.m.storeID, "/shipments/"+takenID+"/cancel"), auth: bearer(s.token), body: map[string]any{"reason": "x"}})
	require.Equal(t, http.StatusConflict, cancel.Status)
	require.Equal(t, "INVALID_SHIPMENT_TRANSITION", cancel.errorCode())
	require.Equal(t, []any{}, cancel.errorField("allowed_next"))

	badFilter := h.do(request{method: "GET", path: storePath(s.m.storeID, "/shipments?status=lost"), auth: bearer(s.token)})
	require.Equal(t, http.StatusUnprocessableEntity, badFilter.Status)
	duplicateAccount := h.do(request{method: "POST", path: storePath(s.m.storeID, "/carrier-accounts"), auth: bearer(s.token), body: map[string]any{"carrier": "other", "name": "Mine"}})
	require.Equal(t, http.StatusCreated, duplicateAccount.Status)
	duplicateAccount = h.do(request{method: "POST", path: storePath(s.m.storeID, "/carrier-accounts"), auth: bearer(s.token), body: map[string]any{"carrier": "other", "name": "Mine"}})
	require.Equal(t, http.StatusConflict, duplicateAccount.Status)
	require.Equal(t, "CONFLICT", duplicateAccount.errorCode())
	badCarrier := h.do(request{method: "POST", path: storePath(s.m.storeID, "/carrier-accounts"), auth: bearer(s.token), body: map[string]any{"carrier": "pigeon", "name": "x"}})
	require.Equal(t, "invalid", badCarrier.fieldCode("carrier"))
}

// The status endpoints keep working through implicit shipments: SHIPPED
// ships every unshipped piece as one carrier "other" shipment; DELIVERED
// closes it; a cancel cancels labels and keeps the ledger whole.
func TestStatusEndpointsShipThroughImplicitShipments(t *testing.T) {
	h := newHarness(t, api.Config{})
	s := newShop(t, h, "implicit", 10)
	placed := h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders"), auth: bearer(s.token), body: orderBody(s.variantID, 3, "+201004445551")})
	require.Equal(t, http.StatusCreated, placed.Status)
	orderID, lineID := placed.data()["id"].(string), orderLineID(placed.data())
	label := h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders/"+orderID+"/shipments"), auth: bearer(s.token),
		body: map[string]any{"carrier": "aramex", "lines": []any{map[string]any{"line_id": lineID, "quantity": 1}}}})
	require.Equal(t, http.StatusCreated, label.Status)
	move := func(status string, extra map[string]any) response {
		body := map[string]any{"status": status}
		for k, v := range extra {
			body[k] = v
		}
		return h.do(request{method: "PATCH", path: storePath(s.m.storeID, "/orders/"+orderID+"/status"), auth: bearer(s.token), body: body})
	}
	shipped := move("SHIPPED", map[string]any{"tracking_number": "MANUAL-1"})
	require.Equal(t, http.StatusOK, shipped.Status, string(shipped.Raw))
	require.Equal(t, "MANUAL-1", shipped.data()["tracking_number"])
	list := h.do(request{method: "GET", path: storePath(s.m.storeID, "/orders/"+orderID+"/shipments"), auth: bearer(s.token)}).list()
	require.Len(t, list, 2)
	byNumber := map[string]map[string]any{}
	for _, sh := range list {
		byNumber[sh.(map[string]any)["number"].(string)] = sh.(map[string]any)
	}
	require.Equal(t, "in_transit", byNumber["ORD-1001-1"]["status"], "the label left with the order")
	implicit := byNumber["ORD-1001-2"]
	require.Equal(t, "in_transit", implicit["status"])
	require.Equal(t, "other", implicit["carrier"])
	require.Equal(t, "MANUAL-1", implicit["tracking_number"])
	require.Equal(t, []any{map[string]any{"line_id": lineID, "quantity": float64(2)}}, implicit["lines"])
	onHand, reserved := h.level(s.variantID, h.defaultLocation(s.m.storeID))
	require.Equal(t, [2]int{7, 0}, [2]int{onHand, reserved}, "all three pieces left")

	require.Equal(t, http.StatusOK, move("DELIVERED", nil).Status)
	for _, sh := range h.do(request{method: "GET", path: storePath(s.m.storeID, "/orders/"+orderID+"/shipments"), auth: bearer(s.token)}).list() {
		require.Equal(t, "delivered", sh.(map[string]any)["status"])
	}
	require.Len(t, h.events(s.m.storeID, "order.status_changed"), 2)

	// A cancelled order cancels its labels and releases the stock.
	second := h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders"), auth: bearer(s.token), body: orderBody(s.variantID, 2, "+201004445552")})
	require.Equal(t, http.StatusCreated, second.Status)
	secondID := second.data()["id"].(string)
	require.Equal(t, http.StatusCreated, h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders/"+secondID+"/shipments"), auth: bearer(s.token),
		body: map[string]any{"carrier": "other"}}).Status)
	require.Equal(t, http.StatusNoContent, h.do(request{method: "DELETE", path: storePath(s.m.storeID, "/orders/"+secondID), auth: bearer(s.token)}).Status)
	sh := h.do(request{method: "GET", path: storePath(s.m.storeID, "/orders/"+secondID+"/shipments"), auth: bearer(s.token)}).list()
	require.Equal(t, "cancelled", sh[0].(map[string]any)["status"])
	onHand, reserved = h.level(s.variantID, h.defaultLocation(s.m.storeID))
	require.Equal(t, [2]int{7, 0}, [2]int{onHand, reserved})
	h.requireLedgerBalances(s.m.storeID)
}

// A waybill that cannot be rendered ends failed after its workflow gives
// up: the download answers WAYBILL_FAILED, the order gets waybill_failed,
// and asking again renders it anew.
func TestWaybillThatCannotRenderFails(t *testing.T) {
	h := newHarness(t, api.Config{})
	h.noWaybillPrinter = true
	h.startWorker(nil)
	s := newShop(t, h, "waybillfail", 5)
	placed := h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders"), auth: bearer(s.token), body: orderBody(s.variantID, 1, "+201007778882")})
	require.Equal(t, http.StatusCreated, placed.Status)
	orderID := placed.data()["id"].(string)
	shipped := h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders/"+orderID+"/shipments"), auth: bearer(s.token),
		body: map[string]any{"carrier": "other"}})
	require.Equal(t, http.StatusCreated, shipped.Status)
	path := storePath(s.m.storeID, "/shipments/"+shipped.data()["id"].(string))
	waitFor(t, "the waybill to fail", func() bool {
		return h.do(request{method: "GET", path: path, auth: bearer(s.token)}).data()["waybill"].(map[string]any)["status"] == "failed"
	})
	failed := h.do(request{method: "GET", path: path + "/waybill", auth: bearer(s.token)})
	require.Equal(t, http.StatusConflict, failed.Status)
	require.Equal(t, "WAYBILL_FAILED", failed.errorCode())
	require.Equal(t, []string{"waybill_failed"}, h.openExceptions(s.m.storeID, orderID))
	again := h.do(request{method: "POST", path: path + "/waybill", auth: bearer(s.token)})
	require.Equal(t, http.StatusAccepted, again.Status, string(again.Raw))
	require.Equal(t, "pending", again.data()["waybill"].(map[string]any)["status"])
}
