package api_test

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/api/temporalproto"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"

	"github.com/merchantsvc/svc/activities/einvoice"
	"github.com/merchantsvc/svc/api"
	"github.com/merchantsvc/svc/internal/webhook"
	"github.com/merchantsvc/svc/storage"
	"github.com/merchantsvc/svc/workflows"
)

// recordedWorkflows is every workflow type the worker registers; the
// recorder fails when one of them did not run.
var recordedWorkflows = []string{"Ping", "OrderPlaced", "OrderMessage", "ProductImage", "Media", "ProductImport", "Dispatch",
	"Delivery", "WebhookTest", "PaymentProof", "EInvoiceSync", "AbandonmentSweep", "RecoveryEmail", "PurgeExpired", "ShipmentWaybill", "Refund", "InvitationMail", "CardPayment", "AccountMail",
	"GatewayChangeMail", "CollectionRebuild", "GiftCardMail", "GiftCardWhatsApp", "SignInCode"}

// TestRecordWorkflowHistories runs every workflow through the real API,
// worker, dispatcher, Temporal, Postgres and MinIO, and writes each one's
// history as JSON into the directory SVC_RECORD_HISTORIES names, for the
// replay tests in workflows/ (make record-histories). Skipped otherwise.
func TestRecordWorkflowHistories(t *testing.T) {
	dir := os.Getenv("SVC_RECORD_HISTORIES")
	if dir == "" {
		t.Skip("set SVC_RECORD_HISTORIES to a directory to record workflow histories (make record-histories)")
	}
	rec := newReceiver(t, func(n int) int {
		if n == 1 {
			return http.StatusInternalServerError // the first attempt fails, so a ladder runs
		}
		return http.StatusOK
	})
	h := newHarness(t, api.Config{WebhookGuard: webhook.Guard{AllowPrivate: true}, WebhookRetrySchedule: []time.Duration{200 * time.Millisecond}})
	authority := &fakeAuthority{}
	h.authority = &einvoice.HTTP{BaseURL: authority.serve(t).URL, Token: "authority-token"}
	stripe := &fakeStripe{key: "sk_test_histories", failFirst: 1}
	h.stripeBase = stripe.serve(t)
	httpClient, err := webhook.Guard{AllowPrivate: true}.NewClient(rec.caFile)
	require.NoError(t, err)
	h.startWorker(httpClient)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	s := newShop(t, h, "histories", 50)
	require.Equal(t, true, h.settings(s, map[string]any{"e_invoicing": true}).data()["e_invoicing"])
	hook := h.do(request{method: "POST", path: storePath(s.m.storeID, "/webhooks"), auth: bearer(s.token),
		body: map[string]any{"url": rec.url(), "events": []string{"order.created"}}})
	require.Equal(t, http.StatusCreated, hook.Status, string(hook.Raw))
	hookID := hook.data()["id"].(string)

	// OrderPlaced, Dispatch and Delivery (the first attempt fails), EInvoiceSync, OrderMessage.
	order := h.placeOrder(s, "instapay", 1)
	orderID := order["id"].(string)
	require.Equal(t, http.StatusOK, h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders/"+orderID+"/mark-paid"), auth: bearer(s.token)}).Status)
	resend := h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders/"+orderID+"/resend-email"), auth: bearer(s.token)})
	require.Equal(t, http.StatusOK, resend.Status, string(resend.Raw))
	// WebhookTest, once the order's first attempt has failed (the ping
	// must not take the receiver's one failure).
	waitFor(t, "the order's first attempt", func() bool { return len(rec.requests()) >= 1 })
	ping := h.do(request{method: "POST", path: storePath(s.m.storeID, "/webhooks/"+hookID+"/test"), auth: bearer(s.token)})
	require.Equal(t, http.StatusOK, ping.Status, string(ping.Raw))
	// PaymentProof.
	second := h.placeOrder(s, "instapay", 1)
	proof := h.uploadProof(s, second["id"].(string), h.orderToken(s, second["id"].(string)), photo(t, "coffee.jpg"))
	require.Equal(t, http.StatusCreated, proof.Status, string(proof.Raw))
	// ShipmentWaybill.
	shipment := h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders/"+orderID+"/shipments"), auth: bearer(s.token),
		body: map[string]any{"carrier": "other", "tracking_number": "REC-1"}})
	require.Equal(t, http.StatusCreated, shipment.Status, string(shipment.Raw))
	// Refund: a card refund through the gateway (whose first call fails).
	// GatewayChangeMail: the owner's mail about the connect (written here as
	// the connect route writes it; the fake gateway has no balance to check).
	store, err := h.db.FindStoreByID(ctx, uuid.MustParse(s.m.storeID))
	require.NoError(t, err)
	require.NoError(t, h.db.InTx(ctx, func(tx *storage.Tx) error {
		if err := tx.ConnectGateway(ctx, h.secrets, storage.GatewayAccount{StoreID: uuid.MustParse(s.m.storeID), Provider: storage.GatewayStripe,
			SecretKey: stripe.key, WebhookSecret: "whsec_histories"}); err != nil {
			return err
		}
		_, err := tx.RecordGatewayChange(ctx, storage.GatewayChange{StoreID: store.ID, Provider: storage.GatewayStripe,
			Kind: storage.GatewayConnected, AccountHint: "…ries", ActorUserID: store.OwnerUserID,
			From: storage.RequestSource{RequestID: "histories", IP: "127.0.0.1"}})
		return err
	}))
	card := h.cardOrderPaid(s, 1, "pi_histories")
	refund := h.refund(s, card["id"].(string), "histories-refund", map[string]any{"amount": 1000, "method": "original", "reason": "recorded"})
	require.Equal(t, http.StatusCreated, refund.Status, string(refund.Raw))
	// CardPayment: a storefront card checkout settled by a signed success.
	checkout, _ := h.cardCheckout(s, 1)
	cardOrder := checkout["order"].(map[string]any)
	paid := h.sendStripe(s.m.storeID, stripeEvent("evt_histories", "payment_intent.succeeded", s.m.storeID, cardOrder["id"].(string),
		"pi_fake_1", int64(cardOrder["total"].(float64))), "whsec_histories")
	require.Equal(t, http.StatusOK, paid.Status, string(paid.Raw))
	// ProductImage and ProductImport.
	product := h.createProduct(s.token, s.m.storeID, map[string]any{"name": "Scarf", "price": 9900})
	image := h.uploadFile(s.token, storePath(s.m.storeID, "/products/"+product["id"].(string)+"/images"), "file", jpegBytes(t, 64, 48), nil)
	require.Equal(t, http.StatusCreated, image.Status, string(image.Raw))
	// Media.
	media := h.uploadMedia(h.pat(s.m, "media:write"), s.m.storeID, "recorded.jpg", jpegBytes(t, 64, 48), nil)
	require.Equal(t, http.StatusCreated, media.Status, string(media.Raw))
	imported := h.importCSV(s.token, s.m.storeID, "sku,name,price\nREC-1,Recorded,1.00\n", nil)
	require.Equal(t, http.StatusOK, imported.Status, string(imported.Raw))
	// RecoveryEmail.
	cartID, _ := h.openCart(s, 1, "reem@example.com")
	h.exec(`UPDATE carts SET last_activity_at = now() - interval '2 hours' WHERE id = $1`, cartID)
	require.Equal(t, http.StatusOK, h.checkouts(s, "").Status)
	sent := h.do(request{method: "POST", path: storePath(s.m.storeID, "/abandoned-checkouts/"+cartID+"/send-recovery-email"), auth: bearer(s.token)})
	require.Equal(t, http.StatusOK, sent.Status, string(sent.Raw))
	// InvitationMail.
	role := h.do(request{method: "POST", path: storePath(s.m.storeID, "/roles"), auth: s.m.auth(),
		body: map[string]any{"name": "Clerk", "scopes": []string{"orders:read"}}})
	require.Equal(t, http.StatusCreated, role.Status, string(role.Raw))
	invited := h.do(request{method: "POST", path: storePath(s.m.storeID, "/staff/invitations"), auth: s.m.auth(),
		body: map[string]any{"email": "clerk@example.com", "role_id": role.data()["id"]}})
	require.Equal(t, http.StatusCreated, invited.Status, string(invited.Raw))
	// AccountMail.
	require.Equal(t, http.StatusAccepted, h.do(request{method: "POST", path: "/api/v1/auth/password-reset",
		body: map[string]any{"email": s.m.email}}).Status)
	// CollectionRebuild: a smart collection's rules changed.
	smart := h.do(request{method: "POST", path: storePath(s.m.storeID, "/collections"), auth: bearer(s.token),
		body: map[string]any{"kind": "smart", "title": map[string]any{"en": "Recorded"}, "rules": rules("all", rule("price", "less_than", 5000))}})
	require.Equal(t, http.StatusCreated, smart.Status, string(smart.Raw))
	rebuilt := h.do(request{method: "PATCH", path: storePath(s.m.storeID, "/collections/"+smart.data()["id"].(string)), auth: bearer(s.token),
		body: map[string]any{"rules": rules("all", rule("price", "greater_than", 5000))}})
	require.Equal(t, http.StatusAccepted, rebuilt.Status, string(rebuilt.Raw))
	// GiftCardMail: a gift card issued and sent to its recipient by email.
	gift := h.do(request{method: "POST", path: storePath(s.m.storeID, "/gift-cards"), auth: bearer(s.token),
		headers: map[string]string{"Idempotency-Key": "histories-gift-card"},
		body:    map[string]any{"initial_value": 5000, "send": "email", "recipient": map[string]any{"name": "Recorded", "email": "gift@example.com"}}})
	require.Equal(t, http.StatusCreated, gift.Status, string(gift.Raw))
	// GiftCardWhatsApp: a gift card sent to its recipient's phone.
	giftByPhone := h.do(request{method: "POST", path: storePath(s.m.storeID, "/gift-cards"), auth: bearer(s.token),
		headers: map[string]string{"Idempotency-Key": "histories-gift-card-whatsapp"},
		body:    map[string]any{"initial_value": 5000, "send": "whatsapp", "recipient": map[string]any{"name": "Recorded", "phone": "+201001234567"}}})
	require.Equal(t, http.StatusCreated, giftByPhone.Status, string(giftByPhone.Raw))
	// SignInCode: a buyer asks for a sign-in code.
	signIn := h.do(request{method: "POST", path: "/api/v1/storefront/" + h.subdomain(s) + "/customer-auth/start",
		body: map[string]any{"phone": "+201001234568"}})
	require.Equal(t, http.StatusAccepted, signIn.Status, string(signIn.Raw))
	// Ping, AbandonmentSweep and PurgeExpired are started directly, as the smoke check and the schedules do.
	run, err := h.temporal.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: workflows.PingWorkflowID(h.queue), TaskQueue: h.queue},
		workflows.Ping, workflows.PingInput{From: "recorder"})
	require.NoError(t, err)
	require.NoError(t, run.Get(ctx, nil))
	run, err = h.temporal.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: workflows.AbandonmentScheduleID + ":" + h.queue, TaskQueue: h.queue},
		workflows.AbandonmentSweep)
	require.NoError(t, err)
	require.NoError(t, run.Get(ctx, nil))
	run, err = h.temporal.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: workflows.PurgeScheduleID + ":" + h.queue, TaskQueue: h.queue},
		workflows.PurgeExpired)
	require.NoError(t, err)
	require.NoError(t, run.Get(ctx, nil))

	// Every type has a completed run on the test's queues; keep the longest
	// history of each (the Dispatch that started a ladder, say).
	query := "(TaskQueue = '" + h.queue + "' OR TaskQueue = '" + workflows.WebhookTaskQueue(h.queue) + "') AND ExecutionStatus = 'Completed'"
	longest := map[string]*historypb.History{}
	complete := func() bool {
		resp, err := h.temporal.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Query: query, PageSize: 1000})
		require.NoError(t, err)
		for _, e := range resp.Executions {
			name := e.GetType().GetName()
			if best := longest[name]; best != nil && int64(len(best.Events)) >= e.GetHistoryLength() {
				continue
			}
			longest[name] = history(ctx, t, h.temporal, e.GetExecution().GetWorkflowId(), e.GetExecution().GetRunId())
		}
		return len(longest) == len(recordedWorkflows)
	}
	for deadline := time.Now().Add(time.Minute); !complete(); time.Sleep(200 * time.Millisecond) {
		require.True(t, time.Now().Before(deadline), "every workflow type completes; missing %v", missingTypes(longest))
	}

	require.NoError(t, os.MkdirAll(dir, 0o755))
	for _, name := range recordedWorkflows {
		raw, err := temporalproto.CustomJSONMarshalOptions{Indent: " "}.Marshal(longest[name])
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, name+".json"), append(raw, '\n'), 0o644))
	}
}

// missingTypes names the recorded workflow types without a completed run.
func missingTypes(longest map[string]*historypb.History) []string {
	var missing []string
	for _, name := range recordedWorkflows {
		if longest[name] == nil {
			missing = append(missing, name)
		}
	}
	return missing
}

// history reads one execution's whole history.
func history(ctx context.Context, t *testing.T, c client.Client, workflowID, runID string) *historypb.History {
	iter := c.GetWorkflowHistory(ctx, workflowID, runID, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	out := &historypb.History{}
	for iter.HasNext() {
		event, err := iter.Next()
		require.NoError(t, err)
		out.Events = append(out.Events, event)
	}
	return out
}
