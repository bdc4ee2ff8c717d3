package main

import (
	"crypto/sha256"
	"encoding/xml"
	"fmt"
	"strings"
	"time"

	"github.com/decred/dcrd/dcrec/secp256k1/v4"
	"github.com/decred/dcrd/dcrec/secp256k1/v4/ecdsa"

	"github.com/merchantsvc/svc/storage/zatca"
)

// The invoices suite (issue 53, decisions §27): simplified ZATCA invoices
// a second, each written as UBL, hashed over its canonical form, chained
// (its PIH the previous hash), signed with the CSID key and given its QR,
// against a bare loop in the same run that marshals the same UBL fields
// with encoding/xml and signs their SHA-256 (goal: ratio ≥ 0.5). Pure CPU:
// no database.

// runInvoiceSuite runs the suite when asked by name or by all, and writes
// its section of out.
func runInvoiceSuite(suite, out string) {
	if suite != "invoices" && suite != "all" {
		return
	}
	report, err := runInvoiceBench(2 * time.Second)
	fail(err)
	fmt.Print(report)
	if out != "" {
		fail(replaceSection(out, "invoices", report))
	}
}

// bareUBL is the same invoice's fields as a plain encoding/xml document.
type bareUBL struct {
	XMLName  xml.Name `xml:"Invoice"`
	ID       string   `xml:"ID"`
	UUID     string   `xml:"UUID"`
	Issued   string   `xml:"IssueDate"`
	ICV      int64    `xml:"ICV"`
	PIH      string   `xml:"PIH"`
	Seller   string   `xml:"AccountingSupplierParty>Party>RegistrationName"`
	VAT      string   `xml:"AccountingSupplierParty>Party>CompanyID"`
	Buyer    string   `xml:"AccountingCustomerParty>Party>RegistrationName"`
	Tax      string   `xml:"TaxTotal>TaxAmount"`
	Total    string   `xml:"LegalMonetaryTotal>PayableAmount"`
	Lines    []string `xml:"InvoiceLine>Item>Name"`
	Amounts  []int64  `xml:"InvoiceLine>LineExtensionAmount"`
	Currency string   `xml:"DocumentCurrencyCode"`
}

func benchDocument(i int64, pih string) zatca.Document {
	return zatca.Document{UUID: "3cf5ee18-ee25-44ea-a444-2c37ba7f28be", Number: fmt.Sprintf("INV-2026-%06d", i), ICV: i, PIH: pih,
		IssuedAt: time.Date(2026, 11, 28, 10, 30, 0, 0, time.UTC), TypeCode: zatca.TypeInvoice, Simplified: true, Currency: "SAR", Exponent: 2,
		Seller: zatca.Party{Name: "عبايات الرياض", VATNumber: "300000000000003", CRNumber: "1010010000",
			Address: &zatca.Address{Street: "King Fahd Rd", BuildingNumber: "1234", District: "Al Olaya", City: "Riyadh", PostalCode: "12345", Country: "SA"}},
		Buyer: zatca.Party{Name: "Noura"},
		Lines: []zatca.Line{{Name: "Abaya", Quantity: 2, UnitPrice: 39130, Net: 78261, Tax: 11739, RateBP: 1500, Category: "S"},
			{Name: "Shipping", Quantity: 1, UnitPrice: 4348, Net: 4348, Tax: 652, RateBP: 1500, Category: "S"}},
		Net: 82609, Tax: 12391, Total: 95000}
}

func runInvoiceBench(each time.Duration) (string, error) {
	key, err := secp256k1.GeneratePrivateKey()
	if err != nil {
		return "", err
	}
	certPEM, err := zatca.NewCertificate(zatca.CertificateTemplate{CommonName: "EGS1-bench", Organization: "Bench", Country: "SA", SerialNumber: 1,
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().AddDate(1, 0, 0)}, key, key, "EGS1-bench")
	if err != nil {
		return "", err
	}
	cert, err := zatca.ParseCertificate(certPEM)
	if err != nil {
		return "", err
	}
	// Bare: marshal and sign.
	var bare int64
	start := time.Now()
	for time.Since(start) < each {
		d := benchDocument(bare+1, zatca.FirstPIH)
		raw, err := xml.Marshal(bareUBL{ID: d.Number, UUID: d.UUID, Issued: "2026-11-28", ICV: d.ICV, PIH: d.PIH, Seller: d.Seller.Name,
			VAT: d.Seller.VATNumber, Buyer: d.Buyer.Name, Tax: "123.91", Total: "950.00", Lines: []string{"Abaya", "Shipping"},
			Amounts: []int64{78261, 4348}, Currency: "SAR"})
		if err != nil {
			return "", err
		}
		sum := sha256.Sum256(raw)
		_ = ecdsa.Sign(key, sum[:]).Serialize()
		bare++
	}
	bareRate := float64(bare) / time.Since(start).Seconds()
	// Ours: the document, its hash chained, the signature and the QR.
	var n int64
	pih := zatca.FirstPIH
	start = time.Now()
	for time.Since(start) < each {
		d := benchDocument(n+1, pih)
		unsigned := d.Unsigned()
		hash := zatca.HashUnsigned(unsigned) // as the issuing transaction does
		signed, err := zatca.Sign(unsigned, d, cert, key)
		if err != nil {
			return "", err
		}
		if signed.Hash != hash {
			return "", fmt.Errorf("invoice %d: the signed hash changed", n+1)
		}
		pih = hash
		n++
	}
	rate := float64(n) / time.Since(start).Seconds()
	ratio := rate / bareRate
	verdict := "meets"
	if ratio < 0.5 {
		verdict = "misses"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "| loop (%s each, one core) | per second |\n|---|---|\n", each)
	fmt.Fprintf(&b, "| bare: encoding/xml marshal + SHA-256 + ECDSA sign | %.0f |\n", bareRate)
	fmt.Fprintf(&b, "| simplified invoice: UBL, canonical hash, PIH chain, signature, QR | %.0f |\n", rate)
	fmt.Fprintf(&b, "\nRatio %.2f: %s the goal of 0.5.\n", ratio, verdict)
	return b.String(), nil
}
