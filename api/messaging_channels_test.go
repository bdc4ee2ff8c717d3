package api_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/merchantsvc/svc/api"
	"github.com/merchantsvc/svc/internal/testenv"
	"github.com/merchantsvc/svc/internal/whatsappcloud"
)

// whatsAppSent is what the Cloud API double accepted from one phone
// number id, oldest first.
func whatsAppSent(t *testing.T, phoneNumberID string) []whatsappcloud.Message {
	t.Helper()
	all, err := whatsappcloud.ReadMessages(testenv.WhatsAppDir(t))
	require.NoError(t, err)
	var out []whatsappcloud.Message
	for _, m := range all {
		if m.PhoneNumberID == phoneNumberID {
			out = append(out, m)
		}
	}
	return out
}

// templateOf reads a sent template's name and body parameters.
func templateOf(t *testing.T, m whatsappcloud.Message) (name string, params []string) {
	t.Helper()
	var tpl struct {
		Name       string `json:"name"`
		Components []struct {
			Parameters []struct {
				Text string `json:"text"`
			} `json:"parameters"`
		} `json:"components"`
	}
	require.NoError(t, json.Unmarshal(m.Template, &tpl))
	for _, c := range tpl.Components {
		for _, p := range c.Parameters {
			params = append(params, p.Text)
		}
	}
	return tpl.Name, params
}

