package api_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"

	"github.com/merchantsvc/svc/api"
	"github.com/merchantsvc/svc/internal/testenv"
	"github.com/merchantsvc/svc/workflows"
)

func (h *harness) sideEffects(orderID string) map[string]string {
	rows, err := testenv.SQL(h.t, h.db).Query(context.Background(), `SELECT kind, status FROM order_side_effects WHERE order_id = $1`, orderID)
	require.NoError(h.t, err)
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var kind, status string
		require.NoError(h.t, rows.Scan(&kind, &status))
		out[kind] = status
	}
	return out
}

func (h *harness) exec(sql string, args ...any) {
	_, err := testenv.SQL(h.t, h.db).Exec(context.Background(), sql, args...)
	require.NoError(h.t, err)
}

// settings changes the store's switches through the API.
func (h *harness) settings(s shop, body map[string]any) response {
	h.t.Helper()
	resp := h.do(request{method: "PATCH", path: storePath(s.m.storeID, "/settings"), auth: bearer(s.token), body: body})
	require.Equal(h.t, http.StatusOK, resp.Status, string(resp.Raw))
	return resp
}

func withEmail(body map[string]any, email string) map[string]any {
	body["customer"].(map[string]any)["email"] = email
	return body
}

func TestOrderPlacedSideEffectsRunOnce(t *testing.T) {
	h := newHarness(t, api.Config{})
	h.startWorker(nil)
	s := newShop(t, h, "placed", 10)
	h.settings(s, map[string]any{"auto_create_shipment": true, "numerals": "arab"})
	o := h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders"), auth: bearer(s.token),
		body: withEmail(orderBody(s.variantID, 1, "+201001234567"), "mona@example.com")}).data()
	id := o["id"].(string)
	waitFor(t, "all three side effects", func() bool { return len(h.sideEffects(id)) == 3 })
	require.Equal(t, map[string]string{"email": "succeeded", "chat": "succeeded", "shipment": "succeeded"}, h.sideEffects(id))
	// The side effects ran as local activities: markers in the order's one
	// workflow, no activity task on the queue.
	orderID := uuid.MustParse(id)
	var events map[enumspb.EventType]int
	waitFor(t, "the order-placed workflow to complete", func() bool {
		events = map[enumspb.EventType]int{}
		for _, e := range history(context.Background(), t, h.temporal, workflows.OrderPlacedWorkflowID(orderID), "").Events {
			events[e.GetEventType()]++
		}
		return events[enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED] == 1
	})
	require.Zero(t, events[enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED], "no activity task")
	require.Equal(t, 1, events[enumspb.EVENT_TYPE_MARKER_RECORDED], "one local activity runs the three side effects")

	mails := h.messagesTo("mona@example.com")
	require.Len(t, mails, 1)
	require.Equal(t, []string{"mona@example.com"}, mails[0].To)
	require.Contains(t, string(mails[0].Data), "ORD-1001")
	// The Arabic store shows its buyers Arabic-Indic digits: amounts read
	// "١٬٢٣٤٫٥٠ ج.م.".
	html := mailHTML(t, mails[0].Data)
	require.Regexp(t, `[٠-٩]٫[٠-٩]{2} ج\.م\.`, html)
	require.NotRegexp(t, `[0-9]\.[0-9]{2} EGP`, html)
	chats := h.chat.messages()
	require.Len(t, chats, 1)
	require.Equal(t, "order_confirmation", chats[0]["template"].(map[string]any)["name"], "passive confirmation: the store does not confirm in chat")
	require.Equal(t, "+201001234567", chats[0]["to"])

	var shipments, rollupOrders int
	require.NoError(t, testenv.SQL(h.t, h.db).QueryRow(context.Background(), `SELECT count(*) FROM shipments WHERE order_id = $1`, id).Scan(&shipments))
	require.NoError(t, testenv.SQL(h.t, h.db).QueryRow(context.Background(), `SELECT sum(orders) FROM order_rollups WHERE store_id = $1`, s.m.storeID).Scan(&rollupOrders))
	require.Equal(t, 1, shipments)
	require.Equal(t, 1, rollupOrders)
	// The automatic shipment is a decisions §12 one: every line, a label, COD the balance due.
	var (
		number, status, carrier string
		units, codAmount        int64
	)
	require.NoError(t, testenv.SQL(h.t, h.db).QueryRow(context.Background(), `SELECT s.number, s.status, s.carrier, s.cod_amount,
			(SELECT sum(l.quantity) FROM shipment_lines l WHERE l.shipment_id = s.id)
		FROM shipments s WHERE s.order_id = $1`, id).Scan(&number, &status, &carrier, &codAmount, &units))
	order := h.do(request{method: "GET", path: storePath(s.m.storeID, "/orders/"+id), auth: bearer(s.token)}).data()
	require.Equal(t, order["order_number"].(string)+"-1", number)
	require.Equal(t, [2]string{"label_created", "other"}, [2]string{status, carrier})
	require.EqualValues(t, order["balance_due"], codAmount)
	var ordered int64
	for _, l := range order["lines"].([]any) {
		ordered += int64(l.(map[string]any)["quantity"].(float64))
	}
	require.Equal(t, ordered, units)
	msgs := h.do(request{method: "GET", path: storePath(s.m.storeID, "/orders/"+id+"/chat-messages"), auth: bearer(s.token)})
	require.Equal(t, http.StatusOK, msgs.Status)
	require.Equal(t, "sent", msgs.Body["data"].([]any)[0].(map[string]any)["status"])
}

