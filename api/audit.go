package api

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/google/uuid"
	"github.com/merchantsvc/svc/storage"
)

// storeRoutePrefix is where the store-scoped routes live; audited routes
// are named relative to it.
const storeRoutePrefix = "/api/v1/stores/{store_id}"

// auditedRoute names what a store-scoped write does, for its audit entry:
// the action, the resource's type and the path parameter holding its id
// (empty: the id of the resource the answer shows, for a create).
type auditedRoute struct {
	action, resource, idParam string
}

// auditedRoutes is every state-changing store route (decisions §16). A
// write route missing here fails TestAuditLogWalksEveryWriteRoute.
var auditedRoutes = map[string]auditedRoute{
	"POST /access-tokens":                                            {"access_token.created", "access_token", ""},
	"DELETE /access-tokens/{token_id}":                               {"access_token.revoked", "access_token", "token_id"},
	"POST /roles":                                                    {"role.created", "role", ""},
	"PATCH /roles/{role_id}":                                         {"role.updated", "role", "role_id"},
	"DELETE /roles/{role_id}":                                        {"role.deleted", "role", "role_id"},
	"PATCH /staff/{user_id}":                                         {"staff.role_changed", "staff", "user_id"},
	"DELETE /staff/{user_id}":                                        {"staff.removed", "staff", "user_id"},
	"POST /staff/invitations":                                        {"invitation.created", "invitation", ""},
	"POST /staff/invitations/{invitation_id}/resend":                 {"invitation.resent", "invitation", "invitation_id"},
	"DELETE /staff/invitations/{invitation_id}":                      {"invitation.revoked", "invitation", "invitation_id"},
	"DELETE /apps/{app_id}":                                          {"app.uninstalled", "app", "app_id"},
	"PATCH /settings":                                                {"settings.updated", "settings", ""},
	"PUT /settings/tax":                                              {"tax_settings.updated", "tax_settings", ""},
	"POST /invoices/{invoice_id}/retry":                              {"invoice.retried", "invoice", "invoice_id"},
	"PUT /payment-gateways/{provider}":                               {"payment_gateway.connected", "payment_gateway", "provider"},
	"DELETE /payment-gateways/{provider}":                            {"payment_gateway.disconnected", "payment_gateway", "provider"},
	"PUT /messaging/channels/{channel}":                              {"messaging_channel.connected", "messaging_channel", "channel"},
	"DELETE /messaging/channels/{channel}":                           {"messaging_channel.disconnected", "messaging_channel", "channel"},
	"POST /messaging/templates":                                      {"message_template.created", "message_template", ""},
	"DELETE /messaging/templates/{template_id}":                      {"message_template.deleted", "message_template", "template_id"},
	"POST /locations":                                                {"location.created", "location", ""},
	"PATCH /locations/{location_id}":                                 {"location.updated", "location", "location_id"},
	"DELETE /locations/{location_id}":                                {"location.deleted", "location", "location_id"},
	"POST /inventory/adjustments":                                    {"inventory.adjusted", "inventory", ""},
	"POST /webhooks":                                                 {"webhook.created", "webhook", ""},
	"PATCH /webhooks/{webhook_id}":                                   {"webhook.updated", "webhook", "webhook_id"},
	"DELETE /webhooks/{webhook_id}":                                  {"webhook.deleted", "webhook", "webhook_id"},
	"POST /webhooks/{webhook_id}/test":                               {"webhook.tested", "webhook", "webhook_id"},
	"POST /webhooks/{webhook_id}/rotate-secret":                      {"webhook.secret_rotated", "webhook", "webhook_id"},
	"POST /webhooks/{webhook_id}/deliveries/{delivery_id}/redeliver": {"webhook.redelivered", "webhook", "webhook_id"},
	"POST /webhooks/{webhook_id}/recover":                            {"webhook.recovered", "webhook", "webhook_id"},
	"POST /customers":                                                {"customer.created", "customer", ""},
	"PATCH /customers/{customer_id}":                                 {"customer.updated", "customer", "customer_id"},
	"DELETE /customers/{customer_id}":                                {"customer.deleted", "customer", "customer_id"},
	"POST /customers/{customer_id}/merge":                            {"customer.merged", "customer", "customer_id"},
	"POST /customers/{customer_id}/erase":                            {"customer.erased", "customer", "customer_id"},
	"POST /orders":                                                   {"order.created", "order", ""},
	"POST /orders/drafts":                                            {"order.draft_created", "order", ""},
	"POST /orders/autopilot-exceptions/{order_id}/resolve":           {"order.autopilot_resolved", "order", "order_id"},
	"POST /orders/bulk-status":                                       {"order.bulk_status_changed", "order", ""},
	"PATCH /orders/{order_id}":                                       {"order.updated", "order", "order_id"},
	"POST /orders/{order_id}/convert":                                {"order.draft_converted", "order", "order_id"},
	"POST /orders/{order_id}/resend-email":                           {"order.email_resent", "order", "order_id"},
	"POST /orders/{order_id}/resend-chat-message":                    {"order.chat_message_resent", "order", "order_id"},
	"DELETE /orders/{order_id}":                                      {"order.cancelled", "order", "order_id"},
	"PATCH /orders/{order_id}/status":                                {"order.status_changed", "order", "order_id"},
	"POST /orders/{order_id}/comments":                               {"order.commented", "order", "order_id"},
	"POST /orders/{order_id}/mark-paid":                              {"order.marked_paid", "order", "order_id"},
	"POST /orders/{order_id}/unmark-paid":                            {"order.unmarked_paid", "order", "order_id"},
	"POST /orders/{order_id}/partial-acceptance":                     {"order.partially_accepted", "order", "order_id"},
	"POST /orders/{order_id}/payments":                               {"order.payment_recorded", "order", "order_id"},
	"POST /orders/{order_id}/shipments":                              {"shipment.created", "shipment", ""},
	"POST /orders/{order_id}/returns":                                {"return.requested", "return", ""},
	"POST /orders/{order_id}/refunds":                                {"refund.created", "refund", ""},
	"PATCH /shipments/{shipment_id}":                                 {"shipment.updated", "shipment", "shipment_id"},
	"POST /shipments/{shipment_id}/events":                           {"shipment.event_recorded", "shipment", "shipment_id"},
	"POST /shipments/{shipment_id}/cancel":                           {"shipment.cancelled", "shipment", "shipment_id"},
	"POST /shipments/{shipment_id}/waybill":                          {"shipment.waybill_requested", "shipment", "shipment_id"},
	"POST /returns/{return_id}/receive":                              {"return.received", "return", "return_id"},
	"POST /returns/{return_id}/approve":                              {"return.approved", "return", "return_id"},
	"POST /returns/{return_id}/decline":                              {"return.declined", "return", "return_id"},
	"POST /returns/{return_id}/cancel":                               {"return.cancelled", "return", "return_id"},
	"POST /shipping/zones":                                           {"shipping_zone.created", "shipping_zone", ""},
	"PATCH /shipping/zones/{zone_id}":                                {"shipping_zone.updated", "shipping_zone", "zone_id"},
	"DELETE /shipping/zones/{zone_id}":                               {"shipping_zone.deleted", "shipping_zone", "zone_id"},
	"POST /shipping/zones/{zone_id}/rates":                           {"shipping_rate.created", "shipping_rate", ""},
	"PATCH /shipping/zones/{zone_id}/rates/{rate_id}":                {"shipping_rate.updated", "shipping_rate", "rate_id"},
	"DELETE /shipping/zones/{zone_id}/rates/{rate_id}":               {"shipping_rate.deleted", "shipping_rate", "rate_id"},
	"POST /discounts":                                                {"discount.created", "discount", ""},
	"PATCH /discounts/{discount_id}":                                 {"discount.updated", "discount", "discount_id"},
	"DELETE /discounts/{discount_id}":                                {"discount.deleted", "discount", "discount_id"},
	"POST /refunds/{refund_id}/settle":                               {"refund.settled", "refund", "refund_id"},
	"POST /cod-remittances":                                          {"cod_remittance.created", "cod_remittance", ""},
	"POST /carrier-accounts":                                         {"carrier_account.created", "carrier_account", ""},
	"DELETE /carrier-accounts/{carrier_account_id}":                  {"carrier_account.deleted", "carrier_account", "carrier_account_id"},
	"POST /carrier-accounts/{carrier_account_id}/rotate-secret":      {"carrier_account.secret_rotated", "carrier_account", "carrier_account_id"},
	"POST /abandoned-checkouts/{checkout_id}/send-recovery-email":    {"checkout.recovery_email_sent", "checkout", "checkout_id"},
	"POST /abandoned-checkouts/{checkout_id}/mark-recovered":         {"checkout.marked_recovered", "checkout", "checkout_id"},
	"POST /payment-proofs/{proof_id}/approve":                        {"payment_proof.approved", "payment_proof", "proof_id"},
	"POST /payment-proofs/{proof_id}/reject":                         {"payment_proof.rejected", "payment_proof", "proof_id"},
	"POST /payments/{proof_id}/void":                                 {"payment.voided", "payment_proof", "proof_id"},
	"PUT /themes/v3/customization":                                   {"theme.draft_saved", "theme", ""},
	"POST /themes/v3/customization/publish":                          {"theme.published", "theme", ""},
	"POST /themes/v3/customization/switch":                           {"theme.switched", "theme", ""},
	"POST /themes/v3/versions/{version_id}/restore":                  {"theme.version_restored", "theme_version", "version_id"},
	"POST /menus":                                                    {"menu.created", "menu", ""},
	"PATCH /menus/{menu_id}":                                         {"menu.updated", "menu", "menu_id"},
	"DELETE /menus/{menu_id}":                                        {"menu.deleted", "menu", "menu_id"},
	"POST /redirects":                                                {"redirect.created", "redirect", ""},
	"DELETE /redirects/{redirect_id}":                                {"redirect.deleted", "redirect", "redirect_id"},
	"POST /media":                                                    {"media.uploaded", "media", ""},
	"PATCH /media/{media_id}":                                        {"media.updated", "media", "media_id"},
	"DELETE /media/{media_id}":                                       {"media.deleted", "media", "media_id"},
	"POST /pages":                                                    {"page.created", "page", ""},
	"PATCH /pages/{page_id}":                                         {"page.updated", "page", "page_id"},
	"DELETE /pages/{page_id}":                                        {"page.deleted", "page", "page_id"},
	"POST /blogs":                                                    {"blog.created", "blog", ""},
	"PATCH /blogs/{blog_id}":                                         {"blog.updated", "blog", "blog_id"},
	"DELETE /blogs/{blog_id}":                                        {"blog.deleted", "blog", "blog_id"},
	"POST /blogs/{blog_id}/articles":                                 {"article.created", "article", ""},
	"PATCH /blogs/{blog_id}/articles/{article_id}":                   {"article.updated", "article", "article_id"},
	"DELETE /blogs/{blog_id}/articles/{article_id}":                  {"article.deleted", "article", "article_id"},
	"POST /products":                                                 {"product.created", "product", ""},
	"POST /products/import":                                          {"product.import_started", "import", ""},
	"PATCH /products/{product_id}":                                   {"product.updated", "product", "product_id"},
	"DELETE /products/{product_id}":                                  {"product.deleted", "product", "product_id"},
	"POST /products/{product_id}/images":                             {"product.image_uploaded", "product", "product_id"},
	"DELETE /products/{product_id}/images":                           {"product.image_deleted", "product", "product_id"},
	"PATCH /products/{product_id}/images/alt":                        {"product.image_alt_set", "product", "product_id"},
	"POST /products/{product_id}/variants":                           {"variant.created", "variant", ""},
	"PATCH /products/{product_id}/variants/{variant_id}":             {"variant.updated", "variant", "variant_id"},
	"DELETE /products/{product_id}/variants/{variant_id}":            {"variant.deleted", "variant", "variant_id"},
	"POST /categories":                                               {"category.created", "category", ""},
	"PATCH /categories/{category_id}":                                {"category.updated", "category", "category_id"},
	"DELETE /categories/{category_id}":                               {"category.deleted", "category", "category_id"},
	"POST /collections":                                              {"collection.created", "collection", ""},
	"PATCH /collections/{collection_id}":                             {"collection.updated", "collection", "collection_id"},
	"DELETE /collections/{collection_id}":                            {"collection.deleted", "collection", "collection_id"},
	"POST /collections/{collection_id}/products":                     {"collection.products_added", "collection", "collection_id"},
	"DELETE /collections/{collection_id}/products":                   {"collection.products_removed", "collection", "collection_id"},
	"PUT /collections/{collection_id}/products/order":                {"collection.products_ordered", "collection", "collection_id"},
	"POST /gift-cards":                                               {"gift_card.created", "gift_card", ""},
	"PATCH /gift-cards/{gift_card_id}":                               {"gift_card.updated", "gift_card", "gift_card_id"},
	"POST /gift-cards/{gift_card_id}/adjustments":                    {"gift_card.adjusted", "gift_card", "gift_card_id"},
	"POST /gift-cards/{gift_card_id}/disable":                        {"gift_card.disabled", "gift_card", "gift_card_id"},
	"POST /gift-cards/{gift_card_id}/send":                           {"gift_card.sent", "gift_card", "gift_card_id"},
}

