package api_test

import (
	"context"
	"fmt"
	"net/http"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/merchantsvc/svc/api"
	"github.com/merchantsvc/svc/internal/testenv"
)

// giftCardShop is a shop with a token of the orders scopes and a customer.
type giftCardShop struct {
	shop
	customerID string
}

func newGiftCardShop(t *testing.T, h *harness, name string) giftCardShop {
	s := newShop(t, h, name, 10)
	c := h.do(request{method: "POST", path: storePath(s.m.storeID, "/customers"), auth: bearer(s.token),
		body: map[string]any{"name": "Huda Kamal", "phone": "+201001112223"}})
	require.Equal(t, http.StatusCreated, c.Status, string(c.Raw))
	return giftCardShop{shop: s, customerID: c.data()["id"].(string)}
}

// giftCard calls a gift card route of the shop's store.
func (h *harness) giftCard(s giftCardShop, method, rest string, body any, idemKey string) response {
	h.t.Helper()
	headers := map[string]string{}
	if idemKey != "" {
		headers["Idempotency-Key"] = idemKey
	}
	return h.do(request{method: method, path: storePath(s.m.storeID, "/gift-cards"+rest), auth: bearer(s.token), body: body, headers: headers})
}

func (h *harness) issueGiftCard(s giftCardShop, body map[string]any) (card map[string]any, code string) {
	h.t.Helper()
	resp := h.giftCard(s, "POST", "", body, fmt.Sprintf("issue-%d", time.Now().UnixNano()))
	require.Equal(h.t, http.StatusCreated, resp.Status, string(resp.Raw))
	code, _ = resp.data()["code"].(string)
	return resp.data(), code
}

// giftCardRow is what the table holds of a card, to show a refusal changed nothing.
func (h *harness) giftCardRow(id string) string {
	var row string
	require.NoError(h.t, testenv.SQL(h.t, h.db).QueryRow(context.Background(), `SELECT to_jsonb(g)::text || (SELECT count(*)::text
		FROM gift_card_transactions WHERE gift_card_id = g.id) || (SELECT count(*)::text FROM gift_card_sends WHERE gift_card_id = g.id)
		FROM gift_cards g WHERE id = $1`, id).Scan(&row))
	return row
}

