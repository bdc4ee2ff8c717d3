// Package waybill renders shipments' A6 waybills: an HTML page, Arabic first
// and right to left, for headless Chromium to print to PDF (activities/waybill),
// whose text shaping (HarfBuzz) joins Arabic letters and orders mixed Arabic
// and Latin runs by the Unicode bidirectional algorithm — what pure-Go PDF
// writers get wrong. It does no I/O: the merchant pages print a day's
// waybills from the same template the waybill activity renders.
package waybill

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html/template"
	"image/png"
	"strings"

	"github.com/boombuler/barcode"
	"github.com/boombuler/barcode/code128"

	"github.com/merchantsvc/svc/storage"
	"github.com/merchantsvc/svc/storage/numerals"
)

// label is one waybill as the template prints it.
type label struct {
	Number, OrderNumber, StoreName, Carrier, Service string
	Tracking, Barcode                                string
	BarcodePNG                                       template.URL
	Consignee, Phone, Address                        string
	Sender, SenderAddress                            string
	Pieces, PiecesArabic                             string
	COD, CODArabic                                   string
	Lines                                            []storage.WaybillLine
	Date                                             string
}

// barcodePNG draws text as a Code 128 barcode, as a data URL.
func barcodePNG(text string) (template.URL, error) {
	code, err := code128.Encode(text)
	if err != nil {
		return "", fmt.Errorf("encode barcode: %w", err)
	}
	// Two pixels per module at least, and a quiet zone the scaler keeps.
	scaled, err := barcode.Scale(code, max(code.Bounds().Dx()*3, 360), 90)
	if err != nil {
		return "", fmt.Errorf("scale barcode: %w", err)
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, scaled); err != nil {
		return "", err
	}
	return template.URL("data:image/png;base64," + base64.StdEncoding.EncodeToString(buf.Bytes())), nil
}

func newLabel(d storage.WaybillDocument) (label, error) {
	l := label{Number: d.Number, OrderNumber: d.OrderNumber, StoreName: d.StoreName, Carrier: d.Carrier, Barcode: d.Barcode(),
		Consignee: d.Consignee.Name, Phone: d.Consignee.Phone, Lines: d.Lines, Date: d.CreatedAt.UTC().Format("2006-01-02")}
	if d.Service != nil {
		l.Service = *d.Service
	}
	if d.TrackingNumber != nil {
		l.Tracking = *d.TrackingNumber
	}
	if l.Consignee == "" && d.CustomerName != nil {
		l.Consignee = *d.CustomerName
	}
	if l.Phone == "" && d.CustomerPhone != nil {
		l.Phone = *d.CustomerPhone
	}
	parts := []string{d.Consignee.Line1}
	if d.Consignee.Line2 != nil {
		parts = append(parts, *d.Consignee.Line2)
	}
	parts = append(parts, d.Consignee.City)
	if d.Consignee.Region != nil {
		parts = append(parts, *d.Consignee.Region)
	}
	parts = append(parts, d.Consignee.Country)
	l.Address = strings.Join(nonEmpty(parts), "، ")
	if d.SenderName != nil {
		l.Sender = *d.SenderName
	}
	if len(d.SenderAddress) > 0 {
		var a struct{ Line1, City, Country string }
		if json.Unmarshal(d.SenderAddress, &a) == nil {
			l.SenderAddress = strings.Join(nonEmpty([]string{a.Line1, a.City, a.Country}), "، ")
		}
	}
	l.Pieces = fmt.Sprint(d.Pieces)
	l.PiecesArabic = numerals.ToArabic(l.Pieces)
	amount := storage.FormatPrice(d.CODAmount, storage.CurrencyExponent(d.Currency))
	l.COD, l.CODArabic = amount+" "+d.Currency, numerals.ToArabic(amount)+" "+d.Currency
	var err error
	l.BarcodePNG, err = barcodePNG(l.Barcode)
	return l, err
}

func nonEmpty(parts []string) []string {
	out := parts[:0:0]
	for _, p := range parts {
		if strings.TrimSpace(p) != "" {
			out = append(out, p)
		}
	}
	return out
}

