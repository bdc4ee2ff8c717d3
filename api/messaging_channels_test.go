package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

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

	// An order confirmation goes out from the store's number too.
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
