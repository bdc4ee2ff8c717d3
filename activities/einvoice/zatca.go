package einvoice

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// ZATCA is FATOORA's reporting and clearance API at BaseURL
// (SVC_ZATCA_API_BASE; the local double in `make dev` and the tests).
type ZATCA struct {
	BaseURL string
	Client  *http.Client
}

// ZATCASubmission is one signed invoice for ZATCA.
type ZATCASubmission struct {
	// Certificate is the CSID's DER: ZATCA's binarySecurityToken is its
	// base64, sent as the Basic user.
	Certificate []byte
	Hash        string
	UUID        string
	XML         []byte
	// Clearance sends a standard invoice to be cleared; a simplified one
	// is reported.
	Clearance bool
}

// ZATCAAnswer is what ZATCA said of an invoice it took.
type ZATCAAnswer struct {
	Status   string // REPORTED or CLEARED
	Warnings []string
	// ClearedXML is the invoice as ZATCA cleared it (stamped).
	ClearedXML []byte
}

// ZATCARefusal is ZATCA's refusal of an invoice, with its error messages:
// final, not retried.
type ZATCARefusal struct {
	Status int
	Errors []string
}

func (e *ZATCARefusal) Error() string {
	return fmt.Sprintf("ZATCA refused the invoice (%d): %s", e.Status, strings.Join(e.Errors, "; "))
}

type zatcaMessage struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

type zatcaResponse struct {
	ValidationResults struct {
		WarningMessages []zatcaMessage `json:"warningMessages"`
		ErrorMessages   []zatcaMessage `json:"errorMessages"`
		Status          string         `json:"status"`
	} `json:"validationResults"`
	ReportingStatus string `json:"reportingStatus"`
	ClearanceStatus string `json:"clearanceStatus"`
	ClearedInvoice  string `json:"clearedInvoice"`
}

func messages(ms []zatcaMessage) []string {
	out := make([]string, 0, len(ms))
	for _, m := range ms {
		out = append(out, m.Code+": "+m.Message)
	}
	return out
}

// ErrZATCANotConfigured is returned when no ZATCA address is set.
var ErrZATCANotConfigured = errors.New("no ZATCA API is configured (SVC_ZATCA_API_BASE)")

// Submit reports or clears a signed invoice.
func (z *ZATCA) Submit(ctx context.Context, s ZATCASubmission) (ZATCAAnswer, error) {
	if z.BaseURL == "" {
		return ZATCAAnswer{}, ErrZATCANotConfigured
	}
	path := "/invoices/reporting/single"
	if s.Clearance {
		path = "/invoices/clearance/single"
	}
	body, err := json.Marshal(map[string]string{"invoiceHash": s.Hash, "uuid": s.UUID, "invoice": base64.StdEncoding.EncodeToString(s.XML)})
	if err != nil {
		return ZATCAAnswer{}, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimRight(z.BaseURL, "/")+path, bytes.NewReader(body))
	if err != nil {
		return ZATCAAnswer{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	req.Header.Set("Accept-Version", "V2")
	req.Header.Set("Accept-Language", "en")
	if s.Clearance {
		req.Header.Set("Clearance-Status", "1")
	}
	req.SetBasicAuth(base64.StdEncoding.EncodeToString(s.Certificate), "")
	client := z.Client
	if client == nil {
		client = &http.Client{Timeout: 30 * time.Second}
	}
	resp, err := client.Do(req)
	if err != nil {
		return ZATCAAnswer{}, fmt.Errorf("call ZATCA: %w", err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	var answer zatcaResponse
	_ = json.Unmarshal(raw, &answer)
	switch {
	case resp.StatusCode == http.StatusOK || resp.StatusCode == http.StatusAccepted:
		out := ZATCAAnswer{Status: answer.ReportingStatus, Warnings: messages(answer.ValidationResults.WarningMessages)}
		if s.Clearance {
			out.Status = answer.ClearanceStatus
			if out.ClearedXML, err = base64.StdEncoding.DecodeString(answer.ClearedInvoice); err != nil {
				return ZATCAAnswer{}, fmt.Errorf("ZATCA's cleared invoice is not base64: %w", err)
			}
		}
		return out, nil
	case resp.StatusCode == http.StatusBadRequest || resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusConflict:
		errs := messages(answer.ValidationResults.ErrorMessages)
		if len(errs) == 0 {
			errs = []string{strings.TrimSpace(string(raw))}
		}
		return ZATCAAnswer{}, &ZATCARefusal{Status: resp.StatusCode, Errors: errs}
	default:
		return ZATCAAnswer{}, fmt.Errorf("ZATCA answered %d", resp.StatusCode)
	}
}