// The placed order's side effects run together; one that fails for a
// moment is retried alone (the email that went out is not sent again),
// and a customer who opted out of chat gets no confirmation there.
func TestOrderPlacedRetriesOnlyTheSideEffectThatFailed(t *testing.T) {
	h := newHarness(t, api.Config{})
	h.startWorker(nil)
	s := newShop(t, h, "retried", 10)
	h.chat.mu.Lock()
	h.chat.unavailable = 1
	h.chat.mu.Unlock()
	o := h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders"), auth: bearer(s.token),
		body: withEmail(orderBody(s.variantID, 1, "+201001234567"), "mona@example.com")}).data()
	id := o["id"].(string)
	waitFor(t, "all three side effects", func() bool { return len(h.sideEffects(id)) == 3 })
	require.Equal(t, map[string]string{"email": "succeeded", "chat": "succeeded", "shipment": "skipped"}, h.sideEffects(id))
	require.Len(t, h.messagesTo("mona@example.com"), 1, "the email is not sent again when the chat is retried")
	require.Len(t, h.chat.messages(), 2, "the chat confirmation, refused once and sent on the retry")

	optOut := h.do(request{method: "PATCH", path: storePath(s.m.storeID, "/customers/"+o["customer_id"].(string)), auth: bearer(s.token),
		body: map[string]any{"chat_opt_out": true}})
	require.Equal(t, http.StatusOK, optOut.Status, string(optOut.Raw))
	second := h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders"), auth: bearer(s.token),
		body: withEmail(orderBody(s.variantID, 1, "+201001234567"), "mona@example.com")}).data()
	secondID := second["id"].(string)
	require.Equal(t, o["customer_id"], second["customer_id"])
	waitFor(t, "the second order's side effects", func() bool { return len(h.sideEffects(secondID)) == 3 })
	require.Equal(t, "skipped", h.sideEffects(secondID)["chat"])
	var reason string
	require.NoError(t, testenv.SQL(h.t, h.db).QueryRow(context.Background(),
		`SELECT detail->>'reason' FROM order_side_effects WHERE order_id = $1 AND kind = 'chat'`, secondID).Scan(&reason))
	require.Equal(t, "CHAT_OPTED_OUT", reason)
	require.Len(t, h.chat.messages(), 2, "nothing sent to a customer who opted out")
}

