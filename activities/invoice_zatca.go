package activities

import (
	"context"
	"errors"

	"go.temporal.io/sdk/temporal"

	"github.com/merchantsvc/svc/activities/einvoice"
	"github.com/merchantsvc/svc/storage"
	"github.com/merchantsvc/svc/storage/zatca"
)

// reportToZATCA signs a ZATCA invoice with the store's CSID (the hash, ICV
// and PIH were fixed when it was issued), keeps the signed document and its
// QR, and reports it (simplified) or has it cleared (standard) at
// SVC_ZATCA_API_BASE. ZATCA's refusal is kept on the invoice with its
// messages and not retried; an unreachable ZATCA is retried.
func (a *Activities) reportToZATCA(ctx context.Context, ref storage.InvoiceRef) (storage.InvoiceStatus, error) {
	doc, err := a.DB.FindInvoiceDocument(ctx, ref.StoreID, ref.ID)
	if err != nil {
		return "", err
	}
	refuse := func(status storage.InvoiceStatus, messages ...string) (storage.InvoiceStatus, error) {
		if err := a.DB.RecordInvoiceRefused(ctx, ref.StoreID, ref.ID, status, messages...); err != nil {
			return "", err
		}
		return status, temporal.NewNonRetryableApplicationError(messages[0], "EINVOICE_REFUSED", nil)
	}
	creds, err := a.DB.FindZATCACredentials(ctx, a.Secrets, ref.StoreID)
	if errors.Is(err, storage.ErrNotFound) {
		return refuse(storage.InvoiceFailed, "the store has no ZATCA CSID (PUT /settings/tax zatca)")
	}
	if err != nil {
		return "", err
	}
	cert, err := zatca.ParseCertificate(creds.Certificate)
	if err != nil {
		return refuse(storage.InvoiceFailed, "the store's CSID certificate "+err.Error())
	}
	key, err := zatca.ParsePrivateKey(creds.PrivateKey)
	if err != nil {
		return refuse(storage.InvoiceFailed, "the store's CSID key "+err.Error())
	}
	signed, err := zatca.Sign(doc.Document, doc.ZATCA, cert, key)
	if err != nil {
		return refuse(storage.InvoiceFailed, err.Error())
	}
	if signed.Hash != *doc.Invoice.Authority.Hash {
		return refuse(storage.InvoiceFailed, "the stored document no longer has the invoice's hash")
	}
	if err := a.DB.RecordInvoiceSigned(ctx, ref.StoreID, ref.ID, signed.XML, signed.QR); err != nil {
		return "", err
	}
	client := &einvoice.ZATCA{BaseURL: a.ZATCAAPIBase}
	answer, err := client.Submit(ctx, einvoice.ZATCASubmission{Certificate: cert.Raw, Hash: signed.Hash, UUID: doc.Invoice.Authority.UUID.String(),
		XML: signed.XML, Clearance: !doc.ZATCA.Simplified})
	var refused *einvoice.ZATCARefusal
	switch {
	case errors.As(err, &refused):
		return refuse(storage.InvoiceRejected, refused.Errors...)
	case errors.Is(err, einvoice.ErrZATCANotConfigured):
		return refuse(storage.InvoiceFailed, err.Error())
	case err != nil:
		return "", err
	}
	out := storage.InvoiceAnswer{Status: storage.InvoiceReported, Reference: answer.Status, Warnings: answer.Warnings}
	if !doc.ZATCA.Simplified {
		out.Status, out.Document = storage.InvoiceCleared, answer.ClearedXML
	}
	if err := a.DB.RecordInvoiceReported(ctx, ref.StoreID, ref.ID, out); err != nil {
		return "", err
	}
	inv, err := a.DB.FindInvoice(ctx, ref.StoreID, ref.ID)
	return inv.Status, err
}
