package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/merchantsvc/svc/api"
	"github.com/merchantsvc/svc/internal/testenv"
)

// shop is a store with a product and a variant in stock.
type shop struct {
	m         merchant
	token     string
	variantID string
}

func newShop(t *testing.T, h *harness, name string, stock int) shop {
	m := h.signup(name)
	token := h.pat(m, "catalog:write", "orders:write", "customers:write", "settings:write")
	p := h.createProduct(token, m.storeID, map[string]any{"name": "Abaya", "price": 45000})
	v := h.do(request{method: "POST", path: storePath(m.storeID, "/products/"+p["id"].(string)+"/variants"), auth: bearer(token),
		body: map[string]any{"sku": name + "-ABAYA-M", "quantity": stock, "options": map[string]any{"size": "M"}}})
	require.Equal(t, http.StatusCreated, v.Status)
	return shop{m: m, token: token, variantID: v.Body["id"].(string)}
}

func orderBody(variantID string, qty int, phone string) map[string]any {
	return map[string]any{
		"customer": map[string]any{"name": "Mona Adel", "phone": phone},
		"lines":    []map[string]any{{"variant_id": variantID, "quantity": qty}},
		"shipping_address": map[string]any{"name": "Mona Adel", "phone": phone, "line1": "12 Tahrir St",
			"city": "Cairo", "country": "EG"},
		"payment_method": "cod", "shipping_fee": 5000, "discount": 1000,
	}
}

func (h *harness) variantQuantity(s shop) int {
	var q int
	require.NoError(h.t, testenv.SQL(h.t, h.db).QueryRow(context.Background(), `SELECT quantity FROM variants WHERE id = $1`, s.variantID).Scan(&q))
	return q
}

func (h *harness) events(storeID, event string) []map[string]any {
	var out []map[string]any
	rows, err := testenv.SQL(h.t, h.db).Query(context.Background(), `SELECT body FROM outbox WHERE store_id = $1 AND event = $2 ORDER BY created_at`, storeID, event)
	require.NoError(h.t, err)
	defer rows.Close()
	for rows.Next() {
		var body []byte
		require.NoError(h.t, rows.Scan(&body))
		var v map[string]any
		require.NoError(h.t, json.Unmarshal(body, &v))
		out = append(out, v["data"].(map[string]any))
	}
	return out
}

func TestCreateOrderSnapshotsReservesAndNumbers(t *testing.T) {
	h := newHarness(t, api.Config{})
	s := newShop(t, h, "orders", 5)
	resp := h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders"), auth: bearer(s.token), body: orderBody(s.variantID, 2, "+20 100 123 4567")})
	require.Equal(t, http.StatusCreated, resp.Status, string(resp.Raw))
	o := resp.data()
	require.Equal(t, "ORD-1001", o["order_number"])
	require.Equal(t, "PENDING", o["status"])
	require.Equal(t, "pending", o["payment_status"])
	require.Equal(t, "unfulfilled", o["fulfillment_status"])
	require.Equal(t, "EGP", o["currency"])
	require.Equal(t, o["created_at"], o["placed_at"], "placed when created")
	require.EqualValues(t, 90000, o["subtotal"])
	require.EqualValues(t, 90000+5000-1000, o["total"])
	require.EqualValues(t, 94000, o["balance_due"])
	require.EqualValues(t, 94000, o["collectible_total"])
	line := o["lines"].([]any)[0].(map[string]any)
	require.Equal(t, "Abaya", line["name"])
	require.Equal(t, "orders-ABAYA-M", line["sku"])
	require.EqualValues(t, 45000, line["unit_price"])
	require.Equal(t, 3, h.variantQuantity(s), "stock reserved")

	// Later price changes do not touch the order: lines are snapshots.
	h.do(request{method: "PATCH", path: storePath(s.m.storeID, "/products/"+line["product_id"].(string)+"/variants/"+s.variantID),
		auth: bearer(s.token), body: map[string]any{"price": 1}})
	again := h.do(request{method: "GET", path: storePath(s.m.storeID, "/orders/ORD-1001"), auth: bearer(s.token)})
	require.Equal(t, http.StatusOK, again.Status)
	require.EqualValues(t, 45000, again.data()["lines"].([]any)[0].(map[string]any)["unit_price"])

	second := h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders"), auth: bearer(s.token), body: orderBody(s.variantID, 1, "+201001234567")})
	require.Equal(t, "ORD-1002", second.data()["order_number"])
	require.Equal(t, o["customer_id"], second.data()["customer_id"], "the inline customer is found again by phone")

	created := h.events(s.m.storeID, "order.created")
	require.Len(t, created, 2)
	require.Equal(t, map[string]any{"store_id": s.m.storeID, "order_id": o["id"], "order_number": "ORD-1001", "status": "PENDING",
		"payment_method": "cod", "total": "940.00"}, created[0])

	short := h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders"), auth: bearer(s.token), body: orderBody(s.variantID, 3, "+201001234567")})
	require.Equal(t, http.StatusConflict, short.Status)
	require.Equal(t, "INSUFFICIENT_STOCK", short.errorCode())
	require.Contains(t, short.errorField("message"), s.variantID)
	require.Equal(t, []string{"lines[0].variant_id"}, short.fieldNames())
	require.Equal(t, 2, h.variantQuantity(s), "a refused order reserves nothing")
	third := h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders"), auth: bearer(s.token), body: orderBody(s.variantID, 1, "+201001234567")})
	require.Equal(t, "ORD-1003", third.data()["order_number"], "a refused order takes no number")
}

