package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/google/uuid"

	"github.com/merchantsvc/svc/storage"
)

// Invoices and credit notes (decisions §27).

type invoiceSellerResponse struct {
	Name      bilingualResponse `json:"name"`
	VATNumber *string           `json:"vat_number"`
	CRNumber  *string           `json:"cr_number"`
	Address   json.RawMessage   `json:"address"`
}

type invoiceBuyerResponse struct {
	Name      string          `json:"name"`
	Phone     *string         `json:"phone"`
	VATNumber *string         `json:"vat_number"`
	Address   json.RawMessage `json:"address"`
}

type invoiceLineResponse struct {
	LineID        *uuid.UUID `json:"line_id"`
	Description   string     `json:"description"`
	Quantity      int        `json:"quantity"`
	UnitPriceExcl int64      `json:"unit_price_excl"`
	Discount      int64      `json:"discount"`
	TaxClass      string     `json:"tax_class"`
	TaxRateBP     int        `json:"tax_rate_bp"`
	Tax           int64      `json:"tax"`
	TotalIncl     int64      `json:"total_incl"`
}

type invoiceTotalsResponse struct {
	Net      int64 `json:"net"`
	Discount int64 `json:"discount"`
	Tax      int64 `json:"tax"`
	Total    int64 `json:"total"`
}

type invoiceAuthorityResponse struct {
	Regime      *string    `json:"regime"`
	UUID        *uuid.UUID `json:"uuid"`
	ICV         *int64     `json:"icv"`
	PIH         *string    `json:"pih"`
	Hash        *string    `json:"hash"`
	QR          *string    `json:"qr"`
	Reference   *string    `json:"reference"`
	SubmittedAt *time.Time `json:"submitted_at"`
	Warnings    []string   `json:"warnings"`
	Errors      []string   `json:"errors"`
}

type invoiceResponse struct {
	ID                      uuid.UUID                 `json:"id"`
	Number                  string                    `json:"number"`
	Kind                    string                    `json:"kind"`
	Type                    string                    `json:"type"`
	Reason                  string                    `json:"reason"`
	OrderID                 uuid.UUID                 `json:"order_id"`
	OrderNumber             string                    `json:"order_number"`
	CreditsInvoiceID        *uuid.UUID                `json:"credits_invoice_id"`
	RefundID                *uuid.UUID                `json:"refund_id"`
	IssueDate               time.Time                 `json:"issue_date"`
	SupplyDate              string                    `json:"supply_date"`
	Currency                string                    `json:"currency"`
	Seller                  invoiceSellerResponse     `json:"seller"`
	Buyer                   invoiceBuyerResponse      `json:"buyer"`
	Lines                   []invoiceLineResponse     `json:"lines"`
	Totals                  invoiceTotalsResponse     `json:"totals"`
	AmountInWords           bilingualResponse         `json:"amount_in_words"`
	Status                  string                    `json:"status"`
	CancelledByCreditNoteID *uuid.UUID                `json:"cancelled_by_credit_note_id"`
	Authority               *invoiceAuthorityResponse `json:"authority"`
	PDF                     invoicePDFResponse        `json:"pdf"`
	CreatedAt               time.Time                 `json:"created_at"`
}

// invoicePDFResponse says whether the PDF is printed, and where.
type invoicePDFResponse struct {
	Status      string  `json:"status"`
	DownloadURL *string `json:"download_url"`
}

func nullJSON(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 {
		return json.RawMessage("null")
	}
	return raw
}