// readOnlyPosts are store routes that POST without changing anything.
var readOnlyPosts = []string{"POST /orders/preview", "POST /shipping/quote"}

// auditedRouteKey is the table key of a request's matched route.
func auditedRouteKey(method, pattern string) string {
	return method + " " + strings.TrimSuffix(strings.TrimPrefix(pattern, storeRoutePrefix), "/")
}

// requestSource is where a request came from, for the audit log.
func (s *Server) requestSource(r *http.Request) storage.RequestSource {
	agent := r.UserAgent()
	if len(agent) > 512 {
		agent = agent[:512]
	}
	return storage.RequestSource{RequestID: requestID(r.Context()), IP: clientAddress(r, s.cfg.TrustedProxies), UserAgent: agent}
}

// auditKey carries a request's *auditRecorder.
type auditKeyType struct{}

var auditKey auditKeyType

// audit records a state-changing store request in the audit log: its entry
// is written by the first transaction the request commits, as that
// transaction's last statement (storage.CommitHook), so a rolled-back
// change leaves none and a committed one exactly one.
func (s *Server) audit(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !slices.Contains(writeMethods, r.Method) {
			next.ServeHTTP(w, r)
			return
		}
		rec := &auditRecorder{source: s.requestSource(r), storeID: storeIDFrom(r.Context()),
			actor: auditActor(principalFrom(r.Context())), method: r.Method}
		ctx := context.WithValue(storage.WithCommitHook(r.Context(), rec), auditKey, rec)
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

// commitAuditAlone writes the request's audit entry in a transaction of its
// own, for a change that is not a Postgres write of the request (a
// workflow it ran); a request whose entry is written already writes none.
func (s *Server) commitAuditAlone(ctx context.Context) error {
	return s.db.InTx(ctx, func(*storage.Tx) error { return nil })
}

// auditActor is who a request acts as, in audit terms.
func auditActor(p *principal) storage.AuditActor {
	switch {
	case p == nil:
		return storage.AuditActor{Type: "system"}
	case p.token != nil && p.token.AppID != nil:
		return storage.AuditActor{Type: "app", ID: p.token.AppID}
	case p.token != nil:
		id := p.token.ID
		return storage.AuditActor{Type: "token", ID: &id, Name: p.token.Name, UserID: p.token.UserID}
	default:
		id := p.userID
		return storage.AuditActor{Type: "user", ID: &id, UserID: &id}
	}
}

// auditRecorder is one request's audit entry in the making.
type auditRecorder struct {
	source  storage.RequestSource
	storeID uuid.UUID
	actor   storage.AuditActor
	method  string

	mu      sync.Mutex
	before  []byte                         // the resource as it was, where the handler read it
	answer  []byte                         // the answer the change commits with
	notes   map[string]storage.AuditChange // what the change did beyond its answer (auditNote)
	pending bool                           // written in a transaction not yet committed
	written bool
}

// BeforeCommit writes the entry into the request's first committing
// transaction.
func (a *auditRecorder) BeforeCommit(ctx context.Context, tx *storage.Tx) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.written {
		return nil
	}
	route := auditedRouteKey(a.method, chi.RouteContext(ctx).RoutePattern())
	if slices.Contains(readOnlyPosts, route) {
		return nil
	}
	e := a.entry(ctx, route)
	if err := tx.RecordAudit(ctx, e); err != nil {
		return err
	}
	a.pending = true
	return nil
}