// A card from issue to disable: the code once, the ledger that explains the
// balance, PATCH and adjustments, and disable as final. No audit entry and
// no later answer holds the code.
func TestGiftCardLifecycle(t *testing.T) {
	h := newHarness(t, api.Config{})
	s := newGiftCardShop(t, h, "giftcards")

	key := "issue-lifecycle"
	created := h.giftCard(s, "POST", "", map[string]any{"initial_value": 50000, "note": " birthday ",
		"recipient": map[string]any{"name": "Omar", "email": "omar@example.com", "message": "كل عام وأنت بخير"}}, key)
	require.Equal(t, http.StatusCreated, created.Status, string(created.Raw))
	card := created.data()
	code := card["code"].(string)
	require.Regexp(t, `^[ABCDEFGHJKMNPQRSTUVWXYZ2-9]{4}(-[ABCDEFGHJKMNPQRSTUVWXYZ2-9]{4}){3}$`, code)
	require.Equal(t, code[len(code)-4:], card["last4"])
	require.Equal(t, "gift_card", card["kind"])
	require.Equal(t, "active", card["status"])
	require.Equal(t, "EGP", card["currency"])
	require.EqualValues(t, 50000, card["balance"])
	require.Equal(t, "manual", card["source"])
	require.Equal(t, "birthday", card["note"])
	id := card["id"].(string)

	replay := h.giftCard(s, "POST", "", map[string]any{"initial_value": 50000, "note": " birthday ",
		"recipient": map[string]any{"name": "Omar", "email": "omar@example.com", "message": "كل عام وأنت بخير"}}, key)
	require.Equal(t, http.StatusCreated, replay.Status)
	require.Equal(t, id, replay.data()["id"])
	require.Nil(t, replay.data()["code"], "a replay never shows the code again")
	require.NotContains(t, string(replay.Raw), code)

	got := h.giftCard(s, "GET", "/"+id, nil, "")
	require.Equal(t, http.StatusOK, got.Status, string(got.Raw))
	require.NotContains(t, got.data(), "code")
	entries := got.data()["transactions"].([]any)
	require.Len(t, entries, 1)
	issue := entries[0].(map[string]any)
	require.Equal(t, "issue", issue["kind"])
	require.EqualValues(t, 50000, issue["amount"])
	require.EqualValues(t, 50000, issue["balance_after"])

	// Adjustments: Idempotency-Key required, signed, checked.
	adjust := func(body map[string]any, key string) response {
		return h.giftCard(s, "POST", "/"+id+"/adjustments", body, key)
	}
	noKey := adjust(map[string]any{"amount": 100, "reason": "goodwill"}, "")
	require.Equal(t, http.StatusPreconditionRequired, noKey.Status, string(noKey.Raw))
	require.Equal(t, "IDEMPOTENCY_KEY_REQUIRED", noKey.errorCode())
	before := h.giftCardRow(id)
	for _, c := range []struct {
		body  map[string]any
		field string
	}{
		{map[string]any{"amount": 0, "reason": "goodwill"}, "amount"},
		{map[string]any{"reason": "goodwill"}, "amount"},
		{map[string]any{"amount": 100, "reason": "because"}, "reason"},
		{map[string]any{"amount": 100, "reason": "goodwill", "expected_balance": -1}, "expected_balance"},
	} {
		resp := adjust(c.body, fmt.Sprintf("bad-%v", c.body))
		require.Equal(t, http.StatusUnprocessableEntity, resp.Status, string(resp.Raw))
		require.Contains(t, resp.fieldNames(), c.field, string(resp.Raw))
		require.NotEmpty(t, resp.fieldMessageAr(c.field))
	}
	changed := adjust(map[string]any{"amount": -100, "reason": "correction", "expected_balance": 49999}, "changed")
	require.Equal(t, http.StatusConflict, changed.Status, string(changed.Raw))
	require.Equal(t, "GIFT_CARD_BALANCE_CHANGED", changed.errorCode())
	require.NotEmpty(t, changed.errorField("message_ar"))
	short := adjust(map[string]any{"amount": -50001, "reason": "fraud"}, "short")
	require.Equal(t, http.StatusConflict, short.Status, string(short.Raw))
	require.Equal(t, "INSUFFICIENT_GIFT_CARD_BALANCE", short.errorCode())
	require.Equal(t, before, h.giftCardRow(id), "refused adjustments change nothing")

	credit := adjust(map[string]any{"amount": 2500, "reason": "goodwill", "expected_balance": 50000}, "credit")
	require.Equal(t, http.StatusCreated, credit.Status, string(credit.Raw))
	require.Equal(t, "credit", credit.data()["kind"])
	require.EqualValues(t, 52500, credit.data()["balance_after"])
	require.EqualValues(t, 52500, credit.data()["gift_card"].(map[string]any)["balance"])
	require.Equal(t, "goodwill", credit.data()["reason"])
	again := adjust(map[string]any{"amount": 2500, "reason": "goodwill", "expected_balance": 50000}, "credit")
	require.Equal(t, http.StatusCreated, again.Status)
	require.Equal(t, credit.data()["id"], again.data()["id"], "the same key is the same adjustment")
	debit := adjust(map[string]any{"amount": -52500, "reason": "correction"}, "debit")
	require.Equal(t, http.StatusCreated, debit.Status, string(debit.Raw))
	require.Equal(t, "debit", debit.data()["kind"])
	require.Equal(t, "depleted", debit.data()["gift_card"].(map[string]any)["status"])
	require.EqualValues(t, 2500, adjust(map[string]any{"amount": 2500, "reason": "goodwill"}, "refill").data()["balance_after"])

	got = h.giftCard(s, "GET", "/"+id, nil, "")
	var sum float64
	for _, e := range got.data()["transactions"].([]any) {
		sum += e.(map[string]any)["amount"].(float64)
	}
	require.Len(t, got.data()["transactions"], 4)
	require.EqualValues(t, got.data()["balance"], sum, "the entries sum to the balance")
	require.Equal(t, "credit", got.data()["transactions"].([]any)[0].(map[string]any)["kind"], "newest first")
	require.Equal(t, "user", got.data()["transactions"].([]any)[0].(map[string]any)["actor"].(map[string]any)["type"])

	// PATCH: a past expiry expires the card at once; null clears it.
	before = h.giftCardRow(id)
	for _, c := range []struct {
		body        map[string]any
		field, code string
	}{
		{map[string]any{"expires_on": "2026-13-01"}, "expires_on", "invalid"},
		{map[string]any{"customer_id": "0190d3c4-0000-7000-8000-00000000abcd"}, "customer_id", "not_found"},
		{map[string]any{"customer_id": "nope"}, "customer_id", "invalid_uuid"},
		{map[string]any{"recipient": map[string]any{"name": "", "email": "nope"}}, "recipient.email", "invalid"},
		{map[string]any{"recipient": map[string]any{"name": "X", "message": strings.Repeat("م", 501)}}, "recipient.message", "too_long"},
	} {
		resp := h.giftCard(s, "PATCH", "/"+id, c.body, "")
		require.Equal(t, http.StatusUnprocessableEntity, resp.Status, string(resp.Raw))
		require.Equal(t, c.code, resp.fieldCode(c.field), string(resp.Raw))
	}
	require.Equal(t, before, h.giftCardRow(id), "refused patches change nothing")
	past := h.giftCard(s, "PATCH", "/"+id, map[string]any{"expires_on": "2020-01-31", "customer_id": s.customerID}, "")
	require.Equal(t, http.StatusOK, past.Status, string(past.Raw))
	require.Equal(t, "expired", past.data()["status"])
	require.Equal(t, "2020-01-31", past.data()["expires_on"])
	require.Equal(t, s.customerID, past.data()["customer_id"])
	cleared := h.giftCard(s, "PATCH", "/"+id, map[string]any{"expires_on": nil, "note": nil}, "")
	require.Equal(t, http.StatusOK, cleared.Status, string(cleared.Raw))
	require.Equal(t, "active", cleared.data()["status"])
	require.Nil(t, cleared.data()["note"])

	// Disable: final, and the same answer again.
	disabled := h.giftCard(s, "POST", "/"+id+"/disable", map[string]any{"reason": "lost"}, "")
	require.Equal(t, http.StatusOK, disabled.Status, string(disabled.Raw))
	require.Equal(t, "disabled", disabled.data()["status"])
	require.NotNil(t, disabled.data()["disabled_at"])
	twice := h.giftCard(s, "POST", "/"+id+"/disable", map[string]any{"reason": "other"}, "")
	require.Equal(t, http.StatusOK, twice.Status, string(twice.Raw))
	require.Equal(t, disabled.data(), twice.data())
	before = h.giftCardRow(id)
	for _, resp := range []response{
		h.giftCard(s, "PATCH", "/"+id, map[string]any{"note": "x"}, ""),
		adjust(map[string]any{"amount": 100, "reason": "goodwill"}, "after-disable"),
		h.giftCard(s, "POST", "/"+id+"/send", map[string]any{"channel": "email"}, ""),
	} {
		require.Equal(t, http.StatusConflict, resp.Status, string(resp.Raw))
		require.Equal(t, "GIFT_CARD_DISABLED", resp.errorCode())
		require.NotEmpty(t, resp.errorField("message_ar"))
	}
	require.Equal(t, before, h.giftCardRow(id), "a disabled card stays as it was")

	// Lists and their filters.
	other, _ := h.issueGiftCard(s, map[string]any{"initial_value": 700})
	credit2, noCode := h.issueGiftCard(s, map[string]any{"initial_value": 900, "kind": "store_credit", "customer_id": s.customerID})
	require.Empty(t, noCode)
	ids := func(query string) []string {
		resp := h.giftCard(s, "GET", query, nil, "")
		require.Equal(t, http.StatusOK, resp.Status, string(resp.Raw))
		var out []string
		for _, it := range resp.data()["items"].([]any) {
			out = append(out, it.(map[string]any)["id"].(string))
		}
		return out
	}
	require.Equal(t, []string{credit2["id"].(string), other["id"].(string), id}, ids(""))
	require.Equal(t, []string{id}, ids("?status=disabled"))
	require.Equal(t, []string{credit2["id"].(string), other["id"].(string)}, ids("?status=active"))
	require.Equal(t, []string{credit2["id"].(string)}, ids("?kind=store_credit"))
	require.Equal(t, []string{credit2["id"].(string), id}, ids("?customer_id="+s.customerID))
	require.Equal(t, []string{id}, ids("?last4="+strings.ToLower(code[len(code)-4:])))
	require.Equal(t, []string{other["id"].(string)}, ids("?limit=1&page=2"))
	bad := h.giftCard(s, "GET", "?status=spent&kind=x&customer_id=y", nil, "")
	require.Equal(t, http.StatusUnprocessableEntity, bad.Status)
	require.ElementsMatch(t, []string{"status", "kind", "customer_id"}, bad.fieldNames())

	// Store B sees none of it.
	b := newGiftCardShop(t, h, "giftcardsb")
	require.Equal(t, http.StatusNotFound, h.giftCard(b, "GET", "/"+id, nil, "").Status)
	require.Empty(t, ids2(t, h, b))

	// No audit entry holds the code, in any spelling.
	var audit string
	require.NoError(t, testenv.SQL(t, h.db).QueryRow(context.Background(), `SELECT COALESCE(string_agg(to_jsonb(a)::text, ' '), '')
		FROM audit_entries a WHERE store_id = $1 AND resource_type = 'gift_card'`, s.m.storeID).Scan(&audit))
	require.Contains(t, audit, "gift_card.created")
	require.Contains(t, audit, "gift_card.disabled")
	require.NotContains(t, audit, code)
	require.NotContains(t, audit, strings.ReplaceAll(code, "-", ""))
}

