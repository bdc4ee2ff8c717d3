package api_test

import (
	"context"
	"database/sql"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/merchantsvc/svc/api"
	"github.com/merchantsvc/svc/internal/testenv"
	"github.com/merchantsvc/svc/migrations"
)

func (h *harness) locations(token, storeID string) []map[string]any {
	h.t.Helper()
	resp := h.do(request{method: "GET", path: storePath(storeID, "/locations"), auth: bearer(token)})
	require.Equal(h.t, http.StatusOK, resp.Status, string(resp.Raw))
	var out []map[string]any
	for _, it := range resp.data()["items"].([]any) {
		out = append(out, it.(map[string]any))
	}
	return out
}

var cairoAddress = map[string]any{"line1": "12 Tahrir St", "city": "Cairo", "country": "EG"}

// Every store starts with its default location; locations list in
// reservation order; the default mark moves, never disappears; the default
// location cannot be switched off or deleted; names are unique per store.
func TestLocations(t *testing.T) {
	h := newHarness(t, api.Config{})
	m := h.signup("locations")
	token := h.pat(m, "settings:read", "settings:write")

	start := h.locations(token, m.storeID)
	require.Len(t, start, 1, "signup creates the default location")
	main := start[0]
	require.Equal(t, "المستودع الرئيسي", main["name"])
	require.Equal(t, true, main["is_default"])
	require.Nil(t, main["address"], "not described yet")
	mainPath := storePath(m.storeID, "/locations/"+main["id"].(string))

	alex := h.do(request{method: "POST", path: storePath(m.storeID, "/locations"), auth: bearer(token),
		body: map[string]any{"name": "Alexandria", "address": map[string]any{"line1": "1 Corniche", "city": "Alexandria", "country": "EG"},
			"phone": "+20 100 123 4567", "priority": 10}})
	require.Equal(t, http.StatusCreated, alex.Status, string(alex.Raw))
	require.Equal(t, "+201001234567", alex.data()["phone"])
	require.Equal(t, true, alex.data()["is_active"])
	require.Equal(t, false, alex.data()["is_default"])
	alexPath := storePath(m.storeID, "/locations/"+alex.data()["id"].(string))
	names := []string{}
	for _, l := range h.locations(token, m.storeID) {
		names = append(names, l["name"].(string))
	}
	require.Equal(t, []string{"Alexandria", "المستودع الرئيسي"}, names, "priority 10 before the default's 100")

	for name, tc := range map[string]struct {
		body   map[string]any
		status int
		field  string
	}{
		"no name":           {map[string]any{"address": cairoAddress}, 422, "name"},
		"long name":         {map[string]any{"name": string(make([]byte, 121)), "address": cairoAddress}, 422, "name"},
		"no address":        {map[string]any{"name": "X"}, 422, "address"},
		"bad country":       {map[string]any{"name": "X", "address": map[string]any{"line1": "1", "city": "C", "country": "Egypt"}}, 422, "address.country"},
		"digit in country":  {map[string]any{"name": "X", "address": map[string]any{"line1": "1", "city": "C", "country": "E1"}}, 422, "address.country"},
		"negative priority": {map[string]any{"name": "X", "address": cairoAddress, "priority": -1}, 422, "priority"},
		"taken name":        {map[string]any{"name": "ALEXANDRIA", "address": cairoAddress}, 409, "name"},
	} {
		resp := h.do(request{method: "POST", path: storePath(m.storeID, "/locations"), auth: bearer(token), body: tc.body})
		require.Equal(t, tc.status, resp.Status, "%s: %s", name, resp.Raw)
		require.NotEmpty(t, resp.errorField("message_ar"), name)
		if tc.status == 422 {
			require.Contains(t, resp.fieldNames(), tc.field, name)
		}
	}
	require.Len(t, h.locations(token, m.storeID), 2, "refusals change nothing")

	// The default location stays the default until another takes the mark.
	for _, body := range []map[string]any{{"is_default": false}, {"is_active": false}} {
		resp := h.do(request{method: "PATCH", path: mainPath, auth: bearer(token), body: body})
		require.Equal(t, http.StatusUnprocessableEntity, resp.Status, string(resp.Raw))
		require.Contains(t, string(resp.Raw), "default_location")
	}
	deleted := h.do(request{method: "DELETE", path: mainPath, auth: bearer(token)})
	require.Equal(t, http.StatusConflict, deleted.Status)
	require.Equal(t, "LOCATION_IN_USE", deleted.errorCode())
	require.NotEmpty(t, deleted.errorField("message_ar"))

	described := h.do(request{method: "PATCH", path: mainPath, auth: bearer(token), body: map[string]any{"address": cairoAddress, "name": "Cairo"}})
	require.Equal(t, http.StatusOK, described.Status, string(described.Raw))
	require.Equal(t, "Cairo", described.data()["address"].(map[string]any)["city"])
	moved := h.do(request{method: "PATCH", path: alexPath, auth: bearer(token), body: map[string]any{"is_default": true}})
	require.Equal(t, http.StatusOK, moved.Status, string(moved.Raw))
	require.Equal(t, true, moved.data()["is_default"])
	var defaults int
	for _, l := range h.locations(token, m.storeID) {
		if l["is_default"] == true {
			defaults++
			require.Equal(t, "Alexandria", l["name"])
		}
	}
	require.Equal(t, 1, defaults, "one default per store")
	off := h.do(request{method: "PATCH", path: mainPath, auth: bearer(token), body: map[string]any{"is_active": false}})
	require.Equal(t, http.StatusOK, off.Status, string(off.Raw))
	require.Equal(t, false, off.data()["is_active"])
	require.Equal(t, http.StatusNoContent, h.do(request{method: "DELETE", path: mainPath, auth: bearer(token)}).Status)
	require.Equal(t, http.StatusNotFound, h.do(request{method: "GET", path: mainPath, auth: bearer(token)}).Status)

	// Another store's token sees none of it.
	other := h.signup("locations-other")
	otherToken := h.pat(other, "settings:read")
	require.Len(t, h.locations(otherToken, other.storeID), 1)
	require.Equal(t, http.StatusForbidden, h.do(request{method: "GET", path: alexPath, auth: bearer(otherToken)}).Status)
}