// 50 parallel orders for 30 pieces: 30 succeed with consecutive numbers, 20
// are refused, and stock ends at zero, never below.
func TestConcurrentOrdersNumberWithoutGapsAndNeverOversell(t *testing.T) {
	h := newHarness(t, api.Config{})
	s := newShop(t, h, "rush", 30)
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		numbers []string
		refused int
	)
	for i := range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp := h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders"), auth: bearer(s.token),
				body: orderBody(s.variantID, 1, fmt.Sprintf("+2010000%05d", i))})
			mu.Lock()
			defer mu.Unlock()
			switch resp.Status {
			case http.StatusCreated:
				numbers = append(numbers, resp.data()["order_number"].(string))
			case http.StatusConflict:
				refused++
			default:
				t.Errorf("unexpected %d: %s", resp.Status, resp.Raw)
			}
		}()
	}
	wg.Wait()
	require.Len(t, numbers, 30)
	require.Equal(t, 20, refused)
	sort.Strings(numbers)
	for i, n := range numbers {
		require.Equal(t, fmt.Sprintf("ORD-%d", 1001+i), n)
	}
	require.Equal(t, 0, h.variantQuantity(s))

	// With stock for everyone, 50 parallel orders get 50 consecutive numbers.
	plenty := newShop(t, h, "rush-plenty", 1000)
	numbers = numbers[:0]
	for i := range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp := h.do(request{method: "POST", path: storePath(plenty.m.storeID, "/orders"), auth: bearer(plenty.token),
				body: orderBody(plenty.variantID, 1, fmt.Sprintf("+2011000%05d", i))})
			mu.Lock()
			defer mu.Unlock()
			if resp.Status != http.StatusCreated {
				t.Errorf("unexpected %d: %s", resp.Status, resp.Raw)
				return
			}
			numbers = append(numbers, resp.data()["order_number"].(string))
		}()
	}
	wg.Wait()
	sort.Slice(numbers, func(i, j int) bool {
		return len(numbers[i]) < len(numbers[j]) || (len(numbers[i]) == len(numbers[j]) && numbers[i] < numbers[j])
	})
	require.Len(t, numbers, 50)
	for i, n := range numbers {
		require.Equal(t, fmt.Sprintf("ORD-%d", 1001+i), n)
	}
	require.Equal(t, 950, h.variantQuantity(plenty))
}