func ids2(t *testing.T, h *harness, s giftCardShop) []any {
	resp := h.giftCard(s, "GET", "", nil, "")
	require.Equal(t, http.StatusOK, resp.Status, string(resp.Raw))
	return resp.data()["items"].([]any)
}

// Every refusal of the create, and a code chosen twice in two spellings.
func TestGiftCardCreateRefusals(t *testing.T) {
	h := newHarness(t, api.Config{})
	s := newGiftCardShop(t, h, "giftcardno")
	count := func() int {
		var n int
		require.NoError(t, testenv.SQL(t, h.db).QueryRow(context.Background(), `SELECT count(*) FROM gift_cards WHERE store_id = $1`,
			s.m.storeID).Scan(&n))
		return n
	}
	noKey := h.giftCard(s, "POST", "", map[string]any{"initial_value": 100}, "")
	require.Equal(t, http.StatusPreconditionRequired, noKey.Status)
	for i, c := range []struct {
		body        map[string]any
		field, code string
	}{
		{map[string]any{}, "initial_value", "required"},
		{map[string]any{"initial_value": 0}, "initial_value", "out_of_range"},
		{map[string]any{"initial_value": 100, "kind": "voucher"}, "kind", "one_of"},
		{map[string]any{"initial_value": 100, "kind": "store_credit"}, "customer_id", "required"},
		{map[string]any{"initial_value": 100, "kind": "store_credit", "customer_id": s.customerID, "code": "ABCDEFGHJKMNPQ23"}, "code", "not_allowed"},
		{map[string]any{"initial_value": 100, "code": "ABCD-EFGH-JKMN-PQ2"}, "code", "invalid"},
		{map[string]any{"initial_value": 100, "code": "ABCD-EFGH-JKMN-PQ20"}, "code", "invalid"},
		{map[string]any{"initial_value": 100, "code": "ABCD-EFGH-JKMN-PQ2I"}, "code", "invalid"},
		{map[string]any{"initial_value": 100, "expires_on": "2020-01-01"}, "expires_on", "past"},
		{map[string]any{"initial_value": 100, "expires_on": "tomorrow"}, "expires_on", "invalid"},
		{map[string]any{"initial_value": 100, "customer_id": "0190d3c4-0000-7000-8000-00000000abcd"}, "customer_id", "not_found"},
		{map[string]any{"initial_value": 100, "send": "sms"}, "send", "one_of"},
		{map[string]any{"initial_value": 100, "send": "email"}, "send", "no_contact"},
		{map[string]any{"initial_value": 100, "send": "whatsapp", "recipient": map[string]any{"name": "Omar", "email": "o@example.com"}}, "send", "no_contact"},
	} {
		resp := h.giftCard(s, "POST", "", c.body, fmt.Sprintf("refused-%d", i))
		require.Equal(t, http.StatusUnprocessableEntity, resp.Status, "%v: %s", c.body, resp.Raw)
		require.Equal(t, c.code, resp.fieldCode(c.field), "%v: %s", c.body, resp.Raw)
		require.NotEmpty(t, resp.fieldMessageAr(c.field))
	}
	require.Zero(t, count(), "refusals write nothing")

	cairo, err := time.LoadLocation("Africa/Cairo")
	require.NoError(t, err)
	card, code := h.issueGiftCard(s, map[string]any{"initial_value": 100, "code": "abcd efgh jkmn pq٢٣",
		"expires_on": time.Now().In(cairo).Format(time.DateOnly)})
	require.Equal(t, "ABCD-EFGH-JKMN-PQ23", code, "a chosen code is stored normalised and printed in groups")
	require.Equal(t, "PQ23", card["last4"])
	require.Equal(t, "active", card["status"], "a card is valid through its expiry date")
	dup := h.giftCard(s, "POST", "", map[string]any{"initial_value": 100, "code": "ABCD-EFGH-JKMN-PQ23"}, "dup")
	require.Equal(t, http.StatusConflict, dup.Status, string(dup.Raw))
	require.Equal(t, "DUPLICATE_GIFT_CARD_CODE", dup.errorCode())
	require.NotEmpty(t, dup.errorField("message_ar"))
	require.Equal(t, 1, count())

	// Another store may hold the same code.
	b := newGiftCardShop(t, h, "giftcardnob")
	_, same := h.issueGiftCard(b, map[string]any{"initial_value": 100, "code": "ABCDEFGHJKMNPQ23"})
	require.Equal(t, code, same)

	// Store credit: bound to a customer, no code in any answer.
	credit := h.giftCard(s, "POST", "", map[string]any{"initial_value": 2000, "kind": "store_credit", "customer_id": s.customerID}, "credit")
	require.Equal(t, http.StatusCreated, credit.Status, string(credit.Raw))
	require.Nil(t, credit.data()["code"])
	require.Nil(t, credit.data()["last4"])
	require.Equal(t, "store_credit", credit.data()["kind"])
	creditID := credit.data()["id"].(string)
	for _, resp := range []response{h.giftCard(s, "GET", "/"+creditID, nil, ""), h.giftCard(s, "GET", "?kind=store_credit", nil, "")} {
		require.Equal(t, http.StatusOK, resp.Status)
		require.NotContains(t, string(resp.Raw), `"code"`)
	}
	keep := h.giftCard(s, "PATCH", "/"+creditID, map[string]any{"customer_id": nil}, "")
	require.Equal(t, http.StatusUnprocessableEntity, keep.Status, string(keep.Raw))
	require.Equal(t, "required", keep.fieldCode("customer_id"))
	send := h.giftCard(s, "POST", "/"+creditID+"/send", map[string]any{"channel": "email"}, "")
	require.Equal(t, http.StatusUnprocessableEntity, send.Status, string(send.Raw))
	require.Equal(t, "not_sendable", send.fieldCode("channel"))
}

