package api_test

import (
	"bytes"
	"encoding/csv"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/merchantsvc/svc/api"
)

// TestAuditedRoutesCoverEveryStoreWrite holds the audit table to the
// router: every write route under /stores/{store_id} has an action (or is
// a POST that changes nothing), and every action names a real route.
func TestAuditedRoutesCoverEveryStoreWrite(t *testing.T) {
	h := newHarness(t, api.Config{})
	routes, err := h.server.Routes()
	require.NoError(t, err)
	actions, readOnly := api.AuditedRoutes()
	const prefix = "/api/v1/stores/{store_id}"
	served := map[string]bool{}
	for _, r := range routes {
		method, pattern := r[0], r[1]
		if method == http.MethodGet || !strings.HasPrefix(pattern, prefix) {
			continue
		}
		key := method + " " + strings.TrimSuffix(strings.TrimPrefix(pattern, prefix), "/")
		served[key] = true
		_, audited := actions[key]
		require.True(t, audited || slices.Contains(readOnly, key), "write route %s has no audit action", key)
	}
	seen := map[string]string{}
	for route, action := range actions {
		require.True(t, served[route], "audited route %s is not served", route)
		require.Regexp(t, `^[a-z_]+\.[a-z_]+$`, action)
		require.Empty(t, seen[action], "action %s names both %s and %s", action, seen[action], route)
		seen[action] = route
	}
}

func auditEntries(t *testing.T, h *harness, owner merchant, query string) []map[string]any {
	t.Helper()
	resp := h.do(request{method: "GET", path: storePath(owner.storeID, "/audit-log"+query), auth: owner.auth()})
	require.Equal(t, http.StatusOK, resp.Status, string(resp.Raw))
	var out []map[string]any
	for _, e := range resp.data()["items"].([]any) {
		out = append(out, e.(map[string]any))
	}
	return out
}

