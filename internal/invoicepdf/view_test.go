package invoicepdf

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/merchantsvc/svc/activities/waybill"
	"github.com/merchantsvc/svc/storage"
)

func TestViewInvoice(t *testing.T) {
	dir := os.Getenv("INVOICE_VIEW_DIR")
	if dir == "" {
		t.Skip("INVOICE_VIEW_DIR unset")
	}
	vat, cr, phone := "300000000000003", "1010010000", "+966500000001"
	inv := storage.Invoice{ID: uuid.New(), Number: "INV-2026-000123", Kind: "invoice", Type: "simplified", Currency: "SAR",
		IssuedAt: time.Now(), SupplyDate: time.Now(),
		Seller: storage.InvoiceSeller{Name: storage.Bilingual{AR: "عبايات الرياض", EN: "Riyadh Abayas"}, VATNumber: &vat, CRNumber: &cr,
			Address: []byte(`{"building_number":"1234","street":"King Fahd Rd","district":"Al Olaya","city":"Riyadh","postal_code":"12345","country":"SA"}`)},
		Buyer: storage.InvoiceBuyer{Name: "نورة", Phone: &phone},
		Lines: []storage.InvoiceLine{{Description: "عباية سوداء مطرزة", Quantity: 2, UnitPriceExcl: 39130, TaxClass: "standard", TaxRateBP: 1500, Tax: 11739, TotalIncl: 90000},
			{Description: "Shipping", Quantity: 1, UnitPriceExcl: 4348, TaxClass: "standard", TaxRateBP: 1500, Tax: 652, TotalIncl: 5000}},
		Totals: storage.InvoiceTotals{Net: 82609, Tax: 12391, Total: 95000}}
	p := &waybill.Printer{}
	defer p.Close()
	for _, f := range Formats {
		html, err := HTML(inv, "", f)
		require.NoError(t, err)
		pdf, err := p.PDF(context.Background(), html)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(dir+"/"+f+".pdf", pdf, 0o644))
	}
}
