package api_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/merchantsvc/svc/api"
	"github.com/merchantsvc/svc/internal/testenv"
)

// A rule change answers 202 with rebuild running and leaves the members
// those of the old rules until the rebuild swaps them at once; an unchanged
// rule or another field answers 200. With the worker and its dispatcher
// running, the collection-rebuild workflow applies the change.
func TestCollectionRuleChangeRebuilds(t *testing.T) {
	h := newHarness(t, api.Config{})
	s := newCollectionShop(h, "coll-rebuild")
	cheap, mid, dear := s.product("Cheap", 1000, nil), s.product("Mid", 5000, nil), s.product("Dear", 9000, nil)
	col := s.create(map[string]any{"kind": "smart", "title": map[string]any{"en": "Under 20"}, "sort": "price_asc",
		"rules": rules("all", rule("price", "less_than", 2000))})
	id := col["id"].(string)
	require.Equal(t, []string{cheap}, s.productIDs(id, ""))

	same := s.call("PATCH", "/collections/"+id, map[string]any{"rules": rules("all", rule("price", "less_than", 2000)), "published": true})
	require.Equal(t, http.StatusOK, same.Status, string(same.Raw))
	require.Equal(t, "idle", same.data()["rebuild"])

	changed := s.call("PATCH", "/collections/"+id, map[string]any{"rules": rules("all", rule("price", "less_than", 6000))})
	require.Equal(t, http.StatusAccepted, changed.Status, string(changed.Raw))
	require.Equal(t, "running", changed.data()["rebuild"])
	require.Equal(t, rules("all", rule("price", "less_than", 6000.0)), changed.data()["rules"], "the rules read back as written")
	require.EqualValues(t, 1, changed.data()["products_count"], "the old set until the rebuild")
	require.Equal(t, []string{cheap}, s.productIDs(id, ""))
	// A product written meanwhile is judged by the rules the members follow.
	other := s.product("Other", 4000, nil)
	require.Equal(t, []string{cheap}, s.productIDs(id, ""))

	h.startWorker(nil)
	waitFor(t, "the rebuild", func() bool { return s.call("GET", "/collections/"+id, nil).data()["rebuild"] == "idle" })
	require.Equal(t, []string{cheap, other, mid}, s.productIDs(id, ""))
	var started string
	require.NoError(t, testenv.SQL(t, h.db).QueryRow(context.Background(),
		`SELECT rebuild_started::text || '/' || applied_version::text || '/' || rules_version::text FROM collections WHERE id = $1`, id).Scan(&started))
	require.Equal(t, "1/1/1", started)

	// Rules changed twice in a row end with the last.
	require.Equal(t, http.StatusAccepted, s.call("PATCH", "/collections/"+id, map[string]any{"rules": rules("all", rule("price", "greater_than", 8000))}).Status)
	require.Equal(t, http.StatusAccepted, s.call("PATCH", "/collections/"+id, map[string]any{"rules": rules("all", rule("title", "contains", "ea"))}).Status)
	waitFor(t, "the second rebuild", func() bool { return s.call("GET", "/collections/"+id, nil).data()["rebuild"] == "idle" })
	require.Equal(t, []string{cheap, dear}, s.productIDs(id, ""))

	// A manual collection takes no rules.
	manual := s.create(map[string]any{"kind": "manual", "title": map[string]any{"en": "Picks"}})
	refused := s.call("PATCH", "/collections/"+manual["id"].(string), map[string]any{"rules": rules("all", rule("tag", "is_set", nil))})
	require.Equal(t, http.StatusUnprocessableEntity, refused.Status, string(refused.Raw))
	require.Equal(t, "not_allowed", refused.fieldCode("rules"))
}

// Product writes racing rule rebuilds end with the exact set: after the
// dust settles, a smart collection holds exactly the products its rules
// match, however the writes and the rebuilds interleaved.
func TestCollectionMembershipExactUnderRacingWrites(t *testing.T) {
	h := newHarness(t, api.Config{})
	s := newCollectionShop(h, "coll-race")
	const n = 12
	products := make([]string, n)
	for i := range products {
		products[i] = s.product(fmt.Sprintf("P%d", i), 1000*(i+1), nil)
	}
	col := s.create(map[string]any{"kind": "smart", "title": map[string]any{"en": "Race"}, "rules": rules("all", rule("price", "less_than", 6500))})
	id := col["id"].(string)
	storeID, collectionID := uuid.MustParse(s.m.storeID), uuid.MustParse(id)

	thresholds := []int{2500, 9500, 4500, 11500, 6500, 3500, 8500}
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for round := range 8 {
				p := products[(w*8+round)%n]
				price := 500 + ((w+1)*(round+3)*1700)%12000
				resp := s.call("PATCH", "/products/"+p, map[string]any{"price": price})
				require.Equal(t, http.StatusOK, resp.Status, string(resp.Raw))
			}
		})
	}
	wg.Go(func() {
		for _, limit := range thresholds {
			resp := s.call("PATCH", "/collections/"+id, map[string]any{"rules": rules("all", rule("price", "less_than", limit))})
			require.Equal(t, http.StatusAccepted, resp.Status, string(resp.Raw))
			require.NoError(t, h.db.RebuildCollection(context.Background(), storeID, collectionID))
		}
	})
	wg.Wait()

	var want []string
	rows, err := testenv.SQL(t, h.db).Query(context.Background(), `SELECT id::text FROM products WHERE store_id = $1 AND price < $2 ORDER BY id`,
		s.m.storeID, thresholds[len(thresholds)-1])
	require.NoError(t, err)
	for rows.Next() {
		var p string
		require.NoError(t, rows.Scan(&p))
		want = append(want, p)
	}
	require.NoError(t, rows.Err())
	got := s.productIDs(id, "?limit=100")
	slices.Sort(got)
	require.Equal(t, want, got)
	require.Equal(t, "idle", s.call("GET", "/collections/"+id, nil).data()["rebuild"])
}