func TestAuditLogRecordsChangesWithActorAndSource(t *testing.T) {
	h := newHarness(t, api.Config{})
	owner := h.signup("audit")
	// Signing up is the owner's first sign-in.
	signIns := auditEntries(t, h, owner, "?action=staff.signed_in")
	require.Len(t, signIns, 1)
	require.Equal(t, "user", signIns[0]["actor"].(map[string]any)["type"])
	require.Equal(t, owner.email, signIns[0]["resource"].(map[string]any)["label"])

	created := h.do(request{method: "POST", path: storePath(owner.storeID, "/discounts"), auth: owner.auth(),
		headers: map[string]string{"User-Agent": "audit-test/1.0", "X-Request-Id": "req-audit-create"},
		body:    map[string]any{"method": "code", "code": "SUMMER", "title": "Summer", "type": "percentage", "value": 10}})
	require.Equal(t, http.StatusCreated, created.Status, string(created.Raw))
	discountID := created.data()["id"].(string)

	token := h.pat(owner, "marketing:write")
	updated := h.do(request{method: "PATCH", path: storePath(owner.storeID, "/discounts/"+discountID), auth: bearer(token),
		body: map[string]any{"title": "Summer sale", "value": 15}})
	require.Equal(t, http.StatusOK, updated.Status, string(updated.Raw))

	// A change refused inside its transaction (the code is taken) writes none.
	dup := h.do(request{method: "POST", path: storePath(owner.storeID, "/discounts"), auth: owner.auth(),
		headers: map[string]string{"X-Request-Id": "req-audit-dup"},
		body:    map[string]any{"method": "code", "code": "summer", "title": "Again", "type": "percentage", "value": 5}})
	require.Equal(t, http.StatusConflict, dup.Status, string(dup.Raw))
	require.Empty(t, auditEntries(t, h, owner, "?request_id=req-audit-dup"))

	entries := auditEntries(t, h, owner, "?resource_type=discount")
	require.Len(t, entries, 2)
	// Newest first: the token's update, then the owner's create.
	update, create := entries[0], entries[1]
	require.Equal(t, "discount.updated", update["action"])
	actor := update["actor"].(map[string]any)
	require.Equal(t, "token", actor["type"])
	require.NotEmpty(t, actor["user_id"])
	require.Equal(t, map[string]any{"from": "Summer", "to": "Summer sale"}, update["changes"].(map[string]any)["title"])
	require.Equal(t, map[string]any{"from": float64(10), "to": float64(15)}, update["changes"].(map[string]any)["value"])
	require.NotContains(t, update["changes"], "updated_at")

	require.Equal(t, "discount.created", create["action"])
	require.Equal(t, map[string]any{"type": "discount", "id": discountID, "label": "SUMMER"}, create["resource"])
	require.Equal(t, "user", create["actor"].(map[string]any)["type"])
	require.Equal(t, "Merchant audit", create["actor"].(map[string]any)["name"])
	require.Equal(t, "req-audit-create", create["request_id"])
	require.Equal(t, "audit-test/1.0", create["user_agent"])
	require.Equal(t, "127.0.0.1", create["ip"])

	// Filters: the action by prefix, the actor, the resource.
	require.Len(t, auditEntries(t, h, owner, "?action=discount.*"), 2)
	require.Len(t, auditEntries(t, h, owner, "?actor_type=token"), 1)
	require.Len(t, auditEntries(t, h, owner, "?actor_id="+actor["id"].(string)), 1)
	require.Len(t, auditEntries(t, h, owner, "?resource_id="+discountID+"&action=discount.created"), 1)
	require.Empty(t, auditEntries(t, h, owner, "?date_to=2020-01-01T00:00:00Z"))
	require.Len(t, auditEntries(t, h, owner, "?limit=1"), 1)

	bad := h.do(request{method: "GET", path: storePath(owner.storeID, "/audit-log?actor_type=robot&limit=0&date_from=yesterday"), auth: owner.auth()})
	require.Equal(t, http.StatusUnprocessableEntity, bad.Status, string(bad.Raw))
	require.ElementsMatch(t, []string{"actor_type", "limit", "date_from"}, bad.fieldNames())

	// A secret shown once never reaches the log.
	rows := h.do(request{method: "GET", path: storePath(owner.storeID, "/audit-log?format=csv&lang=ar"), auth: owner.auth()})
	require.Equal(t, http.StatusOK, rows.Status)
	require.Contains(t, rows.Header.Get("Content-Type"), "text/csv")
	require.Contains(t, rows.Header.Get("Content-Disposition"), "attachment")
	require.NotContains(t, string(rows.Raw), token)
	records, err := csv.NewReader(bytes.NewReader(bytes.TrimPrefix(rows.Raw, []byte("\ufeff")))).ReadAll()
	require.NoError(t, err)
	require.Equal(t, "الإجراء", records[0][4])
	require.Len(t, records, 1+len(auditEntries(t, h, owner, "?limit=100")))
}

func TestAuditLogIsTheOwnersAlone(t *testing.T) {
	h := newHarness(t, api.Config{})
	h.startWorker(nil)
	owner := h.signup("auditowner")
	admin := h.join(owner, "admin-audit@example.com", h.roleID(owner, "Admin"))
	denied := h.do(request{method: "GET", path: storePath(owner.storeID, "/audit-log"), auth: admin.auth()})
	require.Equal(t, http.StatusForbidden, denied.Status)
	require.Equal(t, "ROLE_NOT_ALLOWED", denied.errorCode())
	token := h.do(request{method: "GET", path: storePath(owner.storeID, "/audit-log"), auth: bearer(h.pat(owner, "settings:read"))})
	require.Equal(t, http.StatusForbidden, token.Status)
	require.Equal(t, "TOKEN_NOT_ALLOWED", token.errorCode())

	// The admin's joining and signing in are in the owner's log; signing in
	// again adds one entry per sign-in.
	joined := auditEntries(t, h, owner, "?action=staff.joined")
	require.Len(t, joined, 1)
	require.Equal(t, "admin-audit@example.com", joined[0]["resource"].(map[string]any)["label"])
	before := len(auditEntries(t, h, owner, "?action=staff.signed_in"))
	require.Equal(t, http.StatusOK, h.login("admin-audit@example.com", "correct horse battery").Status)
	require.Len(t, auditEntries(t, h, owner, "?action=staff.signed_in"), before+1)
	require.Equal(t, http.StatusUnauthorized, h.login("admin-audit@example.com", "wrong password!!").Status)
	require.Len(t, auditEntries(t, h, owner, "?action=staff.signed_in"), before+1)
}