// A send writes its intent: the email reaches the recipient with the code
// (unsealed only by the worker), WhatsApp waits for its channel, a contact
// the recipient lacks is refused, and the fourth send in a day is 429.
func TestGiftCardSend(t *testing.T) {
	h := newHarness(t, api.Config{})
	h.startWorker(nil)
	s := newGiftCardShop(t, h, "giftcardsend")
	email := fmt.Sprintf("recipient-%d@example.com", time.Now().UnixNano())
	card, code := h.issueGiftCard(s, map[string]any{"initial_value": 25000, "send": "email", "expires_on": "2099-12-31",
		"recipient": map[string]any{"name": "Laila", "email": email, "message": "Happy Eid"}})
	id := card["id"].(string)

	var html string
	require.Eventually(t, func() bool {
		for _, m := range h.messagesTo(email) {
			html = mailHTML(t, m.Data)
			return true
		}
		return false
	}, 20*time.Second, 50*time.Millisecond, "the gift card mail")
	require.Contains(t, html, code)
	require.Contains(t, html, "Happy Eid")
	require.Contains(t, html, "250.00 ج.م.", "the Arabic store's amount, in its (default, Latin) digits")
	require.Contains(t, html, "2099-12-31")
	require.Contains(t, html, `dir="rtl"`, "the store's language")

	before := h.giftCardRow(id)
	for _, c := range []struct {
		body map[string]any
		code string
	}{
		{map[string]any{"channel": "sms"}, "one_of"},
		{map[string]any{"channel": "whatsapp"}, "no_contact"},
	} {
		resp := h.giftCard(s, "POST", "/"+id+"/send", c.body, "")
		require.Equal(t, http.StatusUnprocessableEntity, resp.Status, string(resp.Raw))
		require.Equal(t, c.code, resp.fieldCode("channel"))
	}
	require.Equal(t, before, h.giftCardRow(id))

	require.Equal(t, http.StatusOK, h.giftCard(s, "PATCH", "/"+id, map[string]any{"recipient": map[string]any{"name": "Laila",
		"email": email, "phone": "+20 100 555 6667"}}, "").Status)
	wa := h.giftCard(s, "POST", "/"+id+"/send", map[string]any{"channel": "whatsapp"}, "")
	require.Equal(t, http.StatusAccepted, wa.Status, string(wa.Raw))
	require.Equal(t, "whatsapp", wa.data()["channel"])
	require.Equal(t, "queued", wa.data()["status"])
	var address string
	require.NoError(t, testenv.SQL(t, h.db).QueryRow(context.Background(), `SELECT address FROM gift_card_sends WHERE id = $1`,
		wa.data()["id"]).Scan(&address))
	require.Equal(t, "+201005556667", address, "the intent names the number for issue 54's channel")

	third := h.giftCard(s, "POST", "/"+id+"/send", map[string]any{"channel": "email"}, "")
	require.Equal(t, http.StatusAccepted, third.Status, string(third.Raw))
	fourth := h.giftCard(s, "POST", "/"+id+"/send", map[string]any{"channel": "email"}, "")
	require.Equal(t, http.StatusTooManyRequests, fourth.Status, string(fourth.Raw))
	require.Equal(t, "RATE_LIMITED", fourth.errorCode())
	require.NotEmpty(t, fourth.Header.Get("Retry-After"))
	require.Eventually(t, func() bool { return len(h.messagesTo(email)) == 2 }, 20*time.Second, 50*time.Millisecond, "two mails, no more")

	var audit string
	require.NoError(t, testenv.SQL(t, h.db).QueryRow(context.Background(), `SELECT COALESCE(string_agg(to_jsonb(a)::text, ' '), '')
		FROM audit_entries a WHERE store_id = $1`, s.m.storeID).Scan(&audit))
	require.Contains(t, audit, "gift_card.sent")
	require.NotContains(t, audit, code)
}

