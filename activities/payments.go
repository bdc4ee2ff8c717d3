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

// SyncEInvoice brings the authority in line with an e-invoice's state:
// issue a pending one, cancel one whose payment was undone (an invoice never
// issued is cancelled here alone). It acts on the row as it is now, so a
// repeated or late run does nothing twice. A refusal by the authority is
// kept on the invoice and not retried.
func (a *Activities) SyncEInvoice(ctx context.Context, in SyncEInvoiceInput) (SyncEInvoiceResult, error) {
	status, err := a.syncEInvoice(ctx, storage.EInvoiceRef{StoreID: in.StoreID, ID: in.InvoiceID})
	return SyncEInvoiceResult{Status: string(status)}, err
}

// SyncEInvoiceInput names an e-invoice.
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

func (a *Activities) syncEInvoice(ctx context.Context, ref storage.EInvoiceRef) (storage.EInvoiceStatus, error) {
	for range 2 { // issue, then a cancel that arrived meanwhile
		inv, err := a.DB.FindEInvoice(ctx, ref.StoreID, ref.ID)
		if err != nil {
			return "", err
		}
		switch {
		case inv.Status == storage.EInvoicePending:
			creditsReference, err := a.creditedInvoice(ctx, inv)
			if err != nil {
				return "", err
			}
			reference, err := a.authority().Issue(ctx, einvoice.Invoice{ID: inv.ID.String(), StoreID: inv.StoreID.String(),
				OrderNumber: inv.OrderNumber, Amount: storage.FormatPrice(inv.Amount, storage.CurrencyExponent(inv.Currency)),
				Currency: inv.Currency, IssuedAt: inv.CreatedAt.UTC().Format(time.RFC3339), Kind: inv.Kind, Credits: uuidString(inv.Credits),
				CreditsReference: creditsReference})
			if err != nil {
				return "", a.eInvoiceFailure(ctx, ref, err)
			}
			if err := a.DB.RecordEInvoiceIssued(ctx, ref.StoreID, ref.ID, reference); err != nil {
				return "", err
			}
		case inv.Status == storage.EInvoiceCancelRequested:
			if inv.AuthorityReference != nil {
				reason := ""
				if inv.CancelReason != nil {
					reason = *inv.CancelReason
				}
				if err := a.authority().Cancel(ctx, *inv.AuthorityReference, reason); err != nil {
					return "", a.eInvoiceFailure(ctx, ref, err)
				}
			}
			if err := a.DB.RecordEInvoiceCancelled(ctx, ref.StoreID, ref.ID); err != nil {
				return "", err
			}
		default:
			return inv.Status, nil
		}
	}
	inv, err := a.DB.FindEInvoice(ctx, ref.StoreID, ref.ID)
	return inv.Status, err
}

func (a *Activities) authority() einvoice.Authority {
	if a.EInvoices == nil {
		return &einvoice.HTTP{}
	}
	return a.EInvoices
}

// eInvoiceFailure keeps a final refusal on the invoice; anything else is
// returned for Temporal to retry.
func (a *Activities) eInvoiceFailure(ctx context.Context, ref storage.EInvoiceRef, err error) error {
	var refused *einvoice.RefusedError
	if !errors.As(err, &refused) && !errors.Is(err, einvoice.ErrNotConfigured) {
		return err
	}
	if recErr := a.DB.RecordEInvoiceFailed(ctx, ref.StoreID, ref.ID, err.Error()); recErr != nil {
		return recErr
	}
	return temporal.NewNonRetryableApplicationError(err.Error(), "EINVOICE_REFUSED", err)
}

// errCreditedInvoicePending makes a credit note wait (Temporal retries)
// until the invoice it credits is issued at the authority.
var errCreditedInvoicePending = errors.New("the credited invoice is not issued yet")

// creditedInvoice is the authority's reference of the invoice a credit
// note credits ("" for an invoice). A credit note waits for that invoice to
// be issued; one whose invoice failed or was cancelled fails too.
func (a *Activities) creditedInvoice(ctx context.Context, inv storage.EInvoice) (string, error) {
	if inv.Credits == nil {
		return "", nil
	}
	credited, err := a.DB.FindEInvoice(ctx, inv.StoreID, *inv.Credits)
	if err != nil {
		return "", err
	}
	switch {
	case credited.AuthorityReference != nil:
		return *credited.AuthorityReference, nil
	case credited.Status == storage.EInvoicePending:
		return "", errCreditedInvoicePending
	default:
		reason := "the credited invoice was " + string(credited.Status) + " and never issued"
		if err := a.DB.RecordEInvoiceFailed(ctx, inv.StoreID, inv.ID, reason); err != nil {
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
