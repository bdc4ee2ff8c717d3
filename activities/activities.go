// Package activities holds the side effects workflows call: Postgres, the
// object store, HTTP deliveries, mail. Permanent failures are returned as
// non-retryable application errors.
package activities

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"time"

	"github.com/merchantsvc/svc/activities/einvoice"
	"github.com/merchantsvc/svc/activities/waybill"
	"github.com/merchantsvc/svc/internal/metrics"
	"github.com/merchantsvc/svc/storage"
	"github.com/merchantsvc/svc/storage/blob"
)

// Activities holds the dependencies every activity shares.
type Activities struct {
	DB   *storage.DB
	Blob *blob.Store
	// HTTPClient sends webhook deliveries (webhook.Guard.NewClient).
	HTTPClient *http.Client
	// BaseURL is the API's public address, for the media URLs of images.
	BaseURL string
	// MerchantURL is the merchant web application, for staff invitation
	// links (default BaseURL).
	MerchantURL string
	// ImportBatchSize is how many CSV rows one transaction applies (default 1000).
	ImportBatchSize int
	// Mailer sends customer emails; Chat sends chat-app messages.
	Mailer Mailer
	Chat   ChatProvider
	// EInvoices is the tax authority's e-invoicing service.
	EInvoices einvoice.Authority
	// ZATCAAPIBase is ZATCA's reporting and clearance API (SVC_ZATCA_API_BASE;
	// the local double in `make dev` and the tests).
	ZATCAAPIBase string
	// ContactInterval is how long after one automatic order confirmation
	// the same email or phone gets no other from the same store (default
	// 10 minutes; docs/guide/limits.md, "Limits against abuse").
	ContactInterval time.Duration
	// Waybills prints shipments' waybills (headless Chromium); nil fails
	// every render.
	Waybills *waybill.Printer
	// Secrets opens the stores' sealed gateway secrets (SVC_SECRETS_KEY);
	// nil: no gateway can be reached.
	Secrets *storage.Sealer
	// StripeAPIBase is Stripe's API address (empty: api.stripe.com;
	// stripe-mock or a test double on loopback in tests).
	StripeAPIBase string
	// WhatsAppAPIBase is the WhatsApp Cloud API's Graph address stores'
	// channels send through (empty: Meta's; the local double in tests).
	WhatsAppAPIBase string
	// Metrics counts deliveries and import rows (nil: not counted).
	Metrics *metrics.Worker
}

// CheckDatabaseInput asks for nothing: the smoke check has no parameters.
type CheckDatabaseInput struct{}

// CheckDatabaseResult is the database's clock.
type CheckDatabaseResult struct {
	Now time.Time
}

// UnmarshalJSON also reads the bare time that workers before this shape
// recorded, so their histories still replay.
func (r *CheckDatabaseResult) UnmarshalJSON(b []byte) error {
	type current CheckDatabaseResult
	return decodeLegacy(b, (*current)(r), &r.Now)
}

// decodeLegacy decodes a result recorded in today's shape (a JSON object)
// into current, and one recorded before results were structs (a bare value)
// into legacy.
func decodeLegacy(b []byte, current, legacy any) error {
	if trimmed := bytes.TrimSpace(b); len(trimmed) > 0 && trimmed[0] == '{' {
		return json.Unmarshal(b, current)
	}
	return json.Unmarshal(b, legacy)
}

// CheckDatabase reads the database clock; the smoke workflow uses it to prove
// a worker reaches Postgres.
func (a *Activities) CheckDatabase(ctx context.Context, _ CheckDatabaseInput) (CheckDatabaseResult, error) {
	now, err := a.DB.Now(ctx)
	return CheckDatabaseResult{Now: now}, err
}