// The writes no other test carries to success, each once, so the suite
// walks every write route (TestMain's everyWriteRouteAudited) and the
// harness checks each wrote its one entry.
func TestAuditLogCoversTheRarerWrites(t *testing.T) {
	h := newHarness(t, api.Config{})
	h.startWorker(nil)
	s := newShop(t, h, "auditrare", 20)
	owner := s.m
	ok := func(want int, method, path string, body any) response {
		t.Helper()
		resp := h.do(request{method: method, path: storePath(owner.storeID, path), auth: owner.auth(), body: body})
		require.Equal(t, want, resp.Status, "%s %s: %s", method, path, resp.Raw)
		return resp
	}

	account := h.carrierAccount(s, "aramex", "Aramex main")
	ok(http.StatusNoContent, "DELETE", "/carrier-accounts/"+account.id, nil)

	role := ok(http.StatusCreated, "POST", "/roles", map[string]any{"name": "Packer", "scopes": []string{"orders:write"}}).data()["id"].(string)
	other := ok(http.StatusCreated, "POST", "/roles", map[string]any{"name": "Counter", "scopes": []string{"catalog:read"}}).data()["id"].(string)
	h.join(owner, "packer-audit@example.com", role)
	staff := ok(http.StatusOK, "GET", "/staff", nil).data()["items"].([]any)
	packerID := staff[len(staff)-1].(map[string]any)["user"].(map[string]any)["id"].(string)
	ok(http.StatusOK, "PATCH", "/staff/"+packerID, map[string]any{"role_id": other})
	ok(http.StatusNoContent, "DELETE", "/roles/"+role, nil)
	changed := auditEntries(t, h, owner, "?action=staff.role_changed")
	require.Len(t, changed, 1)
	require.Equal(t, "Counter", changed[0]["changes"].(map[string]any)["role"].(map[string]any)["to"].(map[string]any)["name"])

	zone := ok(http.StatusCreated, "POST", "/shipping/zones", map[string]any{"name": "Giza", "areas": []any{map[string]any{"country": "EG", "cities": []string{"Giza"}}}}).data()["id"].(string)
	rate := ok(http.StatusCreated, "POST", "/shipping/zones/"+zone+"/rates", map[string]any{"name": "Standard", "price": 3000}).data()["id"].(string)
	ok(http.StatusNoContent, "DELETE", "/shipping/zones/"+zone+"/rates/"+rate, nil)

	// A shipment changed then cancelled, and a return declined.
	order := h.placeOrder(s, "cod", 1)
	orderID := order["id"].(string)
	shipment := ok(http.StatusCreated, "POST", "/orders/"+orderID+"/shipments", map[string]any{"carrier": "aramex"}).data()["id"].(string)
	ok(http.StatusOK, "PATCH", "/shipments/"+shipment, map[string]any{"tracking_number": "AWB-AUDIT-1"})
	ok(http.StatusOK, "POST", "/shipments/"+shipment+"/cancel", map[string]any{})

	delivered := h.placeOrder(s, "cod", 1)
	deliveredID := delivered["id"].(string)
	sent := ok(http.StatusCreated, "POST", "/orders/"+deliveredID+"/shipments", map[string]any{"carrier": "aramex", "tracking_number": "AWB-AUDIT-2"}).data()["id"].(string)
	require.Equal(t, http.StatusOK, h.shipmentEvent(s, sent, map[string]any{"status": "delivered"}).Status)
	line := delivered["lines"].([]any)[0].(map[string]any)["id"].(string)
	ret := ok(http.StatusCreated, "POST", "/orders/"+deliveredID+"/returns", map[string]any{"lines": []any{
		map[string]any{"line_id": line, "quantity": 1, "reason": "changed_mind"}}}).data()["id"].(string)
	ok(http.StatusOK, "POST", "/returns/"+ret+"/decline", map[string]any{"reason": "outside the return window"})

	declined := auditEntries(t, h, owner, "?resource_type=return&resource_id="+ret)
	require.Len(t, declined, 2)
	require.Equal(t, "return.declined", declined[0]["action"])
	require.Equal(t, "return.requested", declined[1]["action"])
}