// The storefront's balance check: one refusal for unknown, disabled,
// expired and depleted codes; after 10 of them in an hour from a cart or a
// network, every lookup from either is 429, hits included.
func TestGiftCardBalanceLimiter(t *testing.T) {
	h := newHarness(t, api.Config{TrustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}})
	s := newGiftCardShop(t, h, "giftcardbal")
	_, code := h.issueGiftCard(s, map[string]any{"initial_value": 12345, "expires_on": "2099-01-31"})
	disabled, disabledCode := h.issueGiftCard(s, map[string]any{"initial_value": 100})
	require.Equal(t, http.StatusOK, h.giftCard(s, "POST", "/"+disabled["id"].(string)+"/disable", map[string]any{}, "").Status)
	expired, expiredCode := h.issueGiftCard(s, map[string]any{"initial_value": 100})
	require.Equal(t, http.StatusOK, h.giftCard(s, "PATCH", "/"+expired["id"].(string), map[string]any{"expires_on": "2021-01-01"}, "").Status)
	depleted, depletedCode := h.issueGiftCard(s, map[string]any{"initial_value": 100})
	require.Equal(t, http.StatusCreated, h.giftCard(s, "POST", "/"+depleted["id"].(string)+"/adjustments",
		map[string]any{"amount": -100, "reason": "correction"}, "deplete").Status)
	_, cartA := h.openCart(s.shop, 1, "")
	_, cartB := h.openCart(s.shop, 1, "")
	_, cartC := h.openCart(s.shop, 1, "")

	lookup := func(cart, network, code string) response {
		h.t.Helper()
		headers := map[string]string{"X-Forwarded-For": network}
		if cart != "" {
			headers["X-Cart-Token"] = cart
		}
		return h.do(request{method: "POST", path: "/api/v1/storefront/" + h.subdomain(s.shop) + "/gift-cards/balance",
			body: map[string]any{"code": code}, headers: headers})
	}
	hit := lookup(cartA, "10.0.0.1", "  "+strings.ToLower(strings.ReplaceAll(code, "-", " "))+" ")
	require.Equal(t, http.StatusOK, hit.Status, string(hit.Raw))
	require.Equal(t, map[string]any{"last4": code[len(code)-4:], "balance": float64(12345), "currency": "EGP", "expires_on": "2099-01-31"},
		hit.data())
	require.Equal(t, http.StatusNotFound, lookup("", "10.0.0.1", code).Status, "no cart token")
	require.Equal(t, http.StatusNotFound, lookup("wrong", "10.0.0.1", code).Status, "a wrong cart token")

	// Ten misses from cart A, each from its own network: the reasons are one.
	misses := []string{"ZZZZ-ZZZZ-ZZZZ-ZZZZ", disabledCode, expiredCode, depletedCode, "short", "ZZZZ-ZZZZ-ZZZZ-ZZZ2", "ZZZZ-ZZZZ-ZZZZ-ZZZ3",
		"ZZZZ-ZZZZ-ZZZZ-ZZZ4", "ZZZZ-ZZZZ-ZZZZ-ZZZ5", "ZZZZ-ZZZZ-ZZZZ-ZZZ6"}
	for i, miss := range misses {
		resp := lookup(cartA, fmt.Sprintf("10.1.0.%d", i+1), miss)
		require.Equal(t, http.StatusUnprocessableEntity, resp.Status, "%s: %s", miss, resp.Raw)
		require.Equal(t, "not_usable", resp.fieldCode("code"), miss)
		require.NotEmpty(t, resp.fieldMessageAr("code"))
		require.NotContains(t, string(resp.Raw), "disabled")
		require.NotContains(t, string(resp.Raw), "expired")
	}
	limited := lookup(cartA, "10.2.0.1", code)
	require.Equal(t, http.StatusTooManyRequests, limited.Status, "the cart is limited, hits included: %s", limited.Raw)
	require.Equal(t, "RATE_LIMITED", limited.errorCode())
	require.NotEmpty(t, limited.Header.Get("Retry-After"))
	require.Equal(t, http.StatusOK, lookup(cartB, "10.2.0.1", code).Status, "another cart on another network is not")

	// Ten misses from one network over carts B and C: the network is limited
	// for every cart.
	for i := range 10 {
		cart := cartB
		if i%2 == 1 {
			cart = cartC
		}
		require.Equal(t, http.StatusUnprocessableEntity, lookup(cart, "10.3.0.1", "ZZZZ-ZZZZ-ZZZZ-ZZZZ").Status)
	}
	for _, cart := range []string{cartB, cartC} {
		resp := lookup(cart, "10.3.0.1", code)
		require.Equal(t, http.StatusTooManyRequests, resp.Status, string(resp.Raw))
	}
	require.Equal(t, http.StatusOK, lookup(cartB, "10.4.0.1", code).Status, "cart B has 5 misses of its own: not limited yet")

	// A parallel rush of guesses from a fresh cart and network gets 10
	// answers, no more: a lookup counts from its admission.
	_, cartD := h.openCart(s.shop, 1, "")
	tally := burst(30, func(int) int { return lookup(cartD, "10.5.0.1", "ZZZZ-ZZZZ-ZZZZ-ZZZZ").Status })
	require.Equal(t, map[int]int{http.StatusUnprocessableEntity: 10, http.StatusTooManyRequests: 20}, tally)
}