func TestDraftsAreInvisibleUntilConverted(t *testing.T) {
	h := newHarness(t, api.Config{})
	s := newShop(t, h, "drafts", 5)
	draft := h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders/drafts"), auth: bearer(s.token), body: orderBody(s.variantID, 2, "+201001234567")})
	require.Equal(t, http.StatusCreated, draft.Status, string(draft.Raw))
	require.Equal(t, "DRAFT", draft.data()["status"])
	require.Equal(t, 5, h.variantQuantity(s), "drafts reserve nothing")
	require.Empty(t, h.events(s.m.storeID, "order.created"))

	list := h.do(request{method: "GET", path: storePath(s.m.storeID, "/orders"), auth: bearer(s.token)})
	require.Empty(t, list.data()["items"])
	counts := h.do(request{method: "GET", path: storePath(s.m.storeID, "/orders/counts"), auth: bearer(s.token)})
	require.EqualValues(t, 0, counts.data()["total"])
	require.NotContains(t, counts.data()["counts"], "DRAFT")
	got := h.do(request{method: "GET", path: storePath(s.m.storeID, "/orders/"+draft.data()["id"].(string)), auth: bearer(s.token)})
	require.Equal(t, "DRAFT", got.data()["status"], "a draft is readable directly")

	move := h.do(request{method: "PATCH", path: storePath(s.m.storeID, "/orders/"+draft.data()["id"].(string)+"/status"), auth: bearer(s.token),
		body: map[string]any{"status": "CONFIRMED"}})
	require.Equal(t, http.StatusConflict, move.Status)
	require.Equal(t, []any{}, move.errorField("allowed_next"), "a draft leaves only by conversion")

	del := h.do(request{method: "DELETE", path: storePath(s.m.storeID, "/orders/"+draft.data()["id"].(string)), auth: bearer(s.token)})
	require.Equal(t, http.StatusNoContent, del.Status)
	require.Empty(t, h.events(s.m.storeID, "order.status_changed"), "cancelling a draft is silent")
}

func TestOrderStatusEndpointsAndCancel(t *testing.T) {
	h := newHarness(t, api.Config{})
	s := newShop(t, h, "status", 10)
	o := h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders"), auth: bearer(s.token), body: orderBody(s.variantID, 4, "+201001234567")}).data()
	id := o["id"].(string)
	statusPath := storePath(s.m.storeID, "/orders/"+id+"/status")

	shipped := h.do(request{method: "PATCH", path: statusPath, auth: bearer(s.token), body: map[string]any{"status": "SHIPPED", "tracking_number": "EG123"}})
	require.Equal(t, http.StatusOK, shipped.Status, string(shipped.Raw))
	require.Equal(t, "SHIPPED", shipped.data()["status"])
	require.Equal(t, "in_transit", shipped.data()["fulfillment_status"])
	changed := h.events(s.m.storeID, "order.status_changed")
	require.Len(t, changed, 1)
	require.Equal(t, "SHIPPED", changed[0]["new_status"])
	require.Equal(t, "PENDING", changed[0]["old_status"])
	require.Equal(t, "EG123", changed[0]["tracking_number"])

	back := h.do(request{method: "PATCH", path: statusPath, auth: bearer(s.token), body: map[string]any{"status": "CONFIRMED"}})
	require.Equal(t, http.StatusConflict, back.Status)
	require.Equal(t, "INVALID_STATUS_TRANSITION", back.errorCode())
	require.ElementsMatch(t, []any{"DELIVERED", "RETURNED"}, back.errorField("allowed_next"))
	cancelShipped := h.do(request{method: "DELETE", path: storePath(s.m.storeID, "/orders/"+id), auth: bearer(s.token)})
	require.Equal(t, http.StatusConflict, cancelShipped.Status)
	bad := h.do(request{method: "PATCH", path: statusPath, auth: bearer(s.token), body: map[string]any{"status": "LOST"}})
	require.Equal(t, http.StatusUnprocessableEntity, bad.Status)

	// Cancelling restocks and records the reason.
	other := h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders"), auth: bearer(s.token), body: orderBody(s.variantID, 3, "+201001234567")}).data()
	require.Equal(t, 3, h.variantQuantity(s))
	cancel := h.do(request{method: "DELETE", path: storePath(s.m.storeID, "/orders/"+other["id"].(string)+"?reason=customer%20changed%20mind"), auth: bearer(s.token)})
	require.Equal(t, http.StatusNoContent, cancel.Status)
	require.Equal(t, 6, h.variantQuantity(s))
	after := h.do(request{method: "GET", path: storePath(s.m.storeID, "/orders/"+other["id"].(string)), auth: bearer(s.token)}).data()
	require.Equal(t, "CANCELLED", after["status"])
	require.Equal(t, "customer changed mind", after["cancel_reason"])
	require.Equal(t, "CANCELLED", h.events(s.m.storeID, "order.status_changed")[1]["new_status"])

	timeline := h.do(request{method: "GET", path: storePath(s.m.storeID, "/orders/"+id+"/timeline"), auth: bearer(s.token)})
	require.Equal(t, http.StatusOK, timeline.Status)
	var kinds []string
	for _, e := range timeline.Body["data"].([]any) {
		kinds = append(kinds, e.(map[string]any)["kind"].(string))
	}
	// SHIPPED through the status endpoint ships everything as one implicit
	// shipment, which the timeline shows before the status change.
	require.Equal(t, []string{"order_created", "shipment_created", "shipment_status", "status_changed"}, kinds, "oldest first")
}