func TestDraftConversionFiresSideEffectsExactlyOnce(t *testing.T) {
	h := newHarness(t, api.Config{})
	h.startWorker(nil)
	s := newShop(t, h, "convert", 5)
	h.settings(s, map[string]any{"confirm_in_chat": true})
	draft := h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders/drafts"), auth: bearer(s.token),
		body: withEmail(orderBody(s.variantID, 2, "+201001234567"), "draft@example.com")}).data()
	id := draft["id"].(string)
	require.Empty(t, h.events(s.m.storeID, "order.created"))
	require.Empty(t, h.sideEffects(id), "a draft runs no side effects")

	conv := h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders/"+id+"/convert"), auth: bearer(s.token)})
	require.Equal(t, http.StatusOK, conv.Status, string(conv.Raw))
	require.Equal(t, "PENDING", conv.data()["status"])
	require.Nil(t, draft["placed_at"], "a draft is not placed")
	require.NotNil(t, conv.data()["placed_at"])
	require.Equal(t, conv.data()["updated_at"], conv.data()["placed_at"], "placed at its conversion")
	read := h.do(request{method: "GET", path: storePath(s.m.storeID, "/orders/"+id), auth: bearer(s.token)}).data()
	placedAt, err := time.Parse(time.RFC3339Nano, conv.data()["placed_at"].(string))
	require.NoError(t, err)
	readPlacedAt, err := time.Parse(time.RFC3339Nano, read["placed_at"].(string))
	require.NoError(t, err)
	require.WithinDuration(t, placedAt, readPlacedAt, time.Microsecond, "as stored")
	require.NotEqual(t, read["created_at"], read["placed_at"])
	require.Equal(t, 3, h.variantQuantity(s), "conversion reserves the stock")
	require.Len(t, h.events(s.m.storeID, "order.created"), 1)
	waitFor(t, "the side effects", func() bool { return len(h.sideEffects(id)) == 3 })
	require.Len(t, h.messagesTo("draft@example.com"), 1)
	chats := h.chat.messages()
	require.Len(t, chats, 1)
	require.Equal(t, "order_confirmation_request", chats[0]["template"].(map[string]any)["name"], "COD on a confirm-in-chat store gets tap-to-confirm")

	again := h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders/"+id+"/convert"), auth: bearer(s.token)})
	require.Equal(t, http.StatusConflict, again.Status)
	require.Equal(t, "INVALID_STATUS_TRANSITION", again.errorCode())
	list := h.do(request{method: "GET", path: storePath(s.m.storeID, "/orders"), auth: bearer(s.token)})
	require.Len(t, list.data()["items"], 1, "a converted draft is listed")

	// Not enough stock left for a second draft: the conversion is refused and nothing moves.
	big := h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders/drafts"), auth: bearer(s.token),
		body: orderBody(s.variantID, 4, "+201001234567")}).data()
	refused := h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders/"+big["id"].(string)+"/convert"), auth: bearer(s.token)})
	require.Equal(t, http.StatusConflict, refused.Status, string(refused.Raw))
	require.Equal(t, "INSUFFICIENT_STOCK", refused.errorCode())
	require.Equal(t, 3, h.variantQuantity(s))
	require.Len(t, h.messagesTo("draft@example.com"), 1, "still one email: nothing fired twice")
}

// returnedOrders places n COD orders to phone in a store and moves them to
// RETURNED as its merchant; carrier marks the outcomes carrier-confirmed.
func (h *harness) returnedOrders(s shop, phone string, n int, carrier bool) {
	h.t.Helper()
	for range n {
		o := h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders"), auth: bearer(s.token), body: orderBody(s.variantID, 1, phone)}).data()
		for _, st := range []string{"SHIPPED", "RETURNED"} {
			require.Equal(h.t, http.StatusOK, h.do(request{method: "PATCH", path: storePath(s.m.storeID, "/orders/"+o["id"].(string)+"/status"),
				auth: bearer(s.token), body: map[string]any{"status": st}}).Status)
		}
		if carrier {
			h.exec(`UPDATE orders SET carrier_confirmed_at = now() WHERE id = $1`, o["id"])
		}
	}
}

// flags lists a store's open autopilot exceptions.
func (h *harness) flags(s shop) []any {
	h.t.Helper()
	return h.do(request{method: "GET", path: storePath(s.m.storeID, "/orders/autopilot-exceptions"), auth: bearer(s.token)}).data()["items"].([]any)
}

