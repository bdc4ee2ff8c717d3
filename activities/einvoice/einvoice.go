// Package einvoice talks to the tax authority's e-invoicing service: issue
// an invoice for a paid order, cancel it when the payment is undone.
package einvoice

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Invoice is what the authority is told about one payment.
type Invoice struct {
	ID          string `json:"invoice_id"` // ours; the authority deduplicates on it
	StoreID     string `json:"store_id"`
	Number      string `json:"number"` // the store's gapless number (decisions §27)
	OrderNumber string `json:"order_number"`
	Amount      string `json:"amount"` // decimal major units, tax included
	Tax         string `json:"tax"`
	Currency    string `json:"currency"`
	IssuedAt    string `json:"issued_at"`
	// Kind is "invoice", or "credit_note" for a refund, which names the
	// invoice it credits (our id, as sent when that invoice was issued).
	Kind    string `json:"kind"`
	Credits string `json:"credits_invoice_id,omitempty"`
	// CreditsReference is the authority's reference of that invoice.
	CreditsReference string `json:"credits_reference,omitempty"`
}

// Authority issues and cancels e-invoices.
type Authority interface {
	// Issue reports an invoice and returns the authority's reference.
	Issue(ctx context.Context, inv Invoice) (string, error)
	// Cancel cancels an issued invoice by its reference.
	Cancel(ctx context.Context, reference, reason string) error
}

// RefusedError is the authority's final answer (a 4xx): trying again
// will not change it.
type RefusedError struct {
	Status int
	Body   string
}

func (e *RefusedError) Error() string {
	return fmt.Sprintf("e-invoice refused by the authority (%d): %s", e.Status, e.Body)
}

// ErrNotConfigured is returned when no authority address is set.
var ErrNotConfigured = errors.New("no e-invoicing authority is configured (SVC_EINVOICE_URL)")

// HTTP is the authority's JSON API at BaseURL:
// POST {base}/invoices → {"reference"}; POST {base}/invoices/{reference}/cancel.
type HTTP struct {
	BaseURL string
	Token   string // sent as a bearer token
	Client  *http.Client
}

// Issue implements Authority.
func (h *HTTP) Issue(ctx context.Context, inv Invoice) (string, error) {
	var out struct {
		Reference string `json:"reference"`
	}
	if err := h.post(ctx, "/invoices", inv, &out); err != nil {
		return "", err
	}
	if out.Reference == "" {
		return "", errors.New("the authority answered without a reference")
	}
	return out.Reference, nil
}

// Cancel implements Authority.
func (h *HTTP) Cancel(ctx context.Context, reference, reason string) error {
	return h.post(ctx, "/invoices/"+url.PathEscape(reference)+"/cancel", map[string]string{"reason": reason}, nil)
}

func (h *HTTP) post(ctx context.Context, path string, body, out any) error {
	if h.BaseURL == "" {
		return ErrNotConfigured
	}
	raw, err := json.Marshal(body)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimRight(h.BaseURL, "/")+path, bytes.NewReader(raw))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	if h.Token != "" {
		req.Header.Set("Authorization", "Bearer "+h.Token)
	}
	client := h.Client
	if client == nil {
		client = &http.Client{Timeout: 30 * time.Second}
	}
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("call the e-invoicing authority: %w", err)
	}
	defer resp.Body.Close()
	answer, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	switch {
	case resp.StatusCode >= 200 && resp.StatusCode < 300:
		if out == nil {
			return nil
		}
		return json.Unmarshal(answer, out)
	case resp.StatusCode >= 400 && resp.StatusCode < 500 && resp.StatusCode != http.StatusTooManyRequests && resp.StatusCode != http.StatusRequestTimeout:
		return &RefusedError{Status: resp.StatusCode, Body: strings.TrimSpace(string(answer))}
	default:
		return fmt.Errorf("the e-invoicing authority answered %d", resp.StatusCode)
	}
}