func TestOrderLookupListCountsAndComments(t *testing.T) {
	h := newHarness(t, api.Config{})
	a, b := newShop(t, h, "look-a", 20), newShop(t, h, "look-b", 20)
	mk := func(s shop, name, phone string) map[string]any {
		body := orderBody(s.variantID, 1, phone)
		body["customer"].(map[string]any)["name"] = name
		resp := h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders"), auth: bearer(s.token), body: body})
		require.Equal(t, http.StatusCreated, resp.Status, string(resp.Raw))
		return resp.data()
	}
	o1 := mk(a, "Salma Hassan", "+201000000001")
	mk(a, "Karim Nabil", "+201000000002")
	o3 := mk(a, "Salma Hassan", "+201000000001")
	mk(b, "Other store", "+201000000009")
	require.Equal(t, http.StatusOK, h.do(request{method: "PATCH", path: storePath(a.m.storeID, "/orders/"+o3["id"].(string)+"/status"),
		auth: bearer(a.token), body: map[string]any{"status": "CONFIRMED"}}).Status)

	// Order numbers are per store: B's ORD-1001 is B's own; A's ORD-1003 does not exist in B.
	bOwn := h.do(request{method: "GET", path: storePath(b.m.storeID, "/orders/ORD-1001"), auth: bearer(b.token)})
	require.Equal(t, "Other store", bOwn.data()["customer"].(map[string]any)["name"])
	require.Equal(t, http.StatusNotFound, h.do(request{method: "GET", path: storePath(b.m.storeID, "/orders/ORD-1003"), auth: bearer(b.token)}).Status)
	require.Equal(t, http.StatusNotFound, h.do(request{method: "GET", path: storePath(b.m.storeID, "/orders/"+o1["id"].(string)), auth: bearer(b.token)}).Status)
	long := h.do(request{method: "GET", path: storePath(a.m.storeID, "/orders/ORD-"+fmt.Sprint(make([]int, 30))), auth: bearer(a.token)})
	require.Equal(t, http.StatusUnprocessableEntity, long.Status)

	numbers := func(query string) []string {
		resp := h.do(request{method: "GET", path: storePath(a.m.storeID, "/orders?"+query), auth: bearer(a.token)})
		require.Equal(t, http.StatusOK, resp.Status, query+": "+string(resp.Raw))
		var out []string
		for _, it := range resp.data()["items"].([]any) {
			out = append(out, it.(map[string]any)["order_number"].(string))
		}
		return out
	}
	require.Equal(t, []string{"ORD-1003", "ORD-1002", "ORD-1001"}, numbers(""), "newest first")
	require.Equal(t, []string{"ORD-1003", "ORD-1001"}, numbers("search=salma"))
	require.Equal(t, []string{"ORD-1003"}, numbers("status=CONFIRMED"))
	require.Equal(t, []string{"ORD-1002"}, numbers("search=%2B201000000002"), "by phone")
	require.Equal(t, []string{"ORD-1003", "ORD-1001"}, numbers("customer_id="+o1["customer_id"].(string)))
	require.Empty(t, numbers("date_from="+time.Now().Add(time.Hour).UTC().Format(time.RFC3339)))
	require.Len(t, numbers("date_to="+time.Now().Add(time.Hour).UTC().Format(time.RFC3339)), 3)
	require.Equal(t, []string{"ORD-1002"}, numbers("limit=1&page=2"))
	for query, field := range map[string]string{"status=DRAFT": "status", "payment_status=free": "payment_status",
		"fulfillment_status=lost": "fulfillment_status", "date_from=yesterday": "date_from", "limit=0": "limit", "customer_id=x": "customer_id"} {
		resp := h.do(request{method: "GET", path: storePath(a.m.storeID, "/orders?"+query), auth: bearer(a.token)})
		require.Equal(t, http.StatusUnprocessableEntity, resp.Status, query)
		require.Equal(t, []string{field}, resp.fieldNames(), query)
	}

	counts := h.do(request{method: "GET", path: storePath(a.m.storeID, "/orders/counts?search=salma"), auth: bearer(a.token)}).data()
	require.EqualValues(t, 2, counts["total"])
	require.EqualValues(t, 1, counts["counts"].(map[string]any)["PENDING"])
	require.EqualValues(t, 1, counts["counts"].(map[string]any)["CONFIRMED"])
	require.EqualValues(t, 0, counts["counts"].(map[string]any)["SHIPPED"])
	all := h.do(request{method: "GET", path: storePath(a.m.storeID, "/orders/counts"), auth: bearer(a.token)}).data()
	require.EqualValues(t, 3, all["total"])

	commentPath := storePath(a.m.storeID, "/orders/"+o1["id"].(string)+"/comments")
	c := h.do(request{method: "POST", path: commentPath, auth: bearer(a.token), body: map[string]any{"body": "Customer asked for evening delivery"}})
	require.Equal(t, http.StatusCreated, c.Status, string(c.Raw))
	require.Equal(t, "comment", c.data()["kind"])
	require.Equal(t, http.StatusUnprocessableEntity, h.do(request{method: "POST", path: commentPath, auth: bearer(a.token), body: map[string]any{"body": ""}}).Status)
	acts := h.do(request{method: "GET", path: storePath(a.m.storeID, "/orders/"+o1["id"].(string)+"/activities?limit=1"), auth: bearer(a.token)}).data()
	require.EqualValues(t, 2, acts["pagination"].(map[string]any)["total"])
	require.Equal(t, "comment", acts["items"].([]any)[0].(map[string]any)["kind"], "newest first")
	require.Equal(t, http.StatusUnprocessableEntity, h.do(request{method: "GET", path: storePath(a.m.storeID, "/orders/"+o1["id"].(string)+"/activities?limit=101"), auth: bearer(a.token)}).Status)
}

