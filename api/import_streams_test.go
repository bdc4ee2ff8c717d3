package api_test

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/merchantsvc/svc/api"
	"github.com/merchantsvc/svc/internal/testenv"
)

// importStream is an import's event stream held open by a test.
type importStream struct {
	status int
	header http.Header
	body   string        // a refusal's body
	ended  chan struct{} // closed when the server ends the stream
	close  func()        // the client goes away
}

// runningImport is an import of the store that stays running: no workflow
// moves it, so its stream lasts until it is closed or its access ends.
func (h *harness) runningImport(storeID string) string {
	h.t.Helper()
	id := uuid.NewString()
	h.exec(`INSERT INTO product_imports (id, store_id, status, dry_run, object_key, total_rows, workflow_started_at)
		VALUES ($1, $2, 'running', false, 'imports/test', 100, now())`, id, storeID)
	return id
}

// openImportStream opens the import's event stream with cred, as a browser's
// EventSource would, and waits for the first event; a refusal is read whole.
func (h *harness) openImportStream(cred auth, storeID, importID string) *importStream {
	h.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	h.t.Cleanup(cancel) // before the server closes: a stream outlasts the test otherwise
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, h.url+storePath(storeID, "/products/imports/"+importID+"/events"), nil)
	require.NoError(h.t, err)
	req.Header.Set("Accept", "text/event-stream")
	if cred.token != "" {
		req.Header.Set("Authorization", "Bearer "+cred.token)
	}
	if cred.session != "" {
		req.AddCookie(&http.Cookie{Name: "svc_session", Value: cred.session})
	}
	res, err := http.DefaultClient.Do(req)
	require.NoError(h.t, err)
	s := &importStream{status: res.StatusCode, header: res.Header, ended: make(chan struct{}), close: cancel}
	if res.StatusCode != http.StatusOK {
		defer res.Body.Close()
		var b strings.Builder
		_, _ = bufio.NewReader(res.Body).WriteTo(&b)
		s.body = b.String()
		close(s.ended)
		return s
	}
	first := make(chan string, 1)
	go func() {
		defer close(s.ended)
		defer res.Body.Close()
		lines := bufio.NewScanner(res.Body)
		for lines.Scan() {
			if ev, ok := strings.CutPrefix(lines.Text(), "event: "); ok {
				select {
				case first <- ev:
				default:
				}
			}
		}
	}()
	select {
	case ev := <-first:
		require.Equal(h.t, "progress", ev)
	case <-time.After(10 * time.Second):
		h.t.Fatal("the stream sent no first event")
	}
	return s
}

// endsWithin reports whether the server ended the stream within d.
func (s *importStream) endsWithin(d time.Duration) bool {
	select {
	case <-s.ended:
		return true
	case <-time.After(d):
		return false
	}
}

func (s *importStream) open() bool {
	select {
	case <-s.ended:
		return false
	default:
		return true
	}
}

// userIDOf is the id of the user who signed up as m.
func (h *harness) userIDOf(m merchant) string {
	h.t.Helper()
	var id string
	require.NoError(h.t, testenv.SQL(h.t, h.db).QueryRow(context.Background(),
		`SELECT owner_user_id::text FROM stores WHERE id = $1`, m.storeID).Scan(&id))
	return id
}

// addMember makes m a member of owner's store with the role named role
// (admin, or a custom role's name).
func (h *harness) addMember(owner, m merchant, role string) {
	h.t.Helper()
	h.exec(`INSERT INTO store_members (store_id, user_id, role_id, joined_at)
		SELECT $1, s.owner_user_id, r.id, now() FROM stores s, roles r WHERE s.id = $2 AND r.store_id = $1 AND (r.built_in = $3 OR r.name = $3)`,
		owner.storeID, m.storeID, role)
}