// One store cannot brand a phone for everyone: its own RETURNED orders, or
// any number of them from one store, do not flag the phone elsewhere.
func TestCODTrustNetworkResistsOneStore(t *testing.T) {
	h := newHarness(t, api.Config{})
	faker, victim := newShop(t, h, "risk-faker", 20), newShop(t, h, "risk-victim", 10)
	const phone = "+201009998800"
	h.returnedOrders(faker, phone, 2, false)
	require.Equal(t, http.StatusCreated, h.do(request{method: "POST", path: storePath(victim.m.storeID, "/orders"), auth: bearer(victim.token),
		body: orderBody(victim.variantID, 1, phone)}).Status)
	require.Empty(t, h.flags(victim), "outcomes a merchant set count only in its own store")
	h.do(request{method: "POST", path: storePath(faker.m.storeID, "/orders"), auth: bearer(faker.token), body: orderBody(faker.variantID, 1, phone)})
	require.Len(t, h.flags(faker), 1, "the store's own two returns flag it there")

	h.returnedOrders(faker, phone, 5, true)
	h.do(request{method: "POST", path: storePath(victim.m.storeID, "/orders"), auth: bearer(victim.token), body: orderBody(victim.variantID, 1, phone)})
	require.Empty(t, h.flags(victim), "one other store, however many confirmed returns, never flags a phone alone")
}

func TestCODTrustCheckFlagsButNeverBlocks(t *testing.T) {
	h := newHarness(t, api.Config{})
	other, another, s := newShop(t, h, "risk-other", 10), newShop(t, h, "risk-third", 10), newShop(t, h, "risk", 10)
	const phone = "+201009998877"
	// Carrier-confirmed returns to this phone in two other stores.
	h.returnedOrders(other, phone, 2, true)
	h.returnedOrders(another, phone, 1, true)
	placed := h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders"), auth: bearer(s.token), body: orderBody(s.variantID, 1, phone)})
	require.Equal(t, http.StatusCreated, placed.Status, "high risk never blocks")
	card := orderBody(s.variantID, 1, phone)
	card["payment_method"] = "card"
	require.Equal(t, http.StatusCreated, h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders"), auth: bearer(s.token), body: card}).Status)

	list := h.do(request{method: "GET", path: storePath(s.m.storeID, "/orders/autopilot-exceptions"), auth: bearer(s.token)})
	require.Equal(t, http.StatusOK, list.Status, string(list.Raw))
	items := list.data()["items"].([]any)
	require.Len(t, items, 1, "only the COD order is flagged")
	flag := items[0].(map[string]any)
	require.Equal(t, "cod_high_risk", flag["reason"])
	require.Equal(t, placed.data()["id"], flag["order_id"])
	require.NotEmpty(t, flag["message_ar"])
	require.Contains(t, flag["message"], "Return risk 100/100")
	require.Contains(t, flag["message"], "in your store: 0 of 0")
	require.Equal(t, map[string]any{"score": 100.0, "own_returned": 0.0, "own_completed": 0.0}, flag["data"], "no other store's counts")
	require.Equal(t, map[string]any{"offset": 0.0, "limit": 50.0, "total": 1.0, "has_next": false}, list.data()["pagination"])
	require.Equal(t, http.StatusUnprocessableEntity, h.do(request{method: "GET", path: storePath(s.m.storeID, "/orders/autopilot-exceptions?limit=201"), auth: bearer(s.token)}).Status)
	otherList := h.do(request{method: "GET", path: storePath(other.m.storeID, "/orders/autopilot-exceptions"), auth: bearer(other.token)})
	require.Empty(t, otherList.data()["items"], "stores never see each other's flags")

	resolve := h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders/autopilot-exceptions/"+flag["order_id"].(string)+"/resolve"),
		auth: bearer(s.token), body: map[string]any{"note": "called the customer"}})
	require.Equal(t, http.StatusOK, resolve.Status, string(resolve.Raw))
	require.EqualValues(t, 1, resolve.data()["resolved"])
	after := h.do(request{method: "GET", path: storePath(s.m.storeID, "/orders/"+flag["order_id"].(string)), auth: bearer(s.token)})
	require.Equal(t, "PENDING", after.data()["status"], "resolving leaves the order as it was")
	require.Equal(t, http.StatusNotFound, h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders/autopilot-exceptions/"+flag["order_id"].(string)+"/resolve"),
		auth: bearer(s.token), body: map[string]any{}}).Status)

	// A status change clears pending automation too.
	third := h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders"), auth: bearer(s.token), body: orderBody(s.variantID, 1, phone)}).data()
	require.Len(t, h.do(request{method: "GET", path: storePath(s.m.storeID, "/orders/autopilot-exceptions"), auth: bearer(s.token)}).data()["items"], 1)
	h.do(request{method: "PATCH", path: storePath(s.m.storeID, "/orders/"+third["id"].(string)+"/status"), auth: bearer(s.token), body: map[string]any{"status": "CONFIRMED"}})
	require.Empty(t, h.do(request{method: "GET", path: storePath(s.m.storeID, "/orders/autopilot-exceptions"), auth: bearer(s.token)}).data()["items"])
}

