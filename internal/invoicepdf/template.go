// Package invoicepdf renders invoices and notes (decisions §27) as HTML for
// headless Chromium to print (activities/waybill's printer): Arabic first
// and right to left, every label in Arabic and English, the QR code and the
// total in words, on A4 or an 80 mm receipt. It does no I/O.
package invoicepdf

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html/template"
	"image/png"

	"github.com/boombuler/barcode"
	"github.com/boombuler/barcode/qr"

	"github.com/merchantsvc/svc/storage"
	"github.com/merchantsvc/svc/storage/numerals"
)

// Formats are the page formats an invoice prints in.
var Formats = []string{"a4", "receipt"}

type line struct {
	Description, Quantity, UnitPrice, Rate, Tax, Total string
}

type page struct {
	Format                      string
	TitleAR, TitleEN            string
	Number, Issued, Supply      string
	SellerAR, SellerEN          string
	SellerVAT, SellerCR         string
	SellerAddress               string
	Buyer, BuyerVAT, BuyerPhone string
	Credits                     string
	Lines                       []line
	Net, Discount, Tax, Total   string
	WordsAR, WordsEN            string
	QR                          template.URL
	Status                      string
}

func title(inv storage.Invoice) (string, string) {
	switch {
	case inv.Kind == storage.InvoiceKindCreditNote:
		return "إشعار دائن", "Credit note"
	case inv.Kind == storage.InvoiceKindDebitNote:
		return "إشعار مدين", "Debit note"
	case inv.Type == "standard":
		return "فاتورة ضريبية", "Tax invoice"
	}
	return "فاتورة ضريبية مبسطة", "Simplified tax invoice"
}

// qrPNG draws text as a QR code, as a data URL.
func qrPNG(text string) (template.URL, error) {
	code, err := qr.Encode(text, qr.M, qr.Auto)
	if err != nil {
		return "", fmt.Errorf("encode QR: %w", err)
	}
	scaled, err := barcode.Scale(code, 300, 300)
	if err != nil {
		return "", fmt.Errorf("scale QR: %w", err)
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, scaled); err != nil {
		return "", err
	}
	return template.URL("data:image/png;base64," + base64.StdEncoding.EncodeToString(buf.Bytes())), nil
}

// HTML is an invoice's page in format (a4 or receipt). creditsNumber is
// the number of the invoice a note corrects. The QR is ZATCA's TLV where the
// invoice has one, else the number, date, total and tax.
func HTML(inv storage.Invoice, creditsNumber, format string) ([]byte, error) {
	exp := storage.CurrencyExponent(inv.Currency)
	money := func(minor int64) string { return storage.FormatPrice(minor, exp) + " " + inv.Currency }
	p := page{Format: format, Number: inv.Number, Issued: inv.IssuedAt.UTC().Format("2006-01-02 15:04 UTC"),
		Supply: inv.SupplyDate.Format("2006-01-02"), SellerAR: inv.Seller.Name.AR, SellerEN: inv.Seller.Name.EN, Buyer: inv.Buyer.Name,
		Credits: creditsNumber, Net: money(inv.Totals.Net), Discount: money(inv.Totals.Discount), Tax: money(inv.Totals.Tax),
		Total: money(inv.Totals.Total), Status: string(inv.Status)}
	p.TitleAR, p.TitleEN = title(inv)
	words := storage.AmountInWords(inv.Totals.Total, inv.Currency)
	p.WordsAR, p.WordsEN = words.AR, words.EN
	if p.SellerAR == "" {
		p.SellerAR = p.SellerEN
	}
	if inv.Seller.VATNumber != nil {
		p.SellerVAT = *inv.Seller.VATNumber
	}
	if inv.Seller.CRNumber != nil {
		p.SellerCR = *inv.Seller.CRNumber
	}
	if len(inv.Seller.Address) > 0 {
		var a storage.TaxAddress
		if err := json.Unmarshal(inv.Seller.Address, &a); err == nil {
			p.SellerAddress = fmt.Sprintf("%s %s، %s، %s %s، %s", a.BuildingNumber, a.Street, a.District, a.City, a.PostalCode, a.Country)
		}
	}
	if inv.Buyer.VATNumber != nil {
		p.BuyerVAT = *inv.Buyer.VATNumber
	}
	if inv.Buyer.Phone != nil {
		p.BuyerPhone = *inv.Buyer.Phone
	}
	for _, l := range inv.Lines {
		p.Lines = append(p.Lines, line{Description: l.Description, Quantity: fmt.Sprint(l.Quantity), UnitPrice: storage.FormatPrice(l.UnitPriceExcl, exp),
			Rate: numerals.ToLatin(fmt.Sprintf("%d.%02d%%", l.TaxRateBP/100, l.TaxRateBP%100)), Tax: storage.FormatPrice(l.Tax, exp),
			Total: storage.FormatPrice(l.TotalIncl, exp)})
	}
	code := fmt.Sprintf("%s|%s|%s|%s", inv.Number, inv.IssuedAt.UTC().Format("2006-01-02T15:04:05Z"), storage.FormatPrice(inv.Totals.Total, exp),
		storage.FormatPrice(inv.Totals.Tax, exp))
	if inv.Authority.QR != nil {
		code = *inv.Authority.QR
	}
	var err error
	if p.QR, err = qrPNG(code); err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := pageTemplate.Execute(&buf, p); err != nil {
		return nil, fmt.Errorf("render invoice: %w", err)
	}
	return buf.Bytes(), nil
}

