package waybill_test

import (
	"context"
	"encoding/json"
	"image"
	_ "image/png"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/makiuchi-d/gozxing"
	"github.com/makiuchi-d/gozxing/oned"
	"github.com/stretchr/testify/require"

	waybillpdf "github.com/merchantsvc/svc/activities/waybill"
	"github.com/merchantsvc/svc/internal/waybill"
	"github.com/merchantsvc/svc/storage"
)

// sampleDocument is a waybill with everything that is hard to print: an
// Arabic consignee and address with Latin and digits mixed in.
func sampleDocument(tracking string) storage.WaybillDocument {
	line2 := "الدور 3، شقة 12"
	return storage.WaybillDocument{StoreID: uuid.New(), ShipmentID: uuid.New(), Number: "ORD-1001-1", OrderNumber: "ORD-1001",
		StoreName: "متجر النور Nour Store", Carrier: "aramex", TrackingNumber: &tracking, CODAmount: 125050, Currency: "EGP",
		Consignee: storage.WaybillAddress{Name: "محمد عبد الرحمن", Phone: "+201001234567", Line1: "15 شارع التحرير Tahrir St",
			Line2: &line2, City: "القاهرة", Country: "EG"},
		SenderName: new("المخزن الرئيسي"), SenderAddress: json.RawMessage(`{"line1":"3 Gomhoria St","city":"Mansoura","country":"EG"}`),
		Pieces: 3, Lines: []storage.WaybillLine{{Name: "قميص قطن Cotton shirt", Quantity: 2}, {Name: "حزام جلد", Quantity: 1}},
		CreatedAt: time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC)}
}

func tool(t *testing.T, name string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	require.NoError(t, err, "%s is installed by make (poppler-utils)", name)
	return path
}

// A waybill prints on one A6 page; pdftotext finds the Arabic consignee in
// logical order (shaped text, not reversed glyphs), the Eastern and Western
// amounts, and the barcode in a page image decodes to the tracking number.
func TestWaybillPrintsArabicAndABarcodeAReaderDecodes(t *testing.T) {
	printer := &waybillpdf.Printer{}
	t.Cleanup(printer.Close)
	html, err := waybill.HTML(sampleDocument("AWB123456789EG"))
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	pdf, err := printer.PDF(ctx, html)
	require.NoError(t, err)
	dir := t.TempDir()
	file := filepath.Join(dir, "awb.pdf")
	require.NoError(t, os.WriteFile(file, pdf, 0o600))

	info, err := exec.Command(tool(t, "pdfinfo"), file).Output()
	require.NoError(t, err)
	require.Regexp(t, `Pages:\s+1\b`, string(info))
	var width, height float64
	size := regexp.MustCompile(`Page size:\s+([\d.]+) x ([\d.]+) pts`).FindStringSubmatch(string(info))
	require.Len(t, size, 3)
	width, _ = strconv.ParseFloat(size[1], 64)
	height, _ = strconv.ParseFloat(size[2], 64)
	require.InDelta(t, 297.6, width, 1.5, "A6 is 105 × 148 mm (Chromium rounds to its pixel grid)")
	require.InDelta(t, 419.5, height, 1.5)

	text, err := exec.Command(tool(t, "pdftotext"), "-enc", "UTF-8", file, "-").Output()
	require.NoError(t, err)
	for _, want := range []string{"محمد عبد الرحمن", "القاهرة", "+201001234567", "١٢٥٠٫٥٠", "1250.50 EGP", "AWB123456789EG", "ORD-1001-1", "٣"} {
		require.Contains(t, string(text), want)
	}

	require.NoError(t, exec.Command(tool(t, "pdftoppm"), "-r", "300", "-png", "-singlefile", file, filepath.Join(dir, "page")).Run())
	f, err := os.Open(filepath.Join(dir, "page.png"))
	require.NoError(t, err)
	defer f.Close()
	img, _, err := image.Decode(f)
	require.NoError(t, err)
	bmp, err := gozxing.NewBinaryBitmapFromImage(img)
	require.NoError(t, err)
	result, err := oned.NewCode128Reader().Decode(bmp, map[gozxing.DecodeHintType]any{gozxing.DecodeHintType_TRY_HARDER: true})
	require.NoError(t, err)
	require.Equal(t, "AWB123456789EG", result.GetText())
	require.Equal(t, gozxing.BarcodeFormat_CODE_128, result.GetBarcodeFormat())
}