// A user holds at most five import event streams at once (issue 48 item
// 3), their sessions and personal tokens together: the sixth answers 429
// RATE_LIMITED with Retry-After in the envelope, while another user still
// opens theirs, and closing one lets the next in.
func TestImportEventStreamsAreCappedPerUser(t *testing.T) {
	h := newHarness(t, api.Config{})
	owner, other := h.signup("streamcap"), h.signup("streamcapother")
	h.addMember(owner, other, "admin")
	imp := h.runningImport(owner.storeID)
	token := h.pat(owner, "catalog:read")

	var held []*importStream
	for i := range 5 {
		cred := owner.auth()
		if i >= 3 {
			cred = bearer(token) // the same user's personal token
		}
		s := h.openImportStream(cred, owner.storeID, imp)
		require.Equal(t, http.StatusOK, s.status, "stream %d: %s", i+1, s.body)
		held = append(held, s)
	}
	for who, cred := range map[string]auth{"session": owner.auth(), "personal token": bearer(token)} {
		refused := h.do(request{method: "GET", path: storePath(owner.storeID, "/products/imports/"+imp+"/events"), auth: cred})
		require.Equal(t, http.StatusTooManyRequests, refused.Status, "the sixth stream, by %s: %s", who, refused.Raw)
		require.Equal(t, "RATE_LIMITED", refused.errorCode(), who)
		require.Equal(t, "5", refused.Header.Get("Retry-After"), who)
		require.Contains(t, refused.errorField("message"), "At most 5 import event streams", who)
		require.NotEmpty(t, refused.errorField("message_ar"), who)
	}
	mine := h.openImportStream(other.auth(), owner.storeID, imp)
	require.Equal(t, http.StatusOK, mine.status, "another user's stream is theirs to count: %s", mine.body)
	for _, s := range held {
		require.True(t, s.open(), "the streams held stay open")
	}

	held[0].close()
	require.Eventually(t, func() bool {
		s := h.openImportStream(owner.auth(), owner.storeID, imp)
		return s.status == http.StatusOK
	}, 5*time.Second, 100*time.Millisecond, "a closed stream gives its slot back")
}

// An open import event stream ends within a second or two once its
// credential may no longer read the catalogue (issue 48 item 3): its member
// removed (the member's own personal token's stream too), given a role
// without catalog:read, signed out, its token revoked, or the store
// suspended. A stream whose access stands runs on meanwhile, and the
// reconnect answers the refusal.
func TestImportEventStreamEndsWhenAccessEnds(t *testing.T) {
	h := newHarness(t, api.Config{})
	owner := h.signup("streamend")
	imp := h.runningImport(owner.storeID)
	for name, scopes := range map[string][]string{"Reader": {"catalog:read"}, "Packer": {"orders:read"}} {
		role := h.do(request{method: "POST", path: storePath(owner.storeID, "/roles"), auth: owner.auth(),
			body: map[string]any{"name": name, "scopes": scopes}})
		require.Equal(t, http.StatusCreated, role.Status, string(role.Raw))
	}
	var packerRole string
	require.NoError(t, testenv.SQL(t, h.db).QueryRow(context.Background(),
		`SELECT id::text FROM roles WHERE store_id = $1 AND name = 'Packer'`, owner.storeID).Scan(&packerRole))
	admin, demoted, leaving := h.signup("streamadmin"), h.signup("streamdemoted"), h.signup("streamleaving")
	h.addMember(owner, admin, "admin")
	h.addMember(owner, demoted, "Reader")
	h.addMember(owner, leaving, "Reader")
	adminToken := h.do(request{method: "POST", path: storePath(owner.storeID, "/access-tokens"), auth: admin.auth(),
		body: map[string]any{"name": "admin's", "scopes": []string{"catalog:read"}}})
	require.Equal(t, http.StatusCreated, adminToken.Status, string(adminToken.Raw))
	ownerToken := h.do(request{method: "POST", path: storePath(owner.storeID, "/access-tokens"), auth: owner.auth(),
		body: map[string]any{"name": "to revoke", "scopes": []string{"catalog:read"}}})
	require.Equal(t, http.StatusCreated, ownerToken.Status, string(ownerToken.Raw))

	// The owner's own stream, whose access stands until the store is suspended.
	standing := h.openImportStream(owner.auth(), owner.storeID, imp)
	require.Equal(t, http.StatusOK, standing.status, standing.body)

	const within = 3 * time.Second // the stream asks every second
	cases := []struct {
		name    string
		streams []auth
		act     func()
		refusal int
	}{
		{"a member removed", []auth{admin.auth(), bearer(adminToken.data()["token"].(string))}, func() {
			resp := h.do(request{method: "DELETE", path: storePath(owner.storeID, "/staff/"+h.userIDOf(admin)), auth: owner.auth()})
			require.Equal(t, http.StatusNoContent, resp.Status, string(resp.Raw))
		}, 0},
		{"a member given a role without catalog:read", []auth{demoted.auth()}, func() {
			resp := h.do(request{method: "PATCH", path: storePath(owner.storeID, "/staff/"+h.userIDOf(demoted)), auth: owner.auth(),
				body: map[string]any{"role_id": packerRole}})
			require.Equal(t, http.StatusOK, resp.Status, string(resp.Raw))
		}, http.StatusForbidden},
		{"a member signed out", []auth{leaving.auth()}, func() {
			resp := h.do(request{method: "POST", path: "/api/v1/auth/logout", auth: leaving.auth()})
			require.Less(t, resp.Status, 300, string(resp.Raw))
		}, http.StatusUnauthorized},
		{"a token revoked", []auth{bearer(ownerToken.data()["token"].(string))}, func() {
			resp := h.do(request{method: "DELETE", path: storePath(owner.storeID, "/access-tokens/"+ownerToken.data()["id"].(string)), auth: owner.auth()})
			require.Equal(t, http.StatusNoContent, resp.Status, string(resp.Raw))
		}, http.StatusUnauthorized},
	}
	for _, c := range cases {
		var streams []*importStream
		for _, cred := range c.streams {
			s := h.openImportStream(cred, owner.storeID, imp)
			require.Equal(t, http.StatusOK, s.status, "%s: %s", c.name, s.body)
			streams = append(streams, s)
		}
		c.act()
		for i, s := range streams {
			require.True(t, s.endsWithin(within), "%s: stream %d still open %s after", c.name, i+1, within)
			if again := h.openImportStream(c.streams[i], owner.storeID, imp); c.refusal != 0 {
				require.Equal(t, c.refusal, again.status, "%s: the reconnect: %s", c.name, again.body)
			} else {
				require.Contains(t, []int{http.StatusUnauthorized, http.StatusForbidden}, again.status, "%s: the reconnect: %s", c.name, again.body)
			}
		}
		require.True(t, standing.open(), "%s: the owner's stream runs on", c.name)
	}

	h.exec(`UPDATE stores SET lifecycle_state = 'suspended' WHERE id = $1`, owner.storeID)
	require.True(t, standing.endsWithin(within), "the store suspended: the owner's stream still open %s after", within)
	again := h.openImportStream(owner.auth(), owner.storeID, imp)
	require.Equal(t, http.StatusForbidden, again.status)
	require.Contains(t, again.body, "STORE_SUSPENDED")
}