func TestEmailPreviewResendAndChatGuards(t *testing.T) {
	h := newHarness(t, api.Config{})
	h.startWorker(nil)
	s := newShop(t, h, "emails", 10)
	o := h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders"), auth: bearer(s.token),
		body: withEmail(orderBody(s.variantID, 1, "+201001234567"), "mona@example.com")}).data()
	id := o["id"].(string)
	waitFor(t, "the first email", func() bool { return len(h.messagesTo("mona@example.com")) == 1 })
	h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders/"+id+"/comments"), auth: bearer(s.token), body: map[string]any{"body": "STAFF-ONLY-NOTE"}})

	preview := h.do(request{method: "GET", path: storePath(s.m.storeID, "/orders/"+id+"/email-preview"), auth: bearer(s.token)})
	require.Equal(t, http.StatusOK, preview.Status)
	require.Equal(t, "text/html; charset=utf-8", preview.Header.Get("Content-Type"))
	// The preview is the store's HTML opened on the API's origin: it may
	// load nothing, run nothing and be framed by nobody (issue 48).
	require.Equal(t, "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
		preview.Header.Get("Content-Security-Policy"))
	require.Equal(t, "nosniff", preview.Header.Get("X-Content-Type-Options"))
	html := string(preview.Raw)
	require.Contains(t, html, `dir="rtl"`, "the store speaks Arabic")
	require.Contains(t, html, "تم استلام الطلب")
	require.NotContains(t, html, "STAFF-ONLY-NOTE", "staff comments never reach the customer")
	shipped := h.do(request{method: "GET", path: storePath(s.m.storeID, "/orders/"+id+"/email-preview?status=SHIPPED"), auth: bearer(s.token)})
	require.Contains(t, string(shipped.Raw), "تم الشحن")
	require.Equal(t, http.StatusUnprocessableEntity, h.do(request{method: "GET", path: storePath(s.m.storeID, "/orders/"+id+"/email-preview?status=LOST"), auth: bearer(s.token)}).Status)
	h.settings(s, map[string]any{"default_language": "en"})
	english := h.do(request{method: "GET", path: storePath(s.m.storeID, "/orders/"+id+"/email-preview"), auth: bearer(s.token)})
	require.Contains(t, string(english.Raw), `dir="ltr"`)
	require.Contains(t, string(english.Raw), "Order received")

	resend := h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders/"+id+"/resend-email"), auth: bearer(s.token)})
	require.Equal(t, http.StatusOK, resend.Status, string(resend.Raw))
	require.Len(t, h.messagesTo("mona@example.com"), 2)
	for _, m := range h.mail.Messages() {
		require.NotContains(t, string(m.Data), "STAFF-ONLY-NOTE")
	}

	waitFor(t, "the first chat message", func() bool { return len(h.chat.messages()) == 1 })
	chatPath := storePath(s.m.storeID, "/orders/"+id+"/resend-chat-message")
	require.Equal(t, http.StatusOK, h.do(request{method: "POST", path: chatPath, auth: bearer(s.token)}).Status)
	require.Len(t, h.chat.messages(), 2, "resend bypasses send-once")

	h.settings(s, map[string]any{"chat_templates_approved": []string{}})
	require.Equal(t, "CHAT_TEMPLATE_NOT_APPROVED", h.do(request{method: "POST", path: chatPath, auth: bearer(s.token)}).errorCode())
	optOut := h.do(request{method: "PATCH", path: storePath(s.m.storeID, "/customers/"+o["customer_id"].(string)), auth: bearer(s.token),
		body: map[string]any{"chat_opt_out": true}})
	require.Equal(t, http.StatusOK, optOut.Status, string(optOut.Raw))
	require.Equal(t, true, optOut.data()["chat_opt_out"])
	require.Equal(t, "CHAT_OPTED_OUT", h.do(request{method: "POST", path: chatPath, auth: bearer(s.token)}).errorCode())
	h.settings(s, map[string]any{"chat_confirmations": false})
	off := h.do(request{method: "POST", path: chatPath, auth: bearer(s.token)})
	require.Equal(t, http.StatusConflict, off.Status)
	require.Equal(t, "CHAT_DISABLED", off.errorCode())
	require.Len(t, h.chat.messages(), 2, "guards send nothing")

	// A provider refusal is recorded with its numeric code.
	h.settings(s, map[string]any{"chat_confirmations": true, "chat_templates_approved": []string{"order_confirmation"}})
	h.do(request{method: "PATCH", path: storePath(s.m.storeID, "/customers/"+o["customer_id"].(string)), auth: bearer(s.token),
		body: map[string]any{"chat_opt_out": false}})
	h.chat.mu.Lock()
	h.chat.failWith = 131026
	h.chat.mu.Unlock()
	require.Equal(t, http.StatusOK, h.do(request{method: "POST", path: chatPath, auth: bearer(s.token)}).Status)
	msgs := h.do(request{method: "GET", path: storePath(s.m.storeID, "/orders/"+id+"/chat-messages"), auth: bearer(s.token)}).Body["data"].([]any)
	latest := msgs[0].(map[string]any)
	require.Equal(t, "failed", latest["status"])
	require.EqualValues(t, 131026, latest["error_code"])
	require.True(t, strings.HasPrefix(msgs[1].(map[string]any)["provider_message_id"].(string), "wamid."))
}