// newInvoiceResponse is an invoice as the API shows it; authority is null
// until the document went to one.
func newInvoiceResponse(i storage.Invoice, lang string) invoiceResponse {
	out := invoiceResponse{ID: i.ID, Number: i.Number, Kind: i.Kind, Type: i.Type, Reason: i.Reason, OrderID: i.OrderID,
		OrderNumber: i.OrderNumber, CreditsInvoiceID: i.CreditsInvoiceID, RefundID: i.RefundID, IssueDate: i.IssuedAt.UTC(),
		SupplyDate: i.SupplyDate.Format(dateLayout), Currency: i.Currency,
		Seller: invoiceSellerResponse{Name: newBilingual(i.Seller.Name, lang), VATNumber: i.Seller.VATNumber, CRNumber: i.Seller.CRNumber,
			Address: nullJSON(i.Seller.Address)},
		Buyer:         invoiceBuyerResponse{Name: i.Buyer.Name, Phone: i.Buyer.Phone, VATNumber: i.Buyer.VATNumber, Address: nullJSON(i.Buyer.Address)},
		Lines:         make([]invoiceLineResponse, 0, len(i.Lines)),
		Totals:        invoiceTotalsResponse{Net: i.Totals.Net, Discount: i.Totals.Discount, Tax: i.Totals.Tax, Total: i.Totals.Total},
		AmountInWords: newBilingual(storage.AmountInWords(i.Totals.Total, i.Currency), lang), Status: string(i.Status),
		CancelledByCreditNoteID: i.CancelledByCreditNoteID, CreatedAt: i.CreatedAt.UTC()}
	out.PDF.Status = "pending"
	if i.PDFReadyAt != nil {
		url := "/api/v1/stores/" + i.StoreID.String() + "/invoices/" + i.ID.String() + "/pdf"
		out.PDF = invoicePDFResponse{Status: "ready", DownloadURL: &url}
	}
	for _, l := range i.Lines {
		out.Lines = append(out.Lines, invoiceLineResponse{LineID: l.LineID, Description: l.Description, Quantity: l.Quantity,
			UnitPriceExcl: l.UnitPriceExcl, Discount: l.Discount, TaxClass: l.TaxClass, TaxRateBP: l.TaxRateBP, Tax: l.Tax, TotalIncl: l.TotalIncl})
	}
	if a := i.Authority; a.Regime != nil || a.Reference != nil || a.SubmittedAt != nil || len(a.Errors) > 0 {
		out.Authority = &invoiceAuthorityResponse{Regime: a.Regime, UUID: a.UUID, ICV: a.ICV, PIH: a.PIH, Hash: a.Hash, QR: a.QR,
			Reference: a.Reference, SubmittedAt: utcPtr(a.SubmittedAt), Warnings: nonNil(a.Warnings), Errors: nonNil(a.Errors)}
	}
	return out
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// handleListInvoices serves GET /stores/{store_id}/invoices: newest first,
// narrowed by order, kind, status and issue dates (local dates of the
// store, inclusive).
func (s *Server) handleListInvoices() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		storeID := storeIDFrom(r.Context())
		q := newQueryParser(r)
		page, limit := q.page(20)
		f := storage.InvoiceFilter{OrderID: q.uuid("order_id")}
		if kind := q.enum("kind", storage.InvoiceKinds, ""); kind != "" {
			f.Kind = &kind
		}
		if status := q.enum("status", storage.InvoiceStatuses, ""); status != "" {
			f.Status = &status
		}
		settings, err := s.db.FindStoreSettings(r.Context(), storeID)
		if err != nil {
			return err
		}
		loc, err := time.LoadLocation(settings.Timezone)
		if err != nil {
			return fmt.Errorf("store time zone %q: %w", settings.Timezone, err)
		}
		var from, to *localDate
		for _, d := range []struct {
			name string
			into **localDate
		}{{"date_from", &from}, {"date_to", &to}} {
			raw := q.values.Get(d.name)
			if raw == "" {
				continue
			}
			t, err := time.Parse(dateLayout, raw)
			if err != nil {
				q.Add(d.name, "invalid_type", "must be a date YYYY-MM-DD such as 2026-11-01")
				continue
			}
			day := dateOf(t)
			*d.into = &day
		}
		if from != nil && to != nil && to.before(*from) {
			q.Add("date_to", "out_of_range", "must not be before date_from")
		}
		if err := q.err(); err != nil {
			return err
		}
		if from != nil {
			start := startOfDay(*from, loc)
			f.IssuedFrom = &start
		}
		if to != nil {
			end := startOfDay(to.addDays(1), loc)
			f.IssuedBefore = &end
		}
		list, total, err := s.db.FindInvoices(r.Context(), storeID, f, storage.Page{Page: page, Limit: limit})
		if err != nil {
			return err
		}
		lang, err := s.readerLanguage(r, storeID)
		if err != nil {
			return err
		}
		items := make([]invoiceResponse, 0, len(list))
		for _, inv := range list {
			items = append(items, newInvoiceResponse(inv, lang))
		}
		respond(w, http.StatusOK, newList(items, page, limit, total))
		return nil
	}
}

// handleGetInvoice serves GET /stores/{store_id}/invoices/{invoice_id}.
func (s *Server) handleGetInvoice() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		id, err := pathUUID(r, "invoice_id")
		if err != nil {
			return err
		}
		storeID := storeIDFrom(r.Context())
		inv, err := s.db.FindInvoice(r.Context(), storeID, id)
		if err != nil {
			return err
		}
		lang, err := s.readerLanguage(r, storeID)
		if err != nil {
			return err
		}
		respond(w, http.StatusOK, newInvoiceResponse(inv, lang))
		return nil
	}
}

var errInvoiceNotReady = &apiError{Status: http.StatusConflict, Code: "INVOICE_NOT_READY",
	Message:   "The invoice is not ready: it is still with the tax authority or being printed; retry after the time in Retry-After",
	MessageAr: "الفاتورة غير جاهزة بعد: ما زالت لدى الجهة الضريبية أو قيد الطباعة؛ أعد المحاولة بعد المدة المذكورة في Retry-After",
	Header:    http.Header{"Retry-After": {"2"}}}

