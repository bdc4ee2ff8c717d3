package api_test

import (
	"fmt"
	"net/http"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/merchantsvc/svc/api"
)

// invitationToken waits for the invitation mail to email and returns the
// token from its link's fragment.
func (h *harness) invitationToken(email string, nth int) string {
	h.t.Helper()
	return h.mailedTokens(email, `href="[^"]+/invitations#token=(svc_inv_[A-Za-z0-9_-]+)"`, nth)[nth-1]
}

// mailedTokens reads the tokens that link (a pattern whose first group is
// the token) finds in the mails to email, oldest first, once there are at
// least n.
func (h *harness) mailedTokens(email, link string, n int) []string {
	h.t.Helper()
	pattern := regexp.MustCompile(link)
	var tokens []string
	require.Eventually(h.t, func() bool {
		tokens = nil
		for _, m := range h.mail.Messages() {
			if len(m.To) == 1 && m.To[0] == email {
				if found := pattern.FindStringSubmatch(mailHTML(h.t, m.Data)); found != nil {
					tokens = append(tokens, found[1])
				}
			}
		}
		return len(tokens) >= n
	}, 10*time.Second, 20*time.Millisecond, "%d mails to %s with a link %s", n, email, link)
	return tokens
}

// join invites email to role and accepts as a new account, answering the
// member's session.
func (h *harness) join(owner merchant, email, roleID string) merchant {
	h.t.Helper()
	inv := h.do(request{method: "POST", path: storePath(owner.storeID, "/staff/invitations"), auth: owner.auth(),
		body: map[string]any{"email": email, "role_id": roleID}})
	require.Equal(h.t, http.StatusCreated, inv.Status, string(inv.Raw))
	accepted := h.do(request{method: "POST", path: "/api/v1/staff-invitations/accept", body: map[string]any{
		"token": h.invitationToken(email, 1), "name": "Staff " + email, "password": "correct horse battery"}})
	require.Equal(h.t, http.StatusCreated, accepted.Status, string(accepted.Raw))
	return merchant{email: email, session: sessionCookie(h.t, accepted), storeID: owner.storeID}
}

func sessionCookie(t *testing.T, r response) string {
	for _, c := range (&http.Response{Header: r.Header}).Cookies() {
		if c.Name == "svc_session" {
			return c.Value
		}
	}
	t.Fatal("no session cookie")
	return ""
}

// roleID finds a role of the store by name.
func (h *harness) roleID(owner merchant, name string) string {
	h.t.Helper()
	roles := h.do(request{method: "GET", path: storePath(owner.storeID, "/roles"), auth: owner.auth()})
	require.Equal(h.t, http.StatusOK, roles.Status, string(roles.Raw))
	for _, r := range roles.Body["data"].([]any) {
		if r.(map[string]any)["name"] == name {
			return r.(map[string]any)["id"].(string)
		}
	}
	h.t.Fatalf("no role %s", name)
	return ""
}