func signChat(secret string, body []byte) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(body)
	return "sha256=" + hex.EncodeToString(mac.Sum(nil))
}

func TestChatCallbackUpdatesStatusesAndConfirmsByTap(t *testing.T) {
	const secret = "chat-secret"
	h := newHarness(t, api.Config{ChatWebhookSecret: secret})
	h.startWorker(nil)
	s := newShop(t, h, "tap", 10)
	h.settings(s, map[string]any{"confirm_in_chat": true})
	o := h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders"), auth: bearer(s.token), body: orderBody(s.variantID, 1, "+201001234567")}).data()
	id := o["id"].(string)
	waitFor(t, "the tap-to-confirm message", func() bool { return len(h.chat.messages()) == 1 })
	var providerID string
	waitFor(t, "the provider id", func() bool {
		_ = testenv.SQL(h.t, h.db).QueryRow(context.Background(), `SELECT COALESCE(provider_message_id, '') FROM chat_messages WHERE order_id = $1`, id).Scan(&providerID)
		return providerID != ""
	})

	post := func(body string, signature string) response {
		return h.do(request{method: "POST", path: "/api/v1/chat/callback", body: body,
			headers: map[string]string{"X-Hub-Signature-256": signature}})
	}
	delivered := `{"entry":[{"changes":[{"value":{"statuses":[{"id":"` + providerID + `","status":"read"},{"id":"wamid.unknown","status":"delivered"}]}}]}]}`
	require.Equal(t, http.StatusForbidden, post(delivered, "sha256=00").Status, "unsigned callbacks are refused")
	resp := post(delivered, signChat(secret, []byte(delivered)))
	require.Equal(t, http.StatusOK, resp.Status, string(resp.Raw))
	require.EqualValues(t, 1, resp.data()["statuses_applied"])
	late := `{"entry":[{"changes":[{"value":{"statuses":[{"id":"` + providerID + `","status":"delivered"}]}}]}]}`
	post(late, signChat(secret, []byte(late)))
	msgs := h.do(request{method: "GET", path: storePath(s.m.storeID, "/orders/"+id+"/chat-messages"), auth: bearer(s.token)}).Body["data"].([]any)
	require.Equal(t, "read", msgs[0].(map[string]any)["status"], "a late delivered does not undo read")

	tap := `{"entry":[{"changes":[{"value":{"messages":[{"type":"button","context":{"id":"` + providerID + `"},"button":{"payload":"confirm"}}]}}]}]}`
	confirmed := post(tap, signChat(secret, []byte(tap)))
	require.Equal(t, http.StatusOK, confirmed.Status)
	require.EqualValues(t, 1, confirmed.data()["orders_confirmed"])
	got := h.do(request{method: "GET", path: storePath(s.m.storeID, "/orders/"+id), auth: bearer(s.token)}).data()
	require.Equal(t, "CONFIRMED", got["status"])
	again := post(tap, signChat(secret, []byte(tap)))
	require.EqualValues(t, 0, again.data()["orders_confirmed"], "a second tap changes nothing")
}