// Committed marks the entry written once its transaction committed.
func (a *auditRecorder) Committed() {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.pending {
		a.written, a.pending = true, false
	}
}

// entry is the audit entry of the request on route.
func (a *auditRecorder) entry(ctx context.Context, route string) storage.AuditEntry {
	e := storage.AuditEntry{StoreID: a.storeID, Actor: a.actor, RequestID: a.source.RequestID,
		IP: a.source.IP, UserAgent: a.source.UserAgent}
	known, ok := auditedRoutes[route]
	if !ok { // TestAuditedRoutesCoverEveryStoreWrite keeps this from happening
		known = auditedRoute{action: "unknown." + strings.ToLower(a.method), resource: "unknown"}
	}
	e.Action, e.ResourceType = known.action, known.resource
	answer := answerObject(a.answer)
	if known.idParam != "" {
		e.ResourceID = chi.RouteContext(ctx).URLParam(known.idParam)
	} else if id, ok := answer["id"].(string); ok {
		e.ResourceID = id
	}
	e.ResourceLabel = resourceLabel(answer)
	if a.before != nil {
		e.Changes = fieldChanges(answerObject(a.before), answer)
	}
	for field, change := range a.notes {
		if e.Changes == nil {
			e.Changes = map[string]storage.AuditChange{}
		}
		e.Changes[field] = change
	}
	return e
}

