// Package whatsapp calls the WhatsApp Cloud API (Meta's Graph API) for a
// store's channel (decisions §25): the number's check at connect. Sends go
// through activities.HTTPChatProvider at {base}/{phone_number_id}.
package whatsapp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// DefaultAPIBase is Meta's versioned Graph address.
const DefaultAPIBase = "https://graph.facebook.com/v21.0"

// Base is the address to call: base, else Meta's.
func Base(base string) string {
	if base == "" {
		return DefaultAPIBase
	}
	return strings.TrimSuffix(base, "/")
}

// PhoneNumber is what the provider says of a number.
type PhoneNumber struct {
	ID                 string `json:"id"`
	DisplayPhoneNumber string `json:"display_phone_number"`
	VerifiedName       string `json:"verified_name"`
	QualityRating      string `json:"quality_rating"`
	MessagingLimitTier string `json:"messaging_limit_tier"`
}

// RefusedError is the provider's refusal of a call: its HTTP status and
// Graph error code. Its message is the provider's and never repeated to
// the merchant (it may echo what was sent).
type RefusedError struct {
	Status, Code int
}

func (e *RefusedError) Error() string {
	return fmt.Sprintf("whatsapp cloud api refused the call (HTTP %d, code %d)", e.Status, e.Code)
}

// CheckPhoneNumber reads the number with the token: a RefusedError when
// the provider refuses (a bad token is code 190, an unknown number 100),
// another error when it does not answer.
func CheckPhoneNumber(ctx context.Context, base, phoneNumberID, token string) (PhoneNumber, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	u := Base(base) + "/" + url.PathEscape(phoneNumberID) + "?fields=id,display_phone_number,verified_name,quality_rating,messaging_limit_tier"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return PhoneNumber{}, err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return PhoneNumber{}, fmt.Errorf("whatsapp cloud api: %w", err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode >= 400 {
		var e struct {
			Error struct {
				Code int `json:"code"`
			} `json:"error"`
		}
		_ = json.Unmarshal(raw, &e)
		if resp.StatusCode >= 500 {
			return PhoneNumber{}, fmt.Errorf("whatsapp cloud api answered %d", resp.StatusCode)
		}
		return PhoneNumber{}, &RefusedError{Status: resp.StatusCode, Code: e.Error.Code}
	}
	var n PhoneNumber
	if err := json.Unmarshal(raw, &n); err != nil || n.DisplayPhoneNumber == "" {
		return PhoneNumber{}, fmt.Errorf("whatsapp cloud api: unreadable phone number answer")
	}
	return n, nil
}

// Template is a template as the provider takes it.
type Template struct {
	Name, Category, Language string
	Header, Footer           string
	Body                     string
	// BodyExamples are the body's placeholders' examples, in order.
	BodyExamples []string
	Buttons      []string // quick replies
}

// SubmitTemplate submits a template for the provider's approval
// (POST /{waba_id}/message_templates) and answers the provider's id for it.
func SubmitTemplate(ctx context.Context, base, wabaID, token string, t Template) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	var components []map[string]any
	if t.Header != "" {
		components = append(components, map[string]any{"type": "HEADER", "format": "TEXT", "text": t.Header})
	}
	body := map[string]any{"type": "BODY", "text": t.Body}
	if len(t.BodyExamples) > 0 {
		body["example"] = map[string]any{"body_text": [][]string{t.BodyExamples}}
	}
	components = append(components, body)
	if t.Footer != "" {
		components = append(components, map[string]any{"type": "FOOTER", "text": t.Footer})
	}
	if len(t.Buttons) > 0 {
		buttons := make([]map[string]string, 0, len(t.Buttons))
		for _, b := range t.Buttons {
			buttons = append(buttons, map[string]string{"type": "QUICK_REPLY", "text": b})
		}
		components = append(components, map[string]any{"type": "BUTTONS", "buttons": buttons})
	}
	payload, err := json.Marshal(map[string]any{"name": t.Name, "language": t.Language, "category": strings.ToUpper(t.Category),
		"components": components})
	if err != nil {
		return "", err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, Base(base)+"/"+url.PathEscape(wabaID)+"/message_templates",
		bytes.NewReader(payload))
	if err != nil {
		return "", err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", fmt.Errorf("whatsapp cloud api: %w", err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	var out struct {
		ID    string `json:"id"`
		Error struct {
			Code int `json:"code"`
		} `json:"error"`
	}
	_ = json.Unmarshal(raw, &out)
	switch {
	case resp.StatusCode >= 500:
		return "", fmt.Errorf("whatsapp cloud api answered %d", resp.StatusCode)
	case resp.StatusCode >= 400:
		return "", &RefusedError{Status: resp.StatusCode, Code: out.Error.Code}
	case out.ID == "":
		return "", fmt.Errorf("whatsapp cloud api: unreadable template answer")
	}
	return out.ID, nil
}