var pageTemplate = template.Must(template.New("invoice").Parse(`<!doctype html>
<html lang="ar" dir="rtl">
<head>
<meta charset="utf-8">
<title>{{.Number}}</title>
<style>
{{if eq .Format "receipt"}}@page { size: 80mm 260mm; margin: 4mm; }
body { font-size: 8pt; }
.cols { display: block; }
.qr img { width: 34mm; height: 34mm; }
{{else}}@page { size: A4; margin: 14mm; }
body { font-size: 10pt; }
.cols { display: flex; justify-content: space-between; gap: 8mm; }
.qr img { width: 38mm; height: 38mm; }
{{end}}
body { font-family: "Noto Naskh Arabic", "Noto Sans Arabic", "DejaVu Sans", sans-serif; color: #000; margin: 0; }
h1 { font-size: 1.5em; margin: 0 0 2mm; }
h1 .en, .en { direction: ltr; unicode-bidi: isolate; }
.muted { color: #444; }
table { width: 100%; border-collapse: collapse; margin: 3mm 0; }
th, td { border-bottom: 0.2mm solid #999; padding: 1mm; text-align: start; vertical-align: top; }
th { font-weight: bold; background: #eee; }
td.n, th.n { text-align: end; direction: ltr; unicode-bidi: isolate; }
.totals td { border: none; }
.totals .grand td { font-weight: bold; font-size: 1.2em; border-top: 0.4mm solid #000; }
.words { margin: 2mm 0; }
.qr { text-align: center; margin-top: 3mm; }
</style>
</head>
<body>
<h1>{{.TitleAR}} <span class="en">· {{.TitleEN}}</span></h1>
<div class="cols">
<div>
<div><strong>{{.SellerAR}}</strong>{{if and .SellerEN (ne .SellerEN .SellerAR)}} <span class="en">{{.SellerEN}}</span>{{end}}</div>
{{if .SellerAddress}}<div class="muted">{{.SellerAddress}}</div>{{end}}
{{if .SellerVAT}}<div>الرقم الضريبي <span class="en">VAT No.</span>: <span class="en">{{.SellerVAT}}</span></div>{{end}}
{{if .SellerCR}}<div>السجل التجاري <span class="en">CR No.</span>: <span class="en">{{.SellerCR}}</span></div>{{end}}
</div>
<div>
<div>رقم الفاتورة <span class="en">Invoice No.</span>: <span class="en">{{.Number}}</span></div>
<div>تاريخ الإصدار <span class="en">Issue date</span>: <span class="en">{{.Issued}}</span></div>
<div>تاريخ التوريد <span class="en">Supply date</span>: <span class="en">{{.Supply}}</span></div>
{{if .Credits}}<div>عن الفاتورة <span class="en">Credits invoice</span>: <span class="en">{{.Credits}}</span></div>{{end}}
</div>
</div>
<div>المشتري <span class="en">Buyer</span>: {{.Buyer}}{{if .BuyerPhone}} · <span class="en">{{.BuyerPhone}}</span>{{end}}{{if .BuyerVAT}} · الرقم الضريبي <span class="en">VAT No. {{.BuyerVAT}}</span>{{end}}</div>
<table>
<thead><tr><th>الوصف <span class="en">Description</span></th><th class="n">الكمية <span class="en">Qty</span></th>
<th class="n">سعر الوحدة <span class="en">Unit price</span></th><th class="n">الضريبة <span class="en">VAT</span></th>
<th class="n">المبلغ <span class="en">Amount</span></th></tr></thead>
<tbody>
{{range .Lines}}<tr><td>{{.Description}}</td><td class="n">{{.Quantity}}</td><td class="n">{{.UnitPrice}}</td><td class="n">{{.Tax}} ({{.Rate}})</td><td class="n">{{.Total}}</td></tr>
{{end}}</tbody>
</table>
<table class="totals">
<tr><td>الإجمالي غير شامل الضريبة <span class="en">Total excl. VAT</span></td><td class="n">{{.Net}}</td></tr>
<tr><td>الخصم <span class="en">Discount</span></td><td class="n">{{.Discount}}</td></tr>
<tr><td>ضريبة القيمة المضافة <span class="en">VAT</span></td><td class="n">{{.Tax}}</td></tr>
<tr class="grand"><td>الإجمالي شامل الضريبة <span class="en">Total incl. VAT</span></td><td class="n">{{.Total}}</td></tr>
</table>
<div class="words">{{.WordsAR}}<br><span class="en">{{.WordsEN}}</span></div>
<div class="qr"><img src="{{.QR}}" alt="QR"></div>
</body>
</html>
`))