func TestCreateOrderValidationAndCustomers(t *testing.T) {
	h := newHarness(t, api.Config{})
	s := newShop(t, h, "orderval", 5)
	bad := orderBody(s.variantID, 0, "not a phone")
	bad["customer_id"] = uuid.NewString()
	bad["payment_method"] = "barter"
	bad["lines"] = append(bad["lines"].([]map[string]any), map[string]any{"variant_id": s.variantID, "quantity": 1})
	resp := h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders"), auth: bearer(s.token), body: bad})
	require.Equal(t, http.StatusUnprocessableEntity, resp.Status)
	require.ElementsMatch(t, []string{"customer", "lines[0].quantity", "lines[1].variant_id", "shipping_address.phone", "payment_method"}, resp.fieldNames())
	digitCountry := orderBody(s.variantID, 1, "+201001234567")
	digitCountry["shipping_address"].(map[string]any)["country"] = "E1"
	require.Equal(t, []string{"shipping_address.country"}, h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders"), auth: bearer(s.token), body: digitCountry}).fieldNames())
	unknown := orderBody(uuid.NewString(), 1, "+201001234567")
	require.Equal(t, []string{"lines[0].variant_id"}, h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders"), auth: bearer(s.token), body: unknown}).fieldNames())

	cust := h.do(request{method: "POST", path: storePath(s.m.storeID, "/customers"), auth: bearer(s.token),
		body: map[string]any{"name": "Hoda", "email": "hoda@example.com", "phone": "+201112223334"}})
	require.Equal(t, http.StatusCreated, cust.Status, string(cust.Raw))
	dup := h.do(request{method: "POST", path: storePath(s.m.storeID, "/customers"), auth: bearer(s.token), body: map[string]any{"name": "Hoda 2", "email": "HODA@example.com"}})
	require.Equal(t, http.StatusConflict, dup.Status)
	body := orderBody(s.variantID, 1, "+201112223334")
	delete(body, "customer")
	body["customer_id"] = cust.data()["id"]
	byID := h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders"), auth: bearer(s.token), body: body})
	require.Equal(t, http.StatusCreated, byID.Status, string(byID.Raw))
	require.Equal(t, "Hoda", byID.data()["customer"].(map[string]any)["name"])
	upd := h.do(request{method: "PATCH", path: storePath(s.m.storeID, "/customers/"+cust.data()["id"].(string)), auth: bearer(s.token), body: map[string]any{"email": nil, "name": "Hoda A."}})
	require.Equal(t, http.StatusOK, upd.Status)
	require.Nil(t, upd.data()["email"])
	list := h.do(request{method: "GET", path: storePath(s.m.storeID, "/customers?search=hoda"), auth: bearer(s.token)})
	require.EqualValues(t, 1, list.data()["pagination"].(map[string]any)["total"])
	require.Equal(t, http.StatusNoContent, h.do(request{method: "DELETE", path: storePath(s.m.storeID, "/customers/"+cust.data()["id"].(string)), auth: bearer(s.token)}).Status)
	kept := h.do(request{method: "GET", path: storePath(s.m.storeID, "/orders/"+byID.data()["id"].(string)), auth: bearer(s.token)})
	require.Equal(t, "Hoda", kept.data()["customer"].(map[string]any)["name"], "orders keep their customer snapshot")
}

// The status counters kept with every change agree with a full recount
// after creates, moves, cancels, drafts and a conversion.
func TestOrderCountersAgreeWithRecount(t *testing.T) {
	h := newHarness(t, api.Config{})
	h.startWorker(nil)
	s := newShop(t, h, "counters", 50)
	var ids []string
	for range 6 {
		ids = append(ids, h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders"), auth: bearer(s.token),
			body: orderBody(s.variantID, 1, "+201001234567")}).data()["id"].(string))
	}
	move := func(id, status string) {
		require.Equal(t, http.StatusOK, h.do(request{method: "PATCH", path: storePath(s.m.storeID, "/orders/"+id+"/status"),
			auth: bearer(s.token), body: map[string]any{"status": status}}).Status)
	}
	move(ids[0], "CONFIRMED")
	move(ids[1], "SHIPPED")
	move(ids[1], "DELIVERED")
	move(ids[2], "CANCELLED")
	h.do(request{method: "DELETE", path: storePath(s.m.storeID, "/orders/"+ids[3]), auth: bearer(s.token)})
	draft := h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders/drafts"), auth: bearer(s.token), body: orderBody(s.variantID, 1, "+201001234567")}).data()
	h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders/drafts"), auth: bearer(s.token), body: orderBody(s.variantID, 1, "+201001234567")})
	require.Equal(t, http.StatusOK, h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders/"+draft["id"].(string)+"/convert"), auth: bearer(s.token)}).Status)

	counted := h.do(request{method: "GET", path: storePath(s.m.storeID, "/orders/counts"), auth: bearer(s.token)}).data()
	scanned := h.do(request{method: "GET", path: storePath(s.m.storeID, "/orders/counts?date_from=2000-01-01T00:00:00Z"), auth: bearer(s.token)}).data()
	require.Equal(t, scanned, counted)
	require.EqualValues(t, 7, counted["total"])
	require.Equal(t, map[string]any{"PENDING": 3.0, "CONFIRMED": 1.0, "PROCESSING": 0.0, "READY_TO_SHIP": 0.0, "SHIPPED": 0.0,
		"DELIVERED": 1.0, "RETURNED": 0.0, "CANCELLED": 2.0}, counted["counts"])
	list := h.do(request{method: "GET", path: storePath(s.m.storeID, "/orders?limit=2&status=PENDING"), auth: bearer(s.token)}).data()
	require.EqualValues(t, 3, list["pagination"].(map[string]any)["total"])
	waitFor(t, "every placed order's side effects started", func() bool {
		var waiting int
		_ = testenv.SQL(h.t, h.db).QueryRow(context.Background(), `SELECT count(*) FROM orders WHERE placed_started_at IS NULL AND status <> 'DRAFT'`).Scan(&waiting)
		return waiting == 0
	})
}

// Concurrent first orders from one new customer create that customer once
// (they used to race on the unique phone index and answer 409).
func TestConcurrentFirstOrdersOfANewCustomer(t *testing.T) {
	h := newHarness(t, api.Config{})
	s := newShop(t, h, "newcustomer", 100)
	var wg sync.WaitGroup
	statuses := make([]int, 8)
	for i := range statuses {
		wg.Add(1)
		go func() {
			defer wg.Done()
			statuses[i] = h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders"), auth: bearer(s.token),
				body: orderBody(s.variantID, 1, "+201009998887")}).Status
		}()
	}
	wg.Wait()
	for _, st := range statuses {
		require.Equal(t, http.StatusCreated, st)
	}
	var customers int
	require.NoError(t, testenv.SQL(h.t, h.db).QueryRow(context.Background(), `SELECT count(*) FROM customers WHERE store_id = $1`, s.m.storeID).Scan(&customers))
	require.Equal(t, 1, customers)
}

