package activities

import (
	"context"
	"errors"
	"time"

	"go.temporal.io/sdk/temporal"

	"github.com/google/uuid"
	"github.com/merchantsvc/svc/activities/einvoice"
	"github.com/merchantsvc/svc/activities/imaging"
	"github.com/merchantsvc/svc/storage"
)

// ProofHash is the hash of a proof and the duplicate gate's verdict.
type ProofHash struct {
	PerceptualHash     uint64
	DuplicateSuspected bool
}

// HashProofInput names a proof and where its image is.
type HashProofInput struct {
	StoreID  uuid.UUID
	ProofID  uuid.UUID
	ImageKey string
}

// HashPaymentProof computes a proof's 64-bit perceptual hash from its image
// and runs the duplicate gate. An image that cannot be decoded fails for
// good: the proof keeps no hash and its similar list stays empty.
func (a *Activities) HashPaymentProof(ctx context.Context, in HashProofInput) (ProofHash, error) {
	data, err := a.Blob.Get(ctx, in.ImageKey)
	if err != nil {
		return ProofHash{}, err
	}
	hash, err := imaging.PerceptualHash(data)
	if errors.Is(err, imaging.ErrUnreadable) {
		return ProofHash{}, temporal.NewNonRetryableApplicationError("the proof image cannot be decoded", "UNREADABLE_IMAGE", err)
	}
	if err != nil {
		return ProofHash{}, err
	}
	p, err := a.DB.RecordProofHash(ctx, in.StoreID, in.ProofID, hash)
	if err != nil {
		return ProofHash{}, err
	}
	return ProofHash{PerceptualHash: hash, DuplicateSuspected: p.DuplicateSuspected}, nil
}

// SyncEInvoice tells the authority about an invoice or note (decisions
// §27): a pending one is reported; a credit note waits for the invoice it
// credits. It acts on the row as it is now, so a repeated or late run does
// nothing twice. A refusal by the authority is kept on the document and not
// retried.
func (a *Activities) SyncEInvoice(ctx context.Context, in SyncEInvoiceInput) (SyncEInvoiceResult, error) {
	status, err := a.syncInvoice(ctx, storage.InvoiceRef{StoreID: in.StoreID, ID: in.InvoiceID})
	return SyncEInvoiceResult{Status: string(status)}, err
}

// SyncEInvoiceInput names an invoice.
type SyncEInvoiceInput struct {
	StoreID   uuid.UUID
	InvoiceID uuid.UUID
}

// SyncEInvoiceResult is the invoice's status after the sync.
type SyncEInvoiceResult struct {
	Status string
}

// UnmarshalJSON also reads the bare status of histories recorded before
// (a sync may retry for a day, so one can be running across a deploy).
func (r *SyncEInvoiceResult) UnmarshalJSON(b []byte) error {
	type current SyncEInvoiceResult
	return decodeLegacy(b, (*current)(r), &r.Status)
}

func (a *Activities) syncInvoice(ctx context.Context, ref storage.InvoiceRef) (storage.InvoiceStatus, error) {
	inv, err := a.DB.FindInvoice(ctx, ref.StoreID, ref.ID)
	if err != nil {
		return "", err
	}
	if inv.Status != storage.InvoicePending {
		return inv.Status, nil
	}
	if inv.Authority.Regime != nil && *inv.Authority.Regime == storage.TaxRegimeZATCA && inv.Authority.Hash != nil {
		return a.reportToZATCA(ctx, ref)
	}
	creditsReference, err := a.creditedInvoice(ctx, inv)
	if err != nil {
		return "", err
	}
	reference, err := a.authority().Issue(ctx, einvoice.Invoice{ID: inv.ID.String(), StoreID: inv.StoreID.String(), Number: inv.Number,
		OrderNumber: inv.OrderNumber, Amount: storage.FormatPrice(inv.Totals.Total, storage.CurrencyExponent(inv.Currency)),
		Tax: storage.FormatPrice(inv.Totals.Tax, storage.CurrencyExponent(inv.Currency)), Currency: inv.Currency,
		IssuedAt: inv.IssuedAt.UTC().Format(time.RFC3339), Kind: inv.Kind, Credits: uuidString(inv.CreditsInvoiceID),
		CreditsReference: creditsReference})
	if err != nil {
		return "", a.eInvoiceFailure(ctx, ref, err)
	}
	if err := a.DB.RecordInvoiceReported(ctx, ref.StoreID, ref.ID, storage.InvoiceAnswer{Status: storage.InvoiceReported,
		Reference: reference}); err != nil {
		return "", err
	}
	inv, err = a.DB.FindInvoice(ctx, ref.StoreID, ref.ID)
	return inv.Status, err
}

func (a *Activities) authority() einvoice.Authority {
	if a.EInvoices == nil {
		return &einvoice.HTTP{}
	}
	return a.EInvoices
}

// eInvoiceFailure keeps a final answer on the document (rejected when the
// authority refused it, failed when none is configured); anything else is
// returned for Temporal to retry.
func (a *Activities) eInvoiceFailure(ctx context.Context, ref storage.InvoiceRef, err error) error {
	status := storage.InvoiceRejected
	var refused *einvoice.RefusedError
	switch {
	case errors.As(err, &refused):
	case errors.Is(err, einvoice.ErrNotConfigured):
		status = storage.InvoiceFailed
	default:
		return err
	}
	if recErr := a.DB.RecordInvoiceRefused(ctx, ref.StoreID, ref.ID, status, err.Error()); recErr != nil {
		return recErr
	}
	return temporal.NewNonRetryableApplicationError(err.Error(), "EINVOICE_REFUSED", err)
}

// errCreditedInvoicePending makes a credit note wait (Temporal retries)
// until the invoice it credits is accepted by the authority.
var errCreditedInvoicePending = errors.New("the credited invoice is not reported yet")

// creditedInvoice is the authority's reference of the invoice a note
// credits ("" for an invoice). A note waits for that invoice to be
// reported; one whose invoice was refused fails too.
func (a *Activities) creditedInvoice(ctx context.Context, inv storage.Invoice) (string, error) {
	if inv.CreditsInvoiceID == nil {
		return "", nil
	}
	credited, err := a.DB.FindInvoice(ctx, inv.StoreID, *inv.CreditsInvoiceID)
	if err != nil {
		return "", err
	}
	switch {
	case credited.Authority.Reference != nil:
		return *credited.Authority.Reference, nil
	case credited.Status == storage.InvoicePending:
		return "", errCreditedInvoicePending
	default:
		reason := "the credited invoice was " + string(credited.Status) + " and never reported"
		if err := a.DB.RecordInvoiceRefused(ctx, inv.StoreID, inv.ID, storage.InvoiceFailed, reason); err != nil {
			return "", err
		}
		return "", temporal.NewNonRetryableApplicationError(reason, "EINVOICE_REFUSED", nil)
	}
}

func uuidString(id *uuid.UUID) string {
	if id == nil {
		return ""
	}
	return id.String()
}