// Roles and staff (decisions §16): custom roles from the 18 scopes, an
// invitation mailed over SMTP and accepted as a new account, membership
// read on every request (a role change applies to the next one), and a
// removal that ends the member's sessions and tokens at once.
func TestStaffRolesAndInvitations(t *testing.T) {
	h := newHarness(t, api.Config{})
	h.startWorker(nil)
	owner := h.signup("staffowner")
	path := func(rest string) string { return storePath(owner.storeID, rest) }
	as := func(m merchant, method, rest string, body any) response {
		return h.do(request{method: method, path: path(rest), auth: m.auth(), body: body})
	}

	roles := as(owner, "GET", "/roles", nil)
	require.Equal(t, http.StatusOK, roles.Status, string(roles.Raw))
	require.Len(t, roles.Body["data"], 2, "owner and admin")
	builtIn := roles.Body["data"].([]any)[0].(map[string]any)
	require.Equal(t, "owner", builtIn["built_in"])
	require.Len(t, builtIn["scopes"], 18)

	clerk := as(owner, "POST", "/roles", map[string]any{"name": "Warehouse clerk", "scopes": []string{"orders:write", "catalog:read", "orders:write"}})
	require.Equal(t, http.StatusCreated, clerk.Status, string(clerk.Raw))
	require.Equal(t, []any{"catalog:read", "orders:write"}, clerk.data()["scopes"])
	clerkID := clerk.data()["id"].(string)
	dup := as(owner, "POST", "/roles", map[string]any{"name": "WAREHOUSE CLERK", "scopes": []string{"orders:read"}})
	require.Equal(t, http.StatusConflict, dup.Status)
	require.Equal(t, "DUPLICATE_ROLE_NAME", dup.errorCode())
	bad := as(owner, "POST", "/roles", map[string]any{"name": "", "scopes": []string{"orders:delete"}})
	require.Equal(t, http.StatusUnprocessableEntity, bad.Status)
	require.ElementsMatch(t, []string{"name", "scopes[0]"}, bad.fieldNames())
	require.NotEmpty(t, bad.fieldMessageAr("scopes[0]"))
	adminID := h.roleID(owner, "Admin")
	require.Equal(t, "ROLE_BUILT_IN", as(owner, "PATCH", "/roles/"+adminID, map[string]any{"name": "Boss"}).errorCode())
	require.Equal(t, "ROLE_BUILT_IN", as(owner, "DELETE", "/roles/"+adminID, nil).errorCode())
	token := h.pat(owner, "settings:read")
	require.Equal(t, "TOKEN_NOT_ALLOWED", h.do(request{method: "GET", path: path("/roles"), auth: bearer(token)}).errorCode())

	// Invite: the mail goes out over SMTP with the token in the fragment.
	inv := as(owner, "POST", "/staff/invitations", map[string]any{"email": "clerk@example.com", "role_id": clerkID})
	require.Equal(t, http.StatusCreated, inv.Status, string(inv.Raw))
	require.Equal(t, "pending", inv.data()["status"])
	require.Equal(t, "INVITATION_PENDING", as(owner, "POST", "/staff/invitations", map[string]any{"email": "CLERK@example.com",
		"role_id": clerkID}).errorCode())
	ownerRole := h.roleID(owner, "Owner")
	require.Equal(t, "not_assignable", as(owner, "POST", "/staff/invitations", map[string]any{"email": "x@example.com",
		"role_id": ownerRole}).fieldCode("role_id"))
	first := h.invitationToken("clerk@example.com", 1)
	resent := as(owner, "POST", "/staff/invitations/"+inv.data()["id"].(string)+"/resend", nil)
	require.Equal(t, http.StatusOK, resent.Status, string(resent.Raw))
	second := h.invitationToken("clerk@example.com", 2)
	require.NotEqual(t, first, second)
	lookup := func(token string) response {
		return h.do(request{method: "POST", path: "/api/v1/staff-invitations/lookup", body: map[string]any{"token": token}})
	}
	require.Equal(t, http.StatusNotFound, lookup(first).Status, "a resend kills the last link")
	found := lookup(second)
	require.Equal(t, http.StatusOK, found.Status, string(found.Raw))
	require.Equal(t, false, found.data()["account_exists"])
	require.Equal(t, "Warehouse clerk", found.data()["role"].(map[string]any)["name"])

	accept := func(body map[string]any, cred auth) response {
		return h.do(request{method: "POST", path: "/api/v1/staff-invitations/accept", body: body, auth: cred})
	}
	short := accept(map[string]any{"token": second, "name": "Clerk", "password": "short"}, auth{})
	require.Equal(t, http.StatusUnprocessableEntity, short.Status)
	require.Equal(t, "too_short", short.fieldCode("password"))
	joined := accept(map[string]any{"token": second, "name": "Karim Clerk", "password": "correct horse battery"}, auth{})
	require.Equal(t, http.StatusCreated, joined.Status, string(joined.Raw))
	require.Equal(t, "Warehouse clerk", joined.data()["role"].(map[string]any)["name"])
	require.Equal(t, http.StatusNotFound, accept(map[string]any{"token": second, "name": "Again", "password": "correct horse battery"}, auth{}).Status,
		"a used token is 404")
	member := merchant{email: "clerk@example.com", session: sessionCookie(t, joined), storeID: owner.storeID}

	// The clerk sees what the role allows, from the very next request.
	require.Equal(t, http.StatusOK, as(member, "GET", "/orders", nil).Status)
	require.Equal(t, "SCOPE_MISSING", as(member, "POST", "/products", map[string]any{"name": "x", "price": 1}).errorCode())
	require.Equal(t, "ROLE_NOT_ALLOWED", as(member, "GET", "/staff", nil).errorCode())
	require.Equal(t, "ROLE_NOT_ALLOWED", as(member, "POST", "/access-tokens", map[string]any{"name": "x", "scopes": []string{"orders:read"}}).errorCode())
	require.Equal(t, http.StatusOK, as(owner, "PATCH", "/roles/"+clerkID, map[string]any{"scopes": []string{"orders:write", "catalog:write"}}).Status)
	require.Equal(t, http.StatusCreated, as(member, "POST", "/products", map[string]any{"name": "Scarf", "price": 1000}).Status, "the next request")
	me := h.do(request{method: "GET", path: "/api/v1/auth/me", auth: member.auth()})
	stores := me.data()["stores"].([]any)
	require.Len(t, stores, 1)
	require.Equal(t, owner.storeID, stores[0].(map[string]any)["store"].(map[string]any)["id"])
	require.Equal(t, []any{"catalog:write", "orders:write"}, stores[0].(map[string]any)["scopes"])

	// Staff: the owner is fixed; only the owner makes or unmakes admins.
	list := as(owner, "GET", "/staff", nil)
	require.Equal(t, http.StatusOK, list.Status, string(list.Raw))
	require.Len(t, list.list(), 2)
	ownerID := list.list()[0].(map[string]any)["user"].(map[string]any)["id"].(string)
	clerkUser := list.list()[1].(map[string]any)["user"].(map[string]any)["id"].(string)
	require.Equal(t, "OWNER_IMMUTABLE", as(owner, "DELETE", "/staff/"+ownerID, nil).errorCode())
	admin := h.join(owner, "admin@example.com", adminID)
	require.Equal(t, "ROLE_NOT_ALLOWED", as(admin, "PATCH", "/staff/"+clerkUser, map[string]any{"role_id": adminID}).errorCode())
	require.Equal(t, "OWNER_IMMUTABLE", as(owner, "PATCH", "/staff/"+ownerID, map[string]any{"role_id": clerkID}).errorCode())
	require.Equal(t, "ROLE_NOT_ALLOWED", as(admin, "POST", "/staff/invitations", map[string]any{"email": "boss@example.com", "role_id": adminID}).errorCode())
	require.Equal(t, "ALREADY_MEMBER", as(admin, "POST", "/staff/invitations", map[string]any{"email": "Clerk@example.com", "role_id": clerkID}).errorCode())
	require.Equal(t, "ROLE_IN_USE", as(owner, "DELETE", "/roles/"+clerkID, nil).errorCode())
	require.EqualValues(t, 1, as(owner, "DELETE", "/roles/"+clerkID, nil).errorField("member_count"))

	// Removal: the admin's sessions and the tokens they minted answer 401 at once.
	adminToken := h.pat(admin, "catalog:read")
	require.Equal(t, http.StatusOK, h.do(request{method: "GET", path: path("/products"), auth: bearer(adminToken)}).Status)
	var adminUser string
	for _, m := range as(owner, "GET", "/staff", nil).list() {
		if m.(map[string]any)["user"].(map[string]any)["email"] == "admin@example.com" {
			adminUser = m.(map[string]any)["user"].(map[string]any)["id"].(string)
		}
	}
	require.Equal(t, http.StatusNoContent, as(owner, "DELETE", "/staff/"+adminUser, nil).Status)
	require.Equal(t, http.StatusUnauthorized, as(admin, "GET", "/products", nil).Status)
	require.Equal(t, http.StatusUnauthorized, h.do(request{method: "GET", path: "/api/v1/auth/me", auth: admin.auth()}).Status)
	require.Equal(t, http.StatusUnauthorized, h.do(request{method: "GET", path: path("/products"), auth: bearer(adminToken)}).Status)
	// A member may leave.
	require.Equal(t, http.StatusNoContent, as(member, "DELETE", "/staff/"+clerkUser, nil).Status)
	require.Equal(t, http.StatusUnauthorized, as(member, "GET", "/orders", nil).Status)
}