// servePDF answers an invoice's stored PDF in format.
func (s *Server) servePDF(w http.ResponseWriter, r *http.Request, inv storage.Invoice, format string) error {
	if inv.PDFReadyAt == nil {
		return errInvoiceNotReady
	}
	pdf, err := s.blob.Get(r.Context(), storage.InvoicePDFKey(inv.StoreID, inv.ID, format))
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/pdf")
	w.Header().Set("Content-Disposition", fmt.Sprintf(`attachment; filename="%s.pdf"`, inv.Number))
	w.Header().Set("Cache-Control", "private, no-store")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(pdf)
	return nil
}

// pdfFormat reads ?format=a4|receipt (a4 by default).
func pdfFormat(r *http.Request) (string, error) {
	q := newQueryParser(r)
	format := q.enum("format", []string{"a4", "receipt"}, "a4")
	return format, q.err()
}

// handleInvoicePDF serves GET /stores/{store_id}/invoices/{invoice_id}/pdf:
// Arabic first and bilingual, with the QR; 409 INVOICE_NOT_READY until the
// authority took it and it is printed.
func (s *Server) handleInvoicePDF() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		id, err := pathUUID(r, "invoice_id")
		if err != nil {
			return err
		}
		format, err := pdfFormat(r)
		if err != nil {
			return err
		}
		inv, err := s.db.FindInvoice(r.Context(), storeIDFrom(r.Context()), id)
		if err != nil {
			return err
		}
		return s.servePDF(w, r, inv, format)
	}
}

// handleInvoiceDocument serves GET /stores/{store_id}/invoices/{invoice_id}/document:
// the UBL 2.1 XML as sent to ZATCA (signed; cleared when standard).
func (s *Server) handleInvoiceDocument() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		id, err := pathUUID(r, "invoice_id")
		if err != nil {
			return err
		}
		storeID := storeIDFrom(r.Context())
		inv, err := s.db.FindInvoice(r.Context(), storeID, id)
		if err != nil {
			return err
		}
		if inv.Authority.QR == nil { // not signed yet, or no document of its own (no ZATCA)
			return errInvoiceNotReady
		}
		document, err := s.db.FindInvoiceDocumentBytes(r.Context(), storeID, id)
		if err != nil {
			return err
		}
		w.Header().Set("Content-Type", "application/xml")
		w.Header().Set("Content-Disposition", fmt.Sprintf(`attachment; filename="%s.xml"`, inv.Number))
		w.Header().Set("Cache-Control", "private, no-store")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(document)
		return nil
	}
}

// handleStorefrontInvoice serves GET /api/v1/storefront/{subdomain}/orders/{order_id}/invoice:
// the buyer's PDF of the order's live invoice (the latest one not credited
// whole), opened by the X-Order-Token of checkout; 404 without one.
func (s *Server) handleStorefrontInvoice() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		orderID, err := pathUUID(r, "order_id")
		if err != nil {
			return err
		}
		format, err := pdfFormat(r)
		if err != nil {
			return err
		}
		store, err := s.storefrontStore(r)
		if err != nil {
			return err
		}
		if err := s.checkOrderToken(r, store.ID, orderID); err != nil {
			return err
		}
		list, err := s.db.FindOrderInvoices(r.Context(), store.ID, orderID)
		if err != nil {
			return err
		}
		for i := len(list) - 1; i >= 0; i-- {
			if list[i].Kind == storage.InvoiceKindInvoice && list[i].CancelledByCreditNoteID == nil {
				return s.servePDF(w, r, list[i], format)
			}
		}
		return errNotFound
	}
}

var errInvoiceNotRetryable = newError(http.StatusConflict, "INVOICE_NOT_RETRYABLE",
	"Only a rejected or failed invoice can be sent again", "لا يُعاد إرسال إلا فاتورة مرفوضة أو متعثرة")

// handleRetryInvoice serves POST /stores/{store_id}/invoices/{invoice_id}/retry
// (orders:write): a rejected or failed invoice goes to the authority again,
// after the data was fixed (its number, ICV and hash stay); 202.
func (s *Server) handleRetryInvoice() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		id, err := pathUUID(r, "invoice_id")
		if err != nil {
			return err
		}
		storeID := storeIDFrom(r.Context())
		lang, err := s.readerLanguage(r, storeID)
		if err != nil {
			return err
		}
		err = writeView(s, w, r, http.StatusAccepted, func(i storage.Invoice) invoiceResponse { return newInvoiceResponse(i, lang) },
			func(tx *storage.Tx) (storage.Invoice, error) { return tx.RetryInvoice(r.Context(), storeID, id) })
		if errors.Is(err, storage.ErrInvoiceNotRetryable) {
			return errInvoiceNotRetryable
		}
		return err
	}
}
