// Package zatcadouble is a local stand-in for ZATCA's FATOORA reporting and
// clearance API, run by `make dev` and `svc testenv` as stripe-mock is
// (decisions §27). It speaks the real endpoints and checks what the real
// one checks of an invoice: the CSID in the Basic credentials, the invoice
// hash over the canonical XML, the ECDSA signature with the embedded
// certificate's key, the QR, and the chain of each CSID (an ICV used once,
// the PIH the previous ICV's hash); it answers REPORTED or CLEARED, or ZATCA's errors.
package zatcadouble

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/merchantsvc/svc/storage/zatca"
)

// Double is a running ZATCA double.
type Double struct {
	// URL is the base SVC_ZATCA_API_BASE points at.
	URL string
	srv *http.Server

	mu sync.Mutex
	// chains are each CSID's invoices by ICV: their hash and PIH.
	chains map[string]map[int64]link
	// Reported counts the invoices taken, for tests and the dev log.
	reported int
}

type link struct{ hash, pih string }

// Start serves a double on addr ("127.0.0.1:0" for any free port).
func Start(addr string) (*Double, error) {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("start the ZATCA double: %w", err)
	}
	d := New()
	d.URL = "http://" + l.Addr().String() + "/e-invoicing/developer-portal"
	d.srv = &http.Server{Handler: d, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = d.srv.Serve(l) }()
	return d, nil
}

// New makes a double to serve with a server of one's own (httptest).
func New() *Double { return &Double{chains: map[string]map[int64]link{}} }

// Stop stops a started double.
func (d *Double) Stop() error {
	if d.srv == nil {
		return nil
	}
	return d.srv.Close()
}

// Taken is how many invoices the double reported or cleared.
func (d *Double) Taken() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.reported
}

type message struct {
	Type     string `json:"type"`
	Code     string `json:"code"`
	Category string `json:"category"`
	Message  string `json:"message"`
	Status   string `json:"status"`
}

