package workflows

import (
	"fmt"

	"github.com/google/uuid"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
)

// The custom search attributes every workflow of the service carries, so an
// operator finds a store's work in the Temporal UI with a query such as
// StoreId = "…" AND ExecutionStatus = "Running".
var (
	StoreIDAttribute     = temporal.NewSearchAttributeKeyKeyword("StoreId")
	ResourceIDAttribute  = temporal.NewSearchAttributeKeyKeyword("ResourceId")
	OrderNumberAttribute = temporal.NewSearchAttributeKeyKeyword("OrderNumber")
	WorkKindAttribute    = temporal.NewSearchAttributeKeyKeyword("WorkKind")
)

// SearchAttributeTypes are the attributes above with their types: what
// `svc temporal-setup`, `svc dev` and the test environments add to a
// namespace (temporalsetup.RegisterSearchAttributes) before a workflow
// carries them.
var SearchAttributeTypes = map[string]enumspb.IndexedValueType{
	StoreIDAttribute.GetName():     enumspb.INDEXED_VALUE_TYPE_KEYWORD,
	ResourceIDAttribute.GetName():  enumspb.INDEXED_VALUE_TYPE_KEYWORD,
	OrderNumberAttribute.GetName(): enumspb.INDEXED_VALUE_TYPE_KEYWORD,
	WorkKindAttribute.GetName():    enumspb.INDEXED_VALUE_TYPE_KEYWORD,
}

// WorkKind names what a workflow does; it is the WorkKind search attribute.
type WorkKind string

const (
	KindOrderPlaced       WorkKind = "order-placed"
	KindOrderMessage      WorkKind = "order-message"
	KindPaymentProof      WorkKind = "payment-proof"
	KindEInvoiceSync      WorkKind = "einvoice-sync"
	KindWebhookDispatch   WorkKind = "webhook-dispatch"
	KindWebhookDelivery   WorkKind = "webhook-delivery"
	KindWebhookTest       WorkKind = "webhook-test"
	KindProductImport     WorkKind = "product-import"
	KindProductImage      WorkKind = "product-image"
	KindMedia             WorkKind = "media"
	KindRecoveryEmail     WorkKind = "recovery-email"
	KindAbandonment       WorkKind = "abandonment-sweep"
	KindPurge             WorkKind = "purge-expired"
	KindShipmentWaybill   WorkKind = "shipment-waybill"
	KindRefund            WorkKind = "refund"
	KindInvitationMail    WorkKind = "invitation-mail"
	KindAccountMail       WorkKind = "account-mail"
	KindCardPayment       WorkKind = "card-payment"
	KindGatewayChange     WorkKind = "gateway-change-mail"
	KindCollectionRebuild WorkKind = "collection-rebuild"
	KindGiftCardMail      WorkKind = "gift-card-mail"
	KindGiftCardWhatsApp  WorkKind = "gift-card-whatsapp"
	KindSignInCode        WorkKind = "customer-auth-code"
)

// Work describes one workflow to an operator: its search attributes and
// the single line the Temporal UI lists it with.
type Work struct {
	Kind        WorkKind
	StoreID     uuid.UUID // zero for work across stores (the schedules)
	ResourceID  uuid.UUID // the order, import, image, delivery, batch or invoice
	OrderNumber string
	Summary     string
}

// SearchAttributes are the typed attributes of w; empty values are left out.
func (w Work) SearchAttributes() temporal.SearchAttributes {
	set := []temporal.SearchAttributeUpdate{WorkKindAttribute.ValueSet(string(w.Kind))}
	if w.StoreID != uuid.Nil {
		set = append(set, StoreIDAttribute.ValueSet(w.StoreID.String()))
	}
	if w.ResourceID != uuid.Nil {
		set = append(set, ResourceIDAttribute.ValueSet(w.ResourceID.String()))
	}
	if w.OrderNumber != "" {
		set = append(set, OrderNumberAttribute.ValueSet(w.OrderNumber))
	}
	return temporal.NewSearchAttributes(set...)
}

// StartOptions are the options to start w's workflow under id on queue.
func (w Work) StartOptions(id, queue string) client.StartWorkflowOptions {
	return client.StartWorkflowOptions{ID: id, TaskQueue: queue, TypedSearchAttributes: w.SearchAttributes(), StaticSummary: w.Summary}
}

// childOptions are the options of w's workflow started by another.
func (w Work) childOptions(id string) workflow.ChildWorkflowOptions {
	return workflow.ChildWorkflowOptions{WorkflowID: id, TypedSearchAttributes: w.SearchAttributes(), StaticSummary: w.Summary}
}

// StoreLabel is how summaries name a store: its subdomain, or the start of
// its id when the subdomain is not at hand.
func StoreLabel(subdomain string, storeID uuid.UUID) string {
	if subdomain != "" {
		return "store " + subdomain
	}
	return "store " + storeID.String()[:8]
}

// ImportSummary is a product import's line in the Temporal UI.
func ImportSummary(store string, bytes int, dryRun bool) string {
	what := "product import"
	if dryRun {
		what = "product import (dry run)"
	}
	return fmt.Sprintf("%s · %.1f MB CSV · %s", what, float64(bytes)/(1<<20), store)
}

// DeliveryWork is a webhook delivery's retry ladder from attempt from on.
func DeliveryWork(storeID, deliveryID uuid.UUID, event string, from int, store string) Work {
	what := "webhook delivery"
	if event != "" {
		what = event + " delivery"
	}
	return Work{Kind: KindWebhookDelivery, StoreID: storeID, ResourceID: deliveryID,
		Summary: fmt.Sprintf("%s · attempts from %d · %s", what, from, store)}
}