func TestUpdateOrderAndBulkStatus(t *testing.T) {
	h := newHarness(t, api.Config{})
	s := newShop(t, h, "bulk", 20)
	var ids []string
	for range 3 {
		ids = append(ids, h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders"), auth: bearer(s.token),
			body: orderBody(s.variantID, 1, "+201001234567")}).data()["id"].(string))
	}
	patch := h.do(request{method: "PATCH", path: storePath(s.m.storeID, "/orders/"+ids[0]), auth: bearer(s.token),
		body: map[string]any{"notes": "Leave with the doorman", "shipping_address": map[string]any{"name": "Mona", "phone": "+201001234567",
			"line1": "5 Nile St", "city": "Giza", "country": "EG"}}})
	require.Equal(t, http.StatusOK, patch.Status, string(patch.Raw))
	require.Equal(t, "Leave with the doorman", patch.data()["notes"])
	require.Equal(t, "Giza", patch.data()["shipping_address"].(map[string]any)["city"])
	require.Equal(t, http.StatusUnprocessableEntity, h.do(request{method: "PATCH", path: storePath(s.m.storeID, "/orders/"+ids[0]),
		auth: bearer(s.token), body: map[string]any{"shipping_address": map[string]any{"city": "x"}}}).Status)

	h.do(request{method: "PATCH", path: storePath(s.m.storeID, "/orders/"+ids[2]+"/status"), auth: bearer(s.token), body: map[string]any{"status": "SHIPPED"}})
	bulk := h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders/bulk-status"), auth: bearer(s.token),
		body: map[string]any{"order_ids": append(ids, "01a20106-0000-7000-8000-000000000000"), "status": "PROCESSING", "tracking_number": "EG9"}})
	require.Equal(t, http.StatusOK, bulk.Status, string(bulk.Raw))
	require.ElementsMatch(t, []any{ids[0], ids[1]}, bulk.data()["updated"])
	failed := bulk.data()["failed"].([]any)
	require.Len(t, failed, 2)
	codes := map[string]string{}
	for _, f := range failed {
		codes[f.(map[string]any)["order_id"].(string)] = f.(map[string]any)["code"].(string)
	}
	require.Equal(t, map[string]string{ids[2]: "INVALID_STATUS_TRANSITION", "01a20106-0000-7000-8000-000000000000": "NOT_FOUND"}, codes)
	shipped := h.do(request{method: "PATCH", path: storePath(s.m.storeID, "/orders/"+ids[2]), auth: bearer(s.token),
		body: map[string]any{"shipping_address": map[string]any{"name": "Mona", "phone": "+201001234567", "line1": "x", "city": "y", "country": "EG"}}})
	require.Equal(t, http.StatusConflict, shipped.Status)
	require.Equal(t, "ORDER_SHIPPED", shipped.errorCode())
	require.Equal(t, http.StatusUnprocessableEntity, h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders/bulk-status"),
		auth: bearer(s.token), body: map[string]any{"order_ids": []string{}, "status": "PROCESSING"}}).Status)
}