func refuse(w http.ResponseWriter, status int, clearance bool, code, text string) {
	body := map[string]any{"validationResults": map[string]any{"infoMessages": []message{}, "warningMessages": []message{},
		"errorMessages": []message{{Type: "ERROR", Code: code, Category: "KSA", Message: text, Status: "ERROR"}}, "status": "ERROR"}}
	if clearance {
		body["clearanceStatus"] = "NOT_CLEARED"
	} else {
		body["reportingStatus"] = "NOT_REPORTED"
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(body)
}

// between reads the text between two markers of the document.
func between(doc []byte, open, close string) string {
	_, rest, ok := bytes.Cut(doc, []byte(open))
	if !ok {
		return ""
	}
	v, _, _ := bytes.Cut(rest, []byte(close))
	return string(v)
}

// ServeHTTP answers POST …/invoices/reporting/single and
// …/invoices/clearance/single.
func (d *Double) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var clearance bool
	switch {
	case r.Method == http.MethodPost && bytes.HasSuffix([]byte(r.URL.Path), []byte("/invoices/reporting/single")):
	case r.Method == http.MethodPost && bytes.HasSuffix([]byte(r.URL.Path), []byte("/invoices/clearance/single")):
		clearance = true
	default:
		http.NotFound(w, r)
		return
	}
	user, _, ok := r.BasicAuth()
	certDER, err := base64.StdEncoding.DecodeString(user)
	if !ok || err != nil || r.Header.Get("Accept-Version") != "V2" {
		refuse(w, http.StatusUnauthorized, clearance, "Invalid-Request", "the CSID (Basic credentials) and Accept-Version: V2 are required")
		return
	}
	var body struct {
		InvoiceHash string `json:"invoiceHash"`
		UUID        string `json:"uuid"`
		Invoice     string `json:"invoice"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		refuse(w, http.StatusBadRequest, clearance, "Invalid-Request", "the body is not JSON")
		return
	}
	doc, err := base64.StdEncoding.DecodeString(body.Invoice)
	if err != nil {
		refuse(w, http.StatusBadRequest, clearance, "Invalid-Request", "invoice is not base64")
		return
	}
	hash, cert, err := zatca.Verify(doc)
	switch {
	case err != nil:
		refuse(w, http.StatusBadRequest, clearance, "invalid-invoice-hash-or-signature", err.Error())
		return
	case hash != body.InvoiceHash:
		refuse(w, http.StatusBadRequest, clearance, "invoiceHash_QRCODE_INVALID", "invoiceHash is not the document's hash "+hash)
		return
	case !bytes.Equal(cert.Raw, certDER):
		refuse(w, http.StatusUnauthorized, clearance, "Invalid-CSID", "the document is signed with another certificate than the CSID")
		return
	case between(doc, "<cbc:UUID>", "</cbc:UUID>") != body.UUID:
		refuse(w, http.StatusBadRequest, clearance, "invalid-uuid", "uuid is not the document's")
		return
	}
	simplified := bytes.Contains(doc, []byte(`name="02`))
	if simplified == clearance {
		refuse(w, http.StatusBadRequest, clearance, "invalid-invoice-type",
			"simplified invoices are reported, standard invoices cleared")
		return
	}
	icv, err := strconv.ParseInt(between(doc, "<cbc:ID>ICV</cbc:ID><cbc:UUID>", "</cbc:UUID>"), 10, 64)
	if err != nil || icv < 1 {
		refuse(w, http.StatusBadRequest, clearance, "invalid-ICV", "the ICV must be a positive integer")
		return
	}
	pih := between(doc, `<cbc:ID>PIH</cbc:ID><cac:Attachment><cbc:EmbeddedDocumentBinaryObject mimeCode="text/plain">`, "</cbc:EmbeddedDocumentBinaryObject>")
	// A chain is an EGS unit's: its CSID's, as ZATCA keeps them.
	if err := d.chain(string(cert.Raw), icv, hash, pih); err != nil {
		refuse(w, http.StatusBadRequest, clearance, "invalid-chain", err.Error())
		return
	}
	w.Header().Set("Content-Type", "application/json")
	out := map[string]any{"validationResults": map[string]any{"infoMessages": []message{{Type: "INFO", Code: "XSD_ZATCA_VALID",
		Category: "XSD validation", Message: "Complied with UBL 2.1 standards in line with ZATCA specifications", Status: "PASS"}},
		"warningMessages": []message{}, "errorMessages": []message{}, "status": "PASS"}}
	if clearance {
		out["clearanceStatus"], out["clearedInvoice"] = "CLEARED", base64.StdEncoding.EncodeToString(doc)
	} else {
		out["reportingStatus"] = "REPORTED"
	}
	_ = json.NewEncoder(w).Encode(out)
}

// chain records an invoice in its CSID's chain: an ICV may come again
// only with the same hash, and the PIH must be the hash of the ICV before
// (checked whenever that one was seen, as an invoice may arrive before its
// predecessor).
func (d *Double) chain(seller string, icv int64, hash, pih string) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	c := d.chains[seller]
	if c == nil {
		c = map[int64]link{}
		d.chains[seller] = c
	}
	if seen, ok := c[icv]; ok && seen.hash != hash {
		return fmt.Errorf("ICV %d was used by another invoice", icv)
	}
	if icv == 1 && pih != zatca.FirstPIH {
		return errors.New("the first invoice's PIH must be the hash of 0")
	}
	if prev, ok := c[icv-1]; ok && prev.hash != pih {
		return fmt.Errorf("the PIH is not the hash of invoice ICV %d", icv-1)
	}
	if next, ok := c[icv+1]; ok && next.pih != hash {
		return fmt.Errorf("invoice ICV %d names another PIH than this invoice's hash", icv+1)
	}
	if _, ok := c[icv]; !ok {
		d.reported++
	}
	c[icv] = link{hash: hash, pih: pih}
	return nil
}