// answerObject is the resource a JSON answer shows: its `data` object, or
// nil when the answer is not one.
func answerObject(body []byte) map[string]any {
	if body == nil {
		return nil
	}
	var envelope struct {
		Data map[string]any `json:"data"`
	}
	if json.Unmarshal(body, &envelope) != nil {
		return nil
	}
	return envelope.Data
}

// labelFields name a resource for people, in order of preference.
var labelFields = []string{"order_number", "code", "name", "title", "email", "number", "url"}

func resourceLabel(v map[string]any) string {
	for _, f := range labelFields {
		if s, ok := v[f].(string); ok && s != "" {
			return s
		}
	}
	return ""
}

// unauditedFields change on every write or hold what never belongs in the
// log.
var unauditedFields = []string{"updated_at", "secret", "signing_secret", "token", "password"}

// fieldChanges is {field: {from, to}} for the top-level fields whose JSON
// differs between the resource before and after.
func fieldChanges(before, after map[string]any) map[string]storage.AuditChange {
	if before == nil || after == nil {
		return nil
	}
	out := map[string]storage.AuditChange{}
	for field, to := range after {
		if slices.Contains(unauditedFields, field) {
			continue
		}
		from, _ := json.Marshal(before[field])
		now, _ := json.Marshal(to)
		if !bytes.Equal(from, now) {
			out[field] = storage.AuditChange{From: from, To: now}
		}
	}
	return out
}