// A store connects its own WhatsApp number (decisions §25): the token is
// tried at the provider (the local Cloud API double) first, a refused one
// is 422 and stores nothing; the answer has the number as the provider
// shows it, the callback address and verify token, never a secret, and
// the secrets are stored sealed. From then on the store's gift card codes
// and order confirmations go out from that number, the provider's message
// id kept; a number the provider refuses is kept with its code. After a
// disconnect the shared sender speaks again.
func TestWhatsAppChannelConnectsAndSends(t *testing.T) {
	h := newHarness(t, api.Config{Secrets: testenv.Sealer(t)})
	h.startWorker(nil)
	s := newGiftCardShop(t, h, "wachannel")
	phoneNumberID := fmt.Sprintf("1%014d", time.Now().UnixNano()%1e14)
	path := storePath(s.m.storeID, "/messaging/channels/whatsapp")
	token := "EAAG" + strings.Repeat("t0k3n", 8)
	connect := func(body map[string]any) response {
		return h.do(request{method: "PUT", path: path, auth: bearer(s.token), body: body})
	}
	body := map[string]any{"phone_number_id": phoneNumberID, "waba_id": "1029384756", "access_token": token, "app_secret": "app-secret-0123456789abcdef"}

	bad := connect(map[string]any{"phone_number_id": "abc", "waba_id": "", "access_token": "short", "app_secret": "x"})
	require.Equal(t, http.StatusUnprocessableEntity, bad.Status, string(bad.Raw))
	require.ElementsMatch(t, []string{"phone_number_id", "waba_id", "access_token", "app_secret"}, bad.fieldNames())
	refusedBody := map[string]any{}
	for k, v := range body {
		refusedBody[k] = v
	}
	refusedBody["access_token"] = "invalid-" + token
	refused := connect(refusedBody)
	require.Equal(t, http.StatusUnprocessableEntity, refused.Status, string(refused.Raw))
	require.Equal(t, "provider_refused", refused.fieldCode("access_token"))
	require.Equal(t, http.StatusNotFound, h.do(request{method: "GET", path: path, auth: bearer(s.token)}).Status, "nothing stored")
	require.Equal(t, http.StatusNotFound, h.do(request{method: "GET", path: storePath(s.m.storeID, "/messaging/channels/sms"), auth: bearer(s.token)}).Status)

	connected := connect(body)
	require.Equal(t, http.StatusOK, connected.Status, string(connected.Raw))
	ch := connected.data()
	require.Equal(t, true, ch["connected"])
	require.Equal(t, "+20 100 "+phoneNumberID[len(phoneNumberID)-7:], ch["display_phone"])
	require.Equal(t, "GREEN", ch["quality_rating"])
	require.Equal(t, "TIER_1K", ch["messaging_tier"])
	require.Equal(t, h.url+"/api/v1/messaging/whatsapp/"+ch["id"].(string), ch["callback_url"])
	require.Len(t, ch["verify_token"], 48)
	require.NotContains(t, string(connected.Raw), token)
	require.NotContains(t, string(connected.Raw), "app-secret")
	var sealed []byte
	require.NoError(t, testenv.SQL(t, h.db).QueryRow(context.Background(), `SELECT access_token_sealed FROM messaging_channels WHERE store_id = $1`,
		s.m.storeID).Scan(&sealed))
	require.NotContains(t, string(sealed), token, "the token is stored sealed")
	again := connect(body)
	require.Equal(t, http.StatusOK, again.Status, string(again.Raw))
	require.Equal(t, ch["id"], again.data()["id"], "a reconnect keeps the callback")
	require.Equal(t, ch["verify_token"], again.data()["verify_token"])
	list := h.do(request{method: "GET", path: storePath(s.m.storeID, "/messaging/channels"), auth: bearer(s.token)})
	require.Equal(t, http.StatusOK, list.Status, string(list.Raw))
	require.Len(t, list.Body["data"], 1)

	// A gift card's code by WhatsApp, from the store's number.
	phone := fmt.Sprintf("+2010%08d", time.Now().UnixNano()%1e8)
	card, code := h.issueGiftCard(s, map[string]any{"initial_value": 25000, "send": "whatsapp",
		"recipient": map[string]any{"name": "Laila", "phone": phone}})
	var sent []whatsappcloud.Message
	require.Eventually(t, func() bool { sent = whatsAppSent(t, phoneNumberID); return len(sent) == 1 }, 20*time.Second, 50*time.Millisecond)
	require.Equal(t, phone, sent[0].To)
	name, params := templateOf(t, sent[0])
	require.Equal(t, "gift_card", name)
	require.Equal(t, "Laila", params[0])
	require.Equal(t, code, params[2])
	var wamid string
	require.NoError(t, testenv.SQL(t, h.db).QueryRow(context.Background(), `SELECT provider_message_id FROM gift_card_sends WHERE gift_card_id = $1`,
		card["id"]).Scan(&wamid))
	require.Equal(t, sent[0].WAMID, wamid)

	// The provider refuses an undeliverable number: kept with its code, not retried.
	_, _ = h.issueGiftCard(s, map[string]any{"initial_value": 1000, "send": "whatsapp",
		"recipient": map[string]any{"name": "Nobody", "phone": "+201000131026"}})
	require.Eventually(t, func() bool {
		var code *int
		_ = testenv.SQL(t, h.db).QueryRow(context.Background(), `SELECT provider_error_code FROM gift_card_sends WHERE address = '+201000131026'
			AND store_id = $1`, s.m.storeID).Scan(&code)
		return code != nil && *code == 131026
	}, 20*time.Second, 50*time.Millisecond)
	require.Len(t, whatsAppSent(t, phoneNumberID), 1, "nothing written for a refused number")

	// An order confirmation goes out from the store's number too, once its
	// template is approved there (chat_templates_approved follows it).
	approveTemplate(t, h, s.shop, connected.data(), "app-secret-0123456789abcdef", "order_confirmation")
	order := h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders"), auth: bearer(s.token), body: orderBody(s.variantID, 1, phone)})
	require.Equal(t, http.StatusCreated, order.Status, string(order.Raw))
	require.Eventually(t, func() bool { sent = whatsAppSent(t, phoneNumberID); return len(sent) == 2 }, 20*time.Second, 50*time.Millisecond)
	name, params = templateOf(t, sent[1])
	require.Equal(t, "order_confirmation", name)
	require.Equal(t, order.data()["order_number"], params[1])

	// Disconnected: gone, and a second disconnect is 404.
	require.Equal(t, http.StatusNoContent, h.do(request{method: "DELETE", path: path, auth: bearer(s.token)}).Status)
	require.Equal(t, http.StatusNotFound, h.do(request{method: "GET", path: path, auth: bearer(s.token)}).Status)
	require.Equal(t, http.StatusNotFound, h.do(request{method: "DELETE", path: path, auth: bearer(s.token)}).Status)
}