// The migration gives every store that existed before it one default
// location, named in the store's language.
func TestLocationsMigrationGivesExistingStoresTheirDefault(t *testing.T) {
	ctx := context.Background()
	db, err := sql.Open("pgx", testenv.DatabaseURL(t, false))
	require.NoError(t, err)
	defer db.Close()
	require.NoError(t, migrations.UpTo(ctx, db, 21))
	_, err = db.ExecContext(ctx, `INSERT INTO users (id, email, password_hash, name, locale, created_at, updated_at)
		VALUES ('00000000-0000-0000-0000-0000000000a1', 'old@example.com', 'x', 'Old', 'ar', now(), now())`)
	require.NoError(t, err)
	for i, lang := range []string{"ar", "en"} {
		_, err = db.ExecContext(ctx, `INSERT INTO stores (id, owner_user_id, name, subdomain, currency, default_language, lifecycle_state, created_at, updated_at)
			VALUES ($1, '00000000-0000-0000-0000-0000000000a1', 'Old', $2, 'EGP', $3, 'trial', now(), now())`,
			[]string{"00000000-0000-0000-0000-0000000000b1", "00000000-0000-0000-0000-0000000000b2"}[i], "old-"+lang, lang)
		require.NoError(t, err)
	}
	require.NoError(t, migrations.Up(ctx, db))
	rows, err := db.QueryContext(ctx, `SELECT s.default_language, l.name, l.is_default, l.is_active FROM locations l JOIN stores s ON s.id = l.store_id ORDER BY s.subdomain`)
	require.NoError(t, err)
	defer rows.Close()
	var got []string
	for rows.Next() {
		var lang, name string
		var isDefault, isActive bool
		require.NoError(t, rows.Scan(&lang, &name, &isDefault, &isActive))
		require.True(t, isDefault && isActive)
		got = append(got, lang+":"+name)
	}
	require.Equal(t, []string{"ar:المستودع الرئيسي", "en:Main warehouse"}, got)
}