// noteAnswer gives the request's audit entry the answer its change commits
// with (writeTx calls it inside the transaction).
func noteAnswer(ctx context.Context, body []byte) {
	if a, ok := ctx.Value(auditKey).(*auditRecorder); ok {
		a.mu.Lock()
		a.answer = body
		a.mu.Unlock()
	}
}

// auditNote records in the request's audit entry what its change removed
// beyond the resource its answer shows (the menu items a product delete
// took out): field goes from removed to null.
func auditNote(ctx context.Context, field string, removed any) {
	a, found := ctx.Value(auditKey).(*auditRecorder)
	if !found {
		return
	}
	from, err := json.Marshal(removed)
	if err != nil {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.notes == nil {
		a.notes = map[string]storage.AuditChange{}
	}
	a.notes[field] = storage.AuditChange{From: from, To: jsonNull}
}

// auditBefore gives the request's audit entry the resource as it was
// before the change, in its answer's shape, so the entry lists the fields
// that changed.
func auditBefore(ctx context.Context, view any) {
	a, found := ctx.Value(auditKey).(*auditRecorder)
	if !found {
		return
	}
	body, err := encodeBody(ok(view))
	if err != nil {
		return
	}
	a.mu.Lock()
	a.before = body
	a.mu.Unlock()
}

// jsonNull is the JSON null, a change's `from` for what did not exist.
var jsonNull = json.RawMessage("null")

func jsonString(s string) json.RawMessage {
	b, _ := json.Marshal(s)
	return b
}

// auditEntryResponse is an audit entry as the API shows it.
type auditEntryResponse struct {
	ID         uuid.UUID                      `json:"id"`
	OccurredAt time.Time                      `json:"occurred_at"`
	Actor      auditActorResponse             `json:"actor"`
	Action     string                         `json:"action"`
	Resource   auditResourceResponse          `json:"resource"`
	Changes    map[string]storage.AuditChange `json:"changes,omitempty"`
	RequestID  string                         `json:"request_id"`
	IP         string                         `json:"ip"`
	UserAgent  string                         `json:"user_agent"`
}

type auditActorResponse struct {
	Type   string     `json:"type"`
	ID     *uuid.UUID `json:"id"`
	Name   string     `json:"name"`
	UserID *uuid.UUID `json:"user_id,omitempty"`
}

type auditResourceResponse struct {
	Type  string `json:"type"`
	ID    string `json:"id"`
	Label string `json:"label"`
}

func newAuditEntryResponse(e storage.AuditEntry) auditEntryResponse {
	return auditEntryResponse{ID: e.ID, OccurredAt: e.OccurredAt.UTC(),
		Actor:    auditActorResponse{Type: e.Actor.Type, ID: e.Actor.ID, Name: e.Actor.Name, UserID: e.Actor.UserID},
		Action:   e.Action,
		Resource: auditResourceResponse{Type: e.ResourceType, ID: e.ResourceID, Label: e.ResourceLabel},
		Changes:  e.Changes, RequestID: e.RequestID, IP: e.IP, UserAgent: e.UserAgent}
}

var auditActorTypes = []string{"user", "token", "app", "system"}

// handleAuditLog serves GET /stores/{store_id}/audit-log (owner only):
// entries newest first, or with format=csv every matching entry as a CSV
// attachment.
func (s *Server) handleAuditLog() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		q := newQueryParser(r)
		page, limit := q.page(50)
		f := storage.AuditFilter{ActorType: q.enum("actor_type", auditActorTypes, ""), ActorID: q.uuid("actor_id"),
			From: q.dateTime("date_from"), To: q.dateTime("date_to"), Page: storage.Page{Page: page, Limit: limit}}
		for _, filter := range []struct {
			name string
			into *string
		}{{"action", &f.Action}, {"resource_type", &f.ResourceType}, {"resource_id", &f.ResourceID}, {"request_id", &f.RequestID}} {
			name, into := filter.name, filter.into
			if v := q.str(name); v != nil {
				if len(*v) > 200 {
					q.Add(name, "too_long", "must be at most 200 characters")
				}
				*into = *v
			}
		}
		if f.From != nil && f.To != nil && f.From.After(*f.To) {
			q.Add("date_from", "out_of_range", "must not be after date_to")
		}
		format := q.enum("format", []string{"json", "csv"}, "json")
		lang := q.enum("lang", []string{"en", "ar"}, "en")
		if err := q.err(); err != nil {
			return err
		}
		storeID := storeIDFrom(r.Context())
		if format == "csv" {
			return s.writeAuditCSV(w, r, storeID, f, lang)
		}
		list, total, err := s.db.FindAuditEntries(r.Context(), storeID, f)
		if err != nil {
			return err
		}
		respond(w, http.StatusOK, newList(views(list, newAuditEntryResponse), page, limit, total))
		return nil
	}
}