// Accepting as an existing account needs that account's session; expired
// links are 410.
func TestStaffInvitationForAnExistingAccount(t *testing.T) {
	h := newHarness(t, api.Config{})
	h.startWorker(nil)
	owner, other, stranger := h.signup("invowner"), h.signup("invother"), h.signup("invstranger")
	analyst := h.do(request{method: "POST", path: storePath(owner.storeID, "/roles"), auth: owner.auth(),
		body: map[string]any{"name": "Accountant", "scopes": []string{"analytics:read"}}}).data()["id"].(string)
	inv := h.do(request{method: "POST", path: storePath(owner.storeID, "/staff/invitations"), auth: owner.auth(),
		body: map[string]any{"email": other.email, "role_id": analyst}})
	require.Equal(t, http.StatusCreated, inv.Status, string(inv.Raw))
	token := h.invitationToken(other.email, 1)
	require.Equal(t, true, h.do(request{method: "POST", path: "/api/v1/staff-invitations/lookup", body: map[string]any{"token": token}}).
		data()["account_exists"])
	accept := func(cred auth) response {
		return h.do(request{method: "POST", path: "/api/v1/staff-invitations/accept", body: map[string]any{"token": token}, auth: cred})
	}
	require.Equal(t, http.StatusUnauthorized, accept(auth{}).Status, "sign in first")
	h.verifyEmail(other)
	mismatch := accept(stranger.auth())
	require.Equal(t, http.StatusConflict, mismatch.Status)
	require.Equal(t, "INVITATION_EMAIL_MISMATCH", mismatch.errorCode())
	require.Equal(t, http.StatusCreated, accept(other.auth()).Status)
	stores := h.do(request{method: "GET", path: "/api/v1/auth/me", auth: other.auth()}).data()["stores"].([]any)
	require.Len(t, stores, 2, "their own store and the new one")
	require.Equal(t, "STORE_MISMATCH", h.do(request{method: "GET", path: storePath(owner.storeID, "/orders"), auth: stranger.auth()}).errorCode())
	require.Equal(t, "SCOPE_MISSING", h.do(request{method: "GET", path: storePath(owner.storeID, "/orders"), auth: other.auth()}).errorCode())

	late := h.do(request{method: "POST", path: storePath(owner.storeID, "/staff/invitations"), auth: owner.auth(),
		body: map[string]any{"email": "late@example.com", "role_id": analyst}})
	require.Equal(t, http.StatusCreated, late.Status)
	lateToken := h.invitationToken("late@example.com", 1)
	h.exec(`UPDATE staff_invitations SET expires_at = now() - interval '1 minute' WHERE id = $1`, late.data()["id"])
	expired := h.do(request{method: "POST", path: "/api/v1/staff-invitations/accept", body: map[string]any{"token": lateToken,
		"name": "Late", "password": "correct horse battery"}})
	require.Equal(t, http.StatusGone, expired.Status, string(expired.Raw))
	require.Equal(t, "INVITATION_EXPIRED", expired.errorCode())
	revoked := h.do(request{method: "POST", path: storePath(owner.storeID, "/staff/invitations"), auth: owner.auth(),
		body: map[string]any{"email": "late@example.com", "role_id": analyst}})
	require.Equal(t, http.StatusCreated, revoked.Status, "an expired invitation does not block a new one")
	revokedToken := h.invitationToken("late@example.com", 2)
	require.Equal(t, http.StatusNoContent, h.do(request{method: "DELETE", path: storePath(owner.storeID, "/staff/invitations/"+revoked.data()["id"].(string)),
		auth: owner.auth()}).Status)
	require.Equal(t, http.StatusNotFound, h.do(request{method: "POST", path: "/api/v1/staff-invitations/lookup",
		body: map[string]any{"token": revokedToken}}).Status, "a revoked link is 404")
}