// The imports page under the stream cap, in headless Chromium: with room
// for one stream, the page follows one running import by its stream and
// the other, whose stream is refused (429), by reading it every few
// seconds; both show their result once they end, and an import that had
// ended before the page opened shows its result without a stream.
func TestImportsPageFollowsImportsPastTheStreamCap(t *testing.T) {
	h := newHarness(t, api.Config{ImportStreamsPerUser: 1, ImportEventsInterval: 50 * time.Millisecond})
	m := h.signup("importcap")
	first, second, done := h.runningImport(m.storeID), h.runningImport(m.storeID), h.runningImport(m.storeID)
	h.exec(`UPDATE product_imports SET status = 'succeeded', processed_rows = 100, created = 100, finished_at = now() WHERE id = $1`, done)
	tab, _ := editorBrowser(t, h, m.email)
	require.NoError(t, chromedp.Run(tab,
		chromedp.Navigate(h.url+"/stores/"+m.storeID+"/imports"),
		chromedp.WaitVisible(fmt.Sprintf(`article[data-import-id="%s"]`, second), chromedp.ByQuery),
		finished(done)))
	require.Equal(t, "100", cardText(t, tab, done, "created"))
	time.Sleep(time.Second) // both streams tried: one open, one refused
	h.exec(`UPDATE product_imports SET status = 'succeeded', processed_rows = 100, created = 100, finished_at = now() WHERE id = ANY($1)`,
		[]string{first, second})
	waited, cancel := context.WithTimeout(tab, 20*time.Second)
	defer cancel()
	require.NoError(t, chromedp.Run(waited, finished(first), finished(second)), "both imports show their result")
	require.Equal(t, "100", cardText(t, tab, first, "created"))
	require.Equal(t, "100", cardText(t, tab, second, "created"))
}