// approveTemplate submits the store's utility template name in its
// language on its WhatsApp channel and has the provider approve it
// through the channel's callback.
func approveTemplate(t *testing.T, h *harness, s shop, channel map[string]any, appSecret, name string) {
	t.Helper()
	marketing := h.pat(s.m, "marketing:write")
	created := h.do(request{method: "POST", path: storePath(s.m.storeID, "/messaging/templates"), auth: bearer(marketing),
		body: map[string]any{"channel": "whatsapp", "name": name, "category": "utility", "language": "ar",
			"body": "شكرًا {{1}}، طلبك {{2}} بمبلغ {{3}}", "examples": map[string]string{"1": "نور", "2": "ORD-1001", "3": "490.00 EGP"}}})
	require.Equal(t, http.StatusCreated, created.Status, string(created.Raw))
	raw := []byte(`{"object":"whatsapp_business_account","entry":[{"id":"1","changes":[{"field":"message_template_status_update",
		"value":{"event":"APPROVED","message_template_id":` + created.data()["provider_template_id"].(string) + `,
		"message_template_name":"` + name + `","message_template_language":"ar","reason":"NONE"}}]}]}`)
	mac := hmac.New(sha256.New, []byte(appSecret))
	mac.Write(raw)
	resp := h.do(request{method: "POST", path: strings.TrimPrefix(channel["callback_url"].(string), h.url), body: raw,
		headers: map[string]string{"X-Hub-Signature-256": "sha256=" + hex.EncodeToString(mac.Sum(nil)), "Content-Type": "application/json"}})
	require.Equal(t, http.StatusOK, resp.Status, string(resp.Raw))
}

// A store's channel's callback (decisions §25): Meta's handshake answers the
// challenge only with the channel's verify token; a post signed with
// another secret is 401 and changes nothing; a signed one moves the store's
// message statuses forward and opts a customer out by an Arabic keyword,
// once; another store's message id is not touched through it.
func TestWhatsAppChannelCallback(t *testing.T) {
	h := newHarness(t, api.Config{Secrets: testenv.Sealer(t)})
	s := newGiftCardShop(t, h, "wacallback")
	phoneNumberID := fmt.Sprintf("2%014d", time.Now().UnixNano()%1e14)
	connected := h.do(request{method: "PUT", path: storePath(s.m.storeID, "/messaging/channels/whatsapp"), auth: bearer(s.token),
		body: map[string]any{"phone_number_id": phoneNumberID, "waba_id": "1029384756", "access_token": "EAAG" + strings.Repeat("x", 20),
			"app_secret": "callback-app-secret-0123"}})
	require.Equal(t, http.StatusOK, connected.Status, string(connected.Raw))
	callback := strings.TrimPrefix(connected.data()["callback_url"].(string), h.url)
	verify := connected.data()["verify_token"].(string)

	shake := func(token string) *http.Response {
		resp, err := http.Get(h.url + callback + "?hub.mode=subscribe&hub.challenge=1158201444&hub.verify_token=" + token)
		require.NoError(t, err)
		t.Cleanup(func() { resp.Body.Close() })
		return resp
	}
	ok := shake(verify)
	require.Equal(t, http.StatusOK, ok.StatusCode)
	require.Equal(t, "text/plain; charset=utf-8", ok.Header.Get("Content-Type"))
	challenge, _ := io.ReadAll(ok.Body)
	require.Equal(t, "1158201444", string(challenge))
	require.Equal(t, http.StatusForbidden, shake("wrong").StatusCode)
	unknown, err := http.Get(h.url + "/api/v1/messaging/whatsapp/" + uuid.NewString() + "?hub.mode=subscribe&hub.verify_token=" + verify)
	require.NoError(t, err)
	unknown.Body.Close()
	require.Equal(t, http.StatusNotFound, unknown.StatusCode)

	customer := h.do(request{method: "POST", path: storePath(s.m.storeID, "/customers"), auth: bearer(s.token),
		body: map[string]any{"name": "Omar", "phone": "+201005550123"}})
	require.Equal(t, http.StatusCreated, customer.Status, string(customer.Raw))
	order := h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders"), auth: bearer(s.token), body: orderBody(s.variantID, 1, "+201005550124")})
	require.Equal(t, http.StatusCreated, order.Status, string(order.Raw))
	other := newShop(t, h, "wacallbackother", 5)
	otherOrder := h.placeOrder(other, "cod", 1)
	sql := testenv.SQL(t, h.db)
	for _, m := range []struct{ store, order, wamid string }{{s.m.storeID, order.data()["id"].(string), "wamid.ours"},
		{other.m.storeID, otherOrder["id"].(string), "wamid.theirs"}} {
		_, err := sql.Exec(context.Background(), `INSERT INTO chat_messages (id, store_id, order_id, template, to_phone, status, provider_message_id,
			created_at, updated_at) VALUES (gen_random_uuid(), $1, $2, 'order_confirmation', '+201005550124', 'sent', $3, now(), now())`, m.store, m.order, m.wamid)
		require.NoError(t, err)
	}
	body := []byte(`{"object":"whatsapp_business_account","entry":[{"id":"1029384756","changes":[{"field":"messages","value":{
		"messaging_product":"whatsapp","metadata":{"phone_number_id":"` + phoneNumberID + `"},
		"statuses":[{"id":"wamid.ours","status":"delivered"},{"id":"wamid.theirs","status":"read"}],
		"messages":[{"from":"201005550123","id":"wamid.in1","type":"text","text":{"body":" إيقاف "}}]}}]}]}`)
	post := func(secret string) response {
		mac := hmac.New(sha256.New, []byte(secret))
		mac.Write(body)
		return h.do(request{method: "POST", path: callback, body: body,
			headers: map[string]string{"X-Hub-Signature-256": "sha256=" + hex.EncodeToString(mac.Sum(nil)), "Content-Type": "application/json"}})
	}
	forged := post("some-other-secret-000000")
	require.Equal(t, http.StatusUnauthorized, forged.Status, string(forged.Raw))
	require.Equal(t, "INVALID_SIGNATURE", forged.errorCode())
	status := func(wamid string) string {
		var st string
		require.NoError(t, sql.QueryRow(context.Background(), `SELECT status FROM chat_messages WHERE provider_message_id = $1`, wamid).Scan(&st))
		return st
	}
	require.Equal(t, "sent", status("wamid.ours"), "a forged post changes nothing")

	signed := post("callback-app-secret-0123")
	require.Equal(t, http.StatusOK, signed.Status, string(signed.Raw))
	require.EqualValues(t, 1, signed.data()["statuses_applied"])
	require.EqualValues(t, 1, signed.data()["opted_out"])
	require.Equal(t, "delivered", status("wamid.ours"))
	require.Equal(t, "sent", status("wamid.theirs"), "another store's message is out of this channel's reach")
	got := h.do(request{method: "GET", path: storePath(s.m.storeID, "/customers/"+customer.data()["id"].(string)), auth: bearer(s.token)})
	require.Equal(t, true, got.data()["chat_opt_out"])
	consent := got.data()["marketing"].(map[string]any)["whatsapp"].(map[string]any)
	require.Equal(t, "unsubscribed", consent["state"])
	require.Equal(t, "keyword", consent["source"])
	again := post("callback-app-secret-0123")
	require.Equal(t, http.StatusOK, again.Status, string(again.Raw))
	require.EqualValues(t, 0, again.data()["opted_out"], "a repeat changes nothing more")
}