// The public invitation routes are limited per client network: a person
// opening a link needs a few requests, a script hashing passwords more.
func TestInvitationRoutesAreLimitedPerClient(t *testing.T) {
	h := newHarness(t, api.Config{})
	var last response
	for i := 0; i < 31; i++ {
		last = h.do(request{method: "POST", path: "/api/v1/staff-invitations/lookup", body: map[string]any{"token": "svc_inv_unknown"}})
		if last.Status == http.StatusTooManyRequests {
			break
		}
		require.Equal(t, http.StatusNotFound, last.Status, string(last.Raw))
	}
	require.Equal(t, http.StatusTooManyRequests, last.Status)
	require.Equal(t, "RATE_LIMITED", last.errorCode())
	require.NotEmpty(t, last.Header.Get("Retry-After"))
	accept := h.do(request{method: "POST", path: "/api/v1/staff-invitations/accept", body: map[string]any{"token": "svc_inv_unknown"}})
	require.Equal(t, http.StatusTooManyRequests, accept.Status, "lookup and accept share the client's count")
}

// A member's session request records when they were last seen, once per
// five minutes.
func TestStaffLastSeen(t *testing.T) {
	h := newHarness(t, api.Config{})
	owner := h.signup("lastseen")
	lastSeen := func() any {
		staff := h.do(request{method: "GET", path: storePath(owner.storeID, "/staff"), auth: owner.auth()})
		require.Equal(t, http.StatusOK, staff.Status, string(staff.Raw))
		return staff.data()["items"].([]any)[0].(map[string]any)["last_seen_at"]
	}
	first := lastSeen() // this very request is the first seen
	require.NotNil(t, first)
	require.Equal(t, http.StatusOK, h.do(request{method: "GET", path: storePath(owner.storeID, "/products"), auth: owner.auth()}).Status)
	require.Equal(t, first, lastSeen(), "written at most every five minutes")
}