// A day's print run is one PDF with a page per waybill.
func TestWaybillsPrintOnePagePerShipment(t *testing.T) {
	printer := &waybillpdf.Printer{}
	t.Cleanup(printer.Close)
	html, err := waybill.HTML(sampleDocument("T1"), sampleDocument("T2"), sampleDocument("T3"))
	require.NoError(t, err)
	pdf, err := printer.PDF(context.Background(), html)
	require.NoError(t, err)
	file := filepath.Join(t.TempDir(), "day.pdf")
	require.NoError(t, os.WriteFile(file, pdf, 0o600))
	info, err := exec.Command(tool(t, "pdfinfo"), file).Output()
	require.NoError(t, err)
	require.Regexp(t, `Pages:\s+3\b`, string(info))
	text, err := exec.Command(tool(t, "pdftotext"), "-enc", "UTF-8", file, "-").Output()
	require.NoError(t, err)
	require.Equal(t, 3, strings.Count(string(text), "محمد عبد الرحمن"))
}

// The printer runs none of the page's scripts and fetches nothing: a
// waybill whose HTML names outside URLs (an image, a stylesheet, a
// background, a script's fetch) prints without one request
// reaching them, and the script's text never lands on the page (issue 48).
func TestWaybillPrinterFetchesNothingAndRunsNoScript(t *testing.T) {
	var hits atomic.Int32
	outside := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Content-Type", "text/css")
		_, _ = w.Write([]byte("body { color: red }"))
	}))
	t.Cleanup(outside.Close)
	printer := &waybillpdf.Printer{}
	t.Cleanup(printer.Close)
	doc := sampleDocument("AWB1")
	doc.Consignee.Line1 = outside.URL + "/in-the-address.png"
	html, err := waybill.HTML(doc)
	require.NoError(t, err)
	hostile := strings.Replace(string(html), "</body>", `<img src="`+outside.URL+`/img.png">
<link rel="stylesheet" href="`+outside.URL+`/style.css">
<div style="background: url(`+outside.URL+`/bg.png)">bg</div>
<script>document.body.append("SCRIPT-RAN"); fetch("`+outside.URL+`/fetch");</script>
</body>`, 1)
	require.NotEqual(t, string(html), hostile, "the waybill has a body to append to")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	pdf, err := printer.PDF(ctx, []byte(hostile))
	require.NoError(t, err)
	file := filepath.Join(t.TempDir(), "awb.pdf")
	require.NoError(t, os.WriteFile(file, pdf, 0o600))
	text, err := exec.Command(tool(t, "pdftotext"), "-enc", "UTF-8", file, "-").Output()
	require.NoError(t, err)
	require.Contains(t, string(text), "AWB1", "the waybill still prints")
	require.NotContains(t, string(text), "SCRIPT-RAN", "the page's script ran")
	time.Sleep(300 * time.Millisecond) // a late request would land by now
	require.Zero(t, hits.Load(), "the printer fetched an outside URL")
}

// The sandbox stays on wherever Chromium can run it: off for root (which
// Chromium refuses to sandbox) and where the kernel turns unprivileged user
// namespaces off, on otherwise; an absent setting restricts nothing.
func TestWaybillPrinterKeepsChromiumsSandbox(t *testing.T) {
	proc := func(files map[string]string) func(string) ([]byte, error) {
		return func(name string) ([]byte, error) {
			if v, ok := files[name]; ok {
				return []byte(v + "\n"), nil
			}
			return nil, os.ErrNotExist
		}
	}
	for _, c := range []struct {
		name  string
		euid  int
		files map[string]string
		want  bool
	}{
		{"a user with user namespaces", 1000, map[string]string{"/proc/sys/user/max_user_namespaces": "96365"}, true},
		{"a user on a kernel without the settings", 1000, nil, true},
		{"root", 0, map[string]string{"/proc/sys/user/max_user_namespaces": "96365"}, false},
		{"no user namespaces", 1000, map[string]string{"/proc/sys/user/max_user_namespaces": "0"}, false},
		{"Debian's switch off", 1000, map[string]string{"/proc/sys/kernel/unprivileged_userns_clone": "0"}, false},
		{"Debian's switch on", 1000, map[string]string{"/proc/sys/kernel/unprivileged_userns_clone": "1"}, true},
		{"Ubuntu's AppArmor restriction", 1000, map[string]string{"/proc/sys/kernel/apparmor_restrict_unprivileged_userns": "1"}, false},
	} {
		require.Equal(t, c.want, waybillpdf.CanSandbox(c.euid, proc(c.files)), c.name)
	}
	// This machine: the printer starts with whatever the detection says.
	t.Logf("euid %d: sandbox %v", os.Geteuid(), waybillpdf.CanSandbox(os.Geteuid(), os.ReadFile))
}