// HTML is the print page of one or more waybills, one A6 page each.
func HTML(docs ...storage.WaybillDocument) ([]byte, error) {
	labels := make([]label, 0, len(docs))
	for _, d := range docs {
		l, err := newLabel(d)
		if err != nil {
			return nil, err
		}
		labels = append(labels, l)
	}
	var buf bytes.Buffer
	if err := labelsPage.Execute(&buf, labels); err != nil {
		return nil, fmt.Errorf("render waybill page: %w", err)
	}
	return buf.Bytes(), nil
}

var labelsPage = template.Must(template.New("waybill").Parse(`<!doctype html>
<html lang="ar" dir="rtl">
<head>
<meta charset="utf-8">
<title>بوليصة الشحن · Waybill</title>
<style>
@page { size: 105mm 148mm; margin: 0; }
* { box-sizing: border-box; }
html, body { margin: 0; padding: 0; }
body { font-family: "Noto Naskh Arabic", "Noto Sans Arabic", "DejaVu Sans", sans-serif; font-size: 9.5pt; color: #000; }
.label { width: 105mm; height: 148mm; padding: 4mm; display: flex; flex-direction: column; gap: 1.5mm; page-break-after: always; break-after: page; overflow: hidden; }
.label:last-child { page-break-after: auto; break-after: auto; }
.top { display: flex; justify-content: space-between; align-items: baseline; border-bottom: 0.4mm solid #000; padding-bottom: 1.5mm; }
.store { font-size: 12pt; font-weight: bold; }
.carrier { font-size: 10pt; text-transform: uppercase; }
.barcode { text-align: center; }
.barcode img { width: 90mm; height: 15mm; image-rendering: pixelated; }
.barcode .code { font-family: "DejaVu Sans Mono", monospace; font-size: 11pt; letter-spacing: 0.5mm; }
.box { border: 0.3mm solid #000; padding: 1.5mm 2mm; }
.box h2 { font-size: 8pt; margin: 0 0 1mm; font-weight: normal; color: #333; }
.consignee .name { font-size: 12pt; font-weight: bold; }
.ltr { direction: ltr; unicode-bidi: isolate; display: inline-block; }
.cod { display: flex; justify-content: space-between; align-items: center; font-size: 12pt; font-weight: bold; }
.cod .amount-ar { font-size: 13pt; }
table { width: 100%; border-collapse: collapse; font-size: 8pt; }
td { padding: 0.5mm 0; vertical-align: top; }
td.qty { width: 10mm; text-align: left; }
.meta { display: flex; justify-content: space-between; font-size: 8pt; margin-top: auto; }
</style>
</head>
<body>
{{range .}}<section class="label">
  <div class="top"><span class="store">{{.StoreName}}</span><span class="carrier">{{.Carrier}}{{if .Service}} · {{.Service}}{{end}}</span></div>
  <div class="barcode"><img alt="{{.Barcode}}" src="{{.BarcodePNG}}"><div class="code ltr">{{.Barcode}}</div></div>
  <div class="box consignee"><h2>المرسل إليه · Consignee</h2>
    <div class="name">{{.Consignee}}</div>
    <div>الهاتف: <span class="ltr">{{.Phone}}</span></div>
    <div>{{.Address}}</div>
  </div>
  <div class="box cod"><span>الدفع عند الاستلام · COD</span><span><span class="amount-ar">{{.CODArabic}}</span><br><span class="ltr">{{.COD}}</span></span></div>
  <div class="box"><h2>المحتويات · {{.PiecesArabic}} قطع · <span class="ltr">{{.Pieces}} pcs</span></h2>
    <table>{{range .Lines}}<tr><td>{{.Name}}</td><td class="qty ltr">× {{.Quantity}}</td></tr>{{end}}</table>
  </div>
  {{if .Sender}}<div class="box"><h2>المرسل · Sender</h2><div>{{.Sender}}</div><div>{{.SenderAddress}}</div></div>{{end}}
  <div class="meta"><span>شحنة <span class="ltr">{{.Number}}</span> · طلب <span class="ltr">{{.OrderNumber}}</span></span><span class="ltr">{{.Date}}</span></div>
</section>
{{end}}</body>
</html>
`))