// A store is no mail relay: its pending invitations are capped at 50 (409
// INVITATION_LIMIT_REACHED; a revoke makes room), and invites and resends
// are limited per store and per inviting member (429 RATE_LIMITED with
// Retry-After); a refused invite counts nothing.
func TestInvitationsAreNoMailRelay(t *testing.T) {
	invite := func(h *harness, m merchant, email, roleID string) response {
		return h.do(request{method: "POST", path: storePath(m.storeID, "/staff/invitations"), auth: m.auth(),
			body: map[string]any{"email": email, "role_id": roleID}})
	}
	h := newHarness(t, api.Config{InvitationsPerStorePerHour: 1000, InvitationsPerUserPerHour: 1000})
	owner := h.signup("relaycap")
	adminID := h.roleID(owner, "Admin")
	var first string
	for i := range 50 {
		r := invite(h, owner, fmt.Sprintf("cap%d@example.com", i), adminID)
		require.Equal(t, http.StatusCreated, r.Status, "invitation %d: %s", i+1, r.Raw)
		if i == 0 {
			first = r.data()["id"].(string)
		}
	}
	over := invite(h, owner, "cap50@example.com", adminID)
	require.Equal(t, http.StatusConflict, over.Status, string(over.Raw))
	require.Equal(t, "INVITATION_LIMIT_REACHED", over.errorCode())
	require.NotEmpty(t, over.errorField("message_ar"))
	require.Equal(t, http.StatusNoContent, h.do(request{method: "DELETE", path: storePath(owner.storeID, "/staff/invitations/"+first), auth: owner.auth()}).Status)
	require.Equal(t, http.StatusCreated, invite(h, owner, "cap50@example.com", adminID).Status, "a revoke makes room")

	l := newHarness(t, api.Config{InvitationsPerStorePerHour: 3, InvitationsPerUserPerHour: 2})
	l.startWorker(nil)
	o := l.signup("relayrate")
	adminID = l.roleID(o, "Admin")
	admin := l.join(o, "relay-admin@example.com", adminID) // the owner's first
	a := invite(l, o, "relay-a@example.com", adminID)      // and second
	require.Equal(t, http.StatusCreated, a.Status, string(a.Raw))
	refused := invite(l, o, "relay-b@example.com", adminID)
	require.Equal(t, http.StatusTooManyRequests, refused.Status, string(refused.Raw))
	require.Equal(t, "RATE_LIMITED", refused.errorCode())
	require.NotEmpty(t, refused.errorField("message_ar"))
	require.NotEmpty(t, refused.Header.Get("Retry-After"))
	resend := "/staff/invitations/" + a.data()["id"].(string) + "/resend"
	require.Equal(t, http.StatusTooManyRequests, l.do(request{method: "POST", path: storePath(o.storeID, resend), auth: o.auth()}).Status, "a resend is a mail too")

	clerk := l.do(request{method: "POST", path: storePath(o.storeID, "/roles"), auth: o.auth(), body: map[string]any{"name": "Clerk", "scopes": []string{"orders:read"}}})
	require.Equal(t, http.StatusCreated, clerk.Status, string(clerk.Raw))
	clerkID := clerk.data()["id"].(string)
	require.Equal(t, "INVITATION_PENDING", invite(l, admin, "relay-a@example.com", clerkID).errorCode(), "refused: counts nothing")
	require.Equal(t, http.StatusCreated, invite(l, admin, "relay-c@example.com", clerkID).Status, "the admin's own count; the store's third")
	storeFull := l.do(request{method: "POST", path: storePath(o.storeID, resend), auth: admin.auth()})
	require.Equal(t, http.StatusTooManyRequests, storeFull.Status, "the admin has room, the store has not: %s", storeFull.Raw)
	require.NotEmpty(t, storeFull.Header.Get("Retry-After"))
}