func TestStoreSettings(t *testing.T) {
	h := newHarness(t, api.Config{})
	s := newShop(t, h, "settings", 1)
	got := h.do(request{method: "GET", path: storePath(s.m.storeID, "/settings"), auth: bearer(s.token)})
	require.Equal(t, http.StatusOK, got.Status)
	require.Equal(t, map[string]any{"name": "Store settings", "default_language": "ar", "auto_create_shipment": false,
		"chat_confirmations": true, "confirm_in_chat": false, "e_invoicing": false, "abandonment_threshold_minutes": float64(60),
		"max_line_quantity": float64(50), "max_order_quantity": float64(200), "timezone": "Africa/Cairo", "week_start": "saturday",
		"chat_templates_approved": []any{"order_confirmation", "order_confirmation_request"}, "card_payment_timeout_minutes": float64(30),
		"numerals": "latn"}, got.data())
	changed := h.settings(s, map[string]any{"confirm_in_chat": true, "name": "متجر الإعدادات"})
	require.Equal(t, true, changed.data()["confirm_in_chat"])
	require.Equal(t, "متجر الإعدادات", changed.data()["name"])
	require.Equal(t, true, changed.data()["chat_confirmations"], "absent fields are untouched")
	bad := h.do(request{method: "PATCH", path: storePath(s.m.storeID, "/settings"), auth: bearer(s.token),
		body: map[string]any{"default_language": "fr", "chat_templates_approved": []string{"promo"}, "confirm_in_chat": nil}})
	require.Equal(t, http.StatusUnprocessableEntity, bad.Status)
	require.ElementsMatch(t, []string{"default_language", "chat_templates_approved[0]", "confirm_in_chat"}, bad.fieldNames())
	for _, minutes := range []int{9, 1441} {
		resp := h.do(request{method: "PATCH", path: storePath(s.m.storeID, "/settings"), auth: bearer(s.token),
			body: map[string]any{"card_payment_timeout_minutes": minutes}})
		require.Equal(t, http.StatusUnprocessableEntity, resp.Status, "card payment timeout %d", minutes)
		require.Equal(t, "out_of_range", resp.fieldCode("card_payment_timeout_minutes"))
	}
	require.EqualValues(t, 10, h.settings(s, map[string]any{"card_payment_timeout_minutes": 10}).data()["card_payment_timeout_minutes"])
	for _, minutes := range []int{4, 2881} {
		resp := h.do(request{method: "PATCH", path: storePath(s.m.storeID, "/settings"), auth: bearer(s.token),
			body: map[string]any{"abandonment_threshold_minutes": minutes}})
		require.Equal(t, http.StatusUnprocessableEntity, resp.Status)
		require.Equal(t, []string{"abandonment_threshold_minutes"}, resp.fieldNames())
	}
	require.EqualValues(t, 30, h.settings(s, map[string]any{"abandonment_threshold_minutes": 30}).data()["abandonment_threshold_minutes"])
	for _, bad := range []any{"arabic", "", nil} {
		resp := h.do(request{method: "PATCH", path: storePath(s.m.storeID, "/settings"), auth: bearer(s.token), body: map[string]any{"numerals": bad}})
		require.Equal(t, http.StatusUnprocessableEntity, resp.Status, "numerals %v", bad)
		require.Equal(t, []string{"numerals"}, resp.fieldNames())
	}
	require.Equal(t, "arab", h.settings(s, map[string]any{"numerals": "arab"}).data()["numerals"])
	readOnly := h.pat(s.m, "settings:read")
	require.Equal(t, http.StatusForbidden, h.do(request{method: "PATCH", path: storePath(s.m.storeID, "/settings"), auth: bearer(readOnly),
		body: map[string]any{"confirm_in_chat": false}}).Status)
}