var auditCSVHeaders = map[string][]string{
	"en": {"occurred_at", "actor_type", "actor_id", "actor_name", "action", "resource_type", "resource_id",
		"resource_label", "changes", "request_id", "ip", "user_agent"},
	"ar": {"الوقت", "نوع المنفذ", "معرّف المنفذ", "اسم المنفذ", "الإجراء", "نوع المورد", "معرّف المورد",
		"وصف المورد", "التغييرات", "معرّف الطلب", "عنوان IP", "المتصفح"},
}

// writeAuditCSV streams every entry the filter matches, a page at a time.
func (s *Server) writeAuditCSV(w http.ResponseWriter, r *http.Request, storeID uuid.UUID, f storage.AuditFilter, lang string) error {
	f.Page = storage.Page{Page: 1, Limit: 500}
	list, _, err := s.db.FindAuditEntries(r.Context(), storeID, f)
	if err != nil {
		return err
	}
	out := csvAttachment(w, fmt.Sprintf("audit_log_%s.csv", time.Now().UTC().Format("20060102")), auditCSVHeaders[lang])
	for len(list) > 0 {
		for _, e := range list {
			actorID := ""
			if e.Actor.ID != nil {
				actorID = e.Actor.ID.String()
			}
			changes := ""
			if len(e.Changes) > 0 {
				b, _ := json.Marshal(e.Changes)
				changes = string(b)
			}
			_ = out.Write([]string{e.OccurredAt.UTC().Format(time.RFC3339), e.Actor.Type, actorID,
				storage.NeutralizeCSVCell(e.Actor.Name), e.Action, e.ResourceType, storage.NeutralizeCSVCell(e.ResourceID),
				storage.NeutralizeCSVCell(e.ResourceLabel), storage.NeutralizeCSVCell(changes), storage.NeutralizeCSVCell(e.RequestID),
				e.IP, storage.NeutralizeCSVCell(e.UserAgent)})
		}
		if len(list) < f.Limit {
			break
		}
		f.Page.Page++
		if list, _, err = s.db.FindAuditEntries(r.Context(), storeID, f); err != nil {
			s.log.ErrorContext(r.Context(), "audit log export", slog.Any("error", err))
			break
		}
	}
	out.Flush()
	return out.Error()
}

// AuditedRoutes lists every audited store route ("METHOD /path" under
// /api/v1/stores/{store_id}) with its action, and the store routes that
// POST without changing anything, for the tests that hold the audit log to
// every write route.
func AuditedRoutes() (actions map[string]string, readOnly []string) {
	actions = make(map[string]string, len(auditedRoutes))
	for route, a := range auditedRoutes {
		actions[route] = a.action
	}
	return actions, slices.Clone(readOnlyPosts)
}
