package storage

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/google/uuid"

	"github.com/merchantsvc/svc/storage/zatca"
)

// ZATCA's part of an invoice's issue (decisions §27): the ICV and PIH from
// the store's chain row, locked by the issuing transaction, and the UBL
// document whose hash the next invoice's PIH is. The signature and QR are
// added by the e-invoice workflow; they are outside the hash.

// zatcaDocument is the UBL an invoice says; creditsNumber is, for a note,
// the number of the invoice it corrects.
func zatcaDocument(inv Invoice, icv int64, pih, creditsNumber string) zatca.Document {
	d := zatca.Document{UUID: inv.Authority.UUID.String(), Number: inv.Number, ICV: icv, PIH: pih, IssuedAt: inv.IssuedAt,
		TypeCode: zatca.TypeInvoice, Simplified: inv.Type != "standard", Currency: inv.Currency, Exponent: CurrencyExponent(inv.Currency),
		Seller: zatca.Party{Name: inv.Seller.Name.AR, VATNumber: deref(inv.Seller.VATNumber), CRNumber: deref(inv.Seller.CRNumber)},
		Buyer:  zatca.Party{Name: inv.Buyer.Name, VATNumber: deref(inv.Buyer.VATNumber)},
		Net:    inv.Totals.Net, Tax: inv.Totals.Tax, Total: inv.Totals.Total, BillingReference: creditsNumber}
	if d.Seller.Name == "" {
		d.Seller.Name = inv.Seller.Name.EN
	}
	switch inv.Kind {
	case InvoiceKindCreditNote:
		d.TypeCode, d.Reason = zatca.TypeCreditNote, strings.ReplaceAll(inv.Reason, "_", " ")
	case InvoiceKindDebitNote:
		d.TypeCode, d.Reason = zatca.TypeDebitNote, strings.ReplaceAll(inv.Reason, "_", " ")
	}
	if a := inv.sellerAddress; a != nil {
		d.Seller.Address = &zatca.Address{Street: a.Street, BuildingNumber: a.BuildingNumber, AdditionalNumber: deref(a.AdditionalNumber),
			District: a.District, City: a.City, PostalCode: a.PostalCode, Country: a.Country}
	}
	for _, l := range inv.Lines {
		category := "S"
		switch l.TaxClass {
		case TaxClassZero:
			category = "Z"
		case TaxClassExempt:
			category = "E"
		}
		d.Lines = append(d.Lines, zatca.Line{Name: l.Description, Quantity: l.Quantity, UnitPrice: l.UnitPriceExcl,
			Net: l.TotalIncl - l.Tax, Tax: l.Tax, RateBP: l.TaxRateBP, Category: category})
	}
	return d
}

// chainZATCA gives a ZATCA invoice its ICV, PIH, UUID, document and hash,
// under the lock of the store's chain row (held to the transaction's end).
func (tx *Tx) chainZATCA(ctx context.Context, inv *Invoice) ([]byte, error) {
	var (
		icv  int64
		pih  string
		prev string
	)
	if err := tx.tx.QueryRow(ctx, `INSERT INTO zatca_chains (store_id, last_icv, last_hash) VALUES ($1, 1, $2)
		ON CONFLICT (store_id) DO UPDATE SET last_icv = zatca_chains.last_icv + 1 RETURNING last_icv, last_hash`,
		inv.StoreID, zatca.FirstPIH).Scan(&icv, &pih); err != nil {
		return nil, fmt.Errorf("chain ZATCA invoice: %w", err)
	}
	if inv.CreditsInvoiceID != nil {
		if err := tx.tx.QueryRow(ctx, `SELECT number FROM invoices WHERE store_id = $1 AND id = $2`, inv.StoreID, *inv.CreditsInvoiceID).Scan(&prev); err != nil {
			return nil, fmt.Errorf("find credited invoice: %w", err)
		}
	}
	id := uuid.New()
	inv.Authority.UUID = &id
	document := zatcaDocument(*inv, icv, pih, prev).Unsigned()
	hash := zatca.HashUnsigned(document)
	inv.Authority.ICV, inv.Authority.PIH, inv.Authority.Hash = &icv, &pih, &hash
	if _, err := tx.tx.Exec(ctx, `UPDATE zatca_chains SET last_hash = $2 WHERE store_id = $1`, inv.StoreID, hash); err != nil {
		return nil, fmt.Errorf("chain ZATCA invoice: %w", err)
	}
	return document, nil
}

// InvoiceDocument is an invoice's document as stored: the UBL (unsigned
// until sent) and what ZATCA's QR and signature need of it.
type InvoiceDocument struct {
	Invoice  Invoice
	Document []byte
	// ZATCA is the UBL the document says (the seller's address included).
	ZATCA zatca.Document
}

// FindInvoiceDocument reads an invoice with its document.
func (r reader) FindInvoiceDocument(ctx context.Context, storeID, id uuid.UUID) (InvoiceDocument, error) {
	inv, err := r.FindInvoice(ctx, storeID, id)
	if err != nil {
		return InvoiceDocument{}, err
	}
	var (
		document []byte
		prev     *string
	)
	if err := r.q.QueryRow(ctx, `SELECT i.document, c.number FROM invoices i LEFT JOIN invoices c ON c.store_id = i.store_id AND c.id = i.credits_invoice_id
		WHERE i.store_id = $1 AND i.id = $2`, storeID, id).Scan(&document, &prev); err != nil {
		return InvoiceDocument{}, fmt.Errorf("find invoice document: %w", err)
	}
	if len(inv.Seller.Address) > 0 {
		if err := json.Unmarshal(inv.Seller.Address, &inv.sellerAddress); err != nil {
			return InvoiceDocument{}, fmt.Errorf("decode seller address: %w", err)
		}
	}
	out := InvoiceDocument{Invoice: inv, Document: document}
	if inv.Authority.ICV != nil && inv.Authority.PIH != nil && inv.Authority.UUID != nil {
		out.ZATCA = zatcaDocument(inv, *inv.Authority.ICV, *inv.Authority.PIH, deref(prev))
	}
	return out, nil
}

// RecordInvoiceSigned keeps the signed document and its QR.
func (db *DB) RecordInvoiceSigned(ctx context.Context, storeID, id uuid.UUID, document []byte, qr string) error {
	if _, err := db.pool.Exec(ctx, `UPDATE invoices SET document = $3, qr = $4 WHERE store_id = $1 AND id = $2`,
		storeID, id, document, qr); err != nil {
		return fmt.Errorf("record signed invoice: %w", err)
	}
	return nil
}

// InvoiceAnswer is the authority's answer to a document it took.
type InvoiceAnswer struct {
	Status    InvoiceStatus // reported or cleared
	Reference string
	Warnings  []string
	// Document replaces the stored one when set (ZATCA's cleared invoice).
	Document []byte
}