// Templates (decisions §25): an email template is approved at once; a
// WhatsApp one needs the store's channel (409 CHANNEL_NOT_CONNECTED),
// is submitted to the provider and answered pending with the provider's
// id; the provider's verdicts arrive at the channel's callback and move it
// (approved, then rejected with its reason), matched by the provider's id;
// bad placeholders are 422 on their fields; a duplicate is 409.
func TestMessageTemplates(t *testing.T) {
	h := newHarness(t, api.Config{Secrets: testenv.Sealer(t)})
	s := newShop(t, h, "watemplates", 5)
	marketing := h.pat(s.m, "marketing:write", "marketing:read")
	templates := storePath(s.m.storeID, "/messaging/templates")
	create := func(body map[string]any) response {
		return h.do(request{method: "POST", path: templates, auth: bearer(marketing), body: body})
	}
	body := map[string]any{"channel": "whatsapp", "name": "ramadan_offer", "category": "marketing", "language": "ar",
		"body": "رمضان كريم يا {{1}}! استخدم الكود {{2}}", "footer": "للإيقاف أرسل إيقاف", "buttons": []string{"تسوق الآن"},
		"examples": map[string]string{"1": "نور", "2": "RAMADAN10"}}
	require.Equal(t, "CHANNEL_NOT_CONNECTED", create(body).errorCode())

	email := create(map[string]any{"channel": "email", "name": "welcome", "category": "utility", "language": "en", "body": "Welcome {{1}}",
		"examples": map[string]string{"1": "Nour"}})
	require.Equal(t, http.StatusCreated, email.Status, string(email.Raw))
	require.Equal(t, "approved", email.data()["status"])
	require.Nil(t, email.data()["provider_template_id"])

	bad := create(map[string]any{"channel": "whatsapp", "name": "Bad Name", "category": "promo", "language": "fr", "body": "Hi {{1}} {{3}}",
		"examples": map[string]string{"1": "x", "7": "y"}, "buttons": []string{"a", "b", "c", "d"}})
	require.Equal(t, http.StatusUnprocessableEntity, bad.Status, string(bad.Raw))
	require.ElementsMatch(t, []string{"name", "category", "language", "body", "examples.3", "examples.7", "buttons"}, bad.fieldNames())

	phoneNumberID := fmt.Sprintf("3%014d", time.Now().UnixNano()%1e14)
	connected := h.do(request{method: "PUT", path: storePath(s.m.storeID, "/messaging/channels/whatsapp"), auth: bearer(s.token),
		body: map[string]any{"phone_number_id": phoneNumberID, "waba_id": "5550001", "access_token": "EAAG" + strings.Repeat("y", 20),
			"app_secret": "templates-app-secret-000"}})
	require.Equal(t, http.StatusOK, connected.Status, string(connected.Raw))
	created := create(body)
	require.Equal(t, http.StatusCreated, created.Status, string(created.Raw))
	tpl := created.data()
	require.Equal(t, "pending", tpl["status"])
	require.NotEmpty(t, tpl["provider_template_id"])
	require.Equal(t, "DUPLICATE_TEMPLATE", create(body).errorCode())

	verdict := func(event, reason string) {
		raw := []byte(`{"object":"whatsapp_business_account","entry":[{"id":"5550001","changes":[{"field":"message_template_status_update",
			"value":{"event":"` + event + `","message_template_id":` + tpl["provider_template_id"].(string) + `,
			"message_template_name":"ramadan_offer","message_template_language":"ar","reason":"` + reason + `"}}]}]}`)
		mac := hmac.New(sha256.New, []byte("templates-app-secret-000"))
		mac.Write(raw)
		resp := h.do(request{method: "POST", path: strings.TrimPrefix(connected.data()["callback_url"].(string), h.url), body: raw,
			headers: map[string]string{"X-Hub-Signature-256": "sha256=" + hex.EncodeToString(mac.Sum(nil)), "Content-Type": "application/json"}})
		require.Equal(t, http.StatusOK, resp.Status, string(resp.Raw))
	}
	get := func() map[string]any {
		return h.do(request{method: "GET", path: templates + "/" + tpl["id"].(string), auth: bearer(marketing)}).data()
	}
	verdict("APPROVED", "NONE")
	require.Equal(t, "approved", get()["status"])
	require.Nil(t, get()["rejection_reason"])
	verdict("REJECTED", "INVALID_FORMAT")
	require.Equal(t, "rejected", get()["status"])
	require.Equal(t, "INVALID_FORMAT", get()["rejection_reason"])

	// With its own number, the store's approved order templates are what
	// chat_templates_approved says, no longer a setting to write.
	settings := func() []any {
		return h.do(request{method: "GET", path: storePath(s.m.storeID, "/settings"), auth: bearer(s.token)}).data()["chat_templates_approved"].([]any)
	}
	require.Empty(t, settings(), "nothing approved at the provider yet")
	readOnly := h.do(request{method: "PATCH", path: storePath(s.m.storeID, "/settings"), auth: bearer(s.token),
		body: map[string]any{"chat_templates_approved": []string{"order_confirmation"}}})
	require.Equal(t, http.StatusUnprocessableEntity, readOnly.Status, string(readOnly.Raw))
	require.Equal(t, "read_only", readOnly.fieldCode("chat_templates_approved"))
	confirmation := create(map[string]any{"channel": "whatsapp", "name": "order_confirmation", "category": "utility", "language": "ar",
		"body": "شكرًا {{1}}، طلبك {{2}} بمبلغ {{3}}", "examples": map[string]string{"1": "نور", "2": "ORD-1001", "3": "490.00 EGP"}})
	require.Equal(t, http.StatusCreated, confirmation.Status, string(confirmation.Raw))
	tpl = confirmation.data()
	verdict("APPROVED", "NONE")
	require.Equal(t, []any{"order_confirmation"}, settings())

	list := h.do(request{method: "GET", path: templates + "?channel=whatsapp", auth: bearer(marketing)})
	require.Equal(t, http.StatusOK, list.Status, string(list.Raw))
	require.Len(t, list.data()["items"], 2)
	require.Equal(t, http.StatusNoContent, h.do(request{method: "DELETE", path: templates + "/" + tpl["id"].(string), auth: bearer(marketing)}).Status)
	require.Equal(t, http.StatusNotFound, h.do(request{method: "GET", path: templates + "/" + tpl["id"].(string), auth: bearer(marketing)}).Status)
}