// Staff comments are staff-only (spec §2.5, decisions' conversations part):
// an order's activities read with a partner app's token leave them out,
// from the items and from the total; the staff's own personal token and
// session read them.
func TestActivitiesLeaveStaffCommentsOutForAppTokens(t *testing.T) {
	h := newHarness(t, api.Config{})
	s := newShop(t, h, "staffonly", 5)
	id := h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders"), auth: bearer(s.token),
		body: orderBody(s.variantID, 1, "+201001230000")}).data()["id"].(string)
	c := h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders/"+id+"/comments"), auth: bearer(s.token),
		body: map[string]any{"body": "STAFF-ONLY: the buyer is the owner's cousin"}})
	require.Equal(t, http.StatusCreated, c.Status, string(c.Raw))

	dev := h.signup("staffonlydev")
	app := h.registerApp(dev, "staffonly-app", map[string]any{"oauth": map[string]any{"scopes": []string{"orders:read"},
		"redirect_urls": []string{"https://app.example.com/oauth/callback"}}})
	br := h.newBrowser()
	br.signIn(s.m.email)
	q := br.allow(app, s.m.storeID, "orders:read", "s", "allow")
	appToken := h.exchange(app, q.Get("code"), nil).data()["access_token"].(string)

	path := storePath(s.m.storeID, "/orders/"+id+"/activities")
	kinds := func(cred auth) ([]string, float64) {
		t.Helper()
		resp := h.do(request{method: "GET", path: path, auth: cred})
		require.Equal(t, http.StatusOK, resp.Status, string(resp.Raw))
		var out []string
		for _, a := range resp.data()["items"].([]any) {
			out = append(out, a.(map[string]any)["kind"].(string))
		}
		return out, resp.data()["pagination"].(map[string]any)["total"].(float64)
	}
	staff, staffTotal := kinds(bearer(s.token))
	require.Contains(t, staff, "comment", "the staff read their comments")
	session, _ := kinds(s.m.auth())
	require.Contains(t, session, "comment", "a signed-in member reads them")
	forApp, appTotal := kinds(bearer(appToken))
	require.NotContains(t, forApp, "comment", "an app token reads no staff comment")
	require.NotEmpty(t, forApp, "an app token reads the order's system events")
	require.Equal(t, staffTotal-1, appTotal, "the total counts what the app may read")
	raw := h.do(request{method: "GET", path: path, auth: bearer(appToken)}).Raw
	require.NotContains(t, string(raw), "STAFF-ONLY")
}
