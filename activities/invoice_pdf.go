package activities

import (
	"context"
	"fmt"

	"github.com/google/uuid"
	"go.temporal.io/sdk/temporal"

	"github.com/merchantsvc/svc/internal/invoicepdf"
	"github.com/merchantsvc/svc/storage"
)

// RenderInvoicePDFInput names an invoice.
type RenderInvoicePDFInput struct {
	StoreID   uuid.UUID
	InvoiceID uuid.UUID
}

// RenderInvoicePDF prints an invoice the authority took (or one no
// authority takes) in A4 and receipt formats with the waybills' printer,
// stores both and marks them ready (decisions §27: a standard invoice is
// cleared before its PDF exists). An invoice still pending, refused or
// failed gets none.
func (a *Activities) RenderInvoicePDF(ctx context.Context, in RenderInvoicePDFInput) error {
	doc, err := a.DB.FindInvoiceDocument(ctx, in.StoreID, in.InvoiceID)
	if err != nil {
		return err
	}
	switch doc.Invoice.Status {
	case storage.InvoiceReported, storage.InvoiceCleared, storage.InvoiceIssued, storage.InvoiceCancelled:
	default:
		return nil
	}
	if a.Waybills == nil {
		return temporal.NewNonRetryableApplicationError("no printer is configured", "invoice_printer", nil)
	}
	for _, format := range invoicepdf.Formats {
		html, err := invoicepdf.HTML(doc.Invoice, doc.ZATCA.BillingReference, format)
		if err != nil {
			return temporal.NewNonRetryableApplicationError(err.Error(), "invoice_content", err)
		}
		pdf, err := a.Waybills.PDF(ctx, html)
		if err != nil {
			return err
		}
		if err := a.Blob.Put(ctx, storage.InvoicePDFKey(in.StoreID, in.InvoiceID, format), pdf, "application/pdf"); err != nil {
			return fmt.Errorf("store invoice PDF: %w", err)
		}
	}
	return a.DB.MarkInvoicePDFReady(ctx, in.StoreID, in.InvoiceID)
}
