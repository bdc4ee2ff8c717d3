package activities

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"
)

// Chat templates (rule 5): the tap-to-confirm request for COD orders of
// stores that confirm in chat, the passive confirmation for every other.
const (
	TemplateConfirmRequest = "order_confirmation_request"
	TemplateConfirmation   = "order_confirmation"
)

// ChatMessage is one template message to a customer's phone.
type ChatMessage struct {
	To       string
	Template string
	Language string
	Params   []string
	// Reference comes back on the customer's tap (the order id).
	Reference string
}

// ChatError is the provider's refusal with its numeric code.
type ChatError struct {
	Code    int
	Message string
}

func (e *ChatError) Error() string {
	return fmt.Sprintf("chat provider error %d: %s", e.Code, e.Message)
}

// ChatProvider sends template messages through a chat app.
type ChatProvider interface {
	SendTemplate(ctx context.Context, msg ChatMessage) (providerMessageID string, err error)
}

// HTTPChatProvider talks to a WhatsApp-Cloud-style HTTP API at BaseURL.
type HTTPChatProvider struct {
	BaseURL string
	Token   string
	Client  *http.Client
}

// SendTemplate posts {to, type: template, template: {name, language, components}}
// and reads {messages: [{id}]} or {error: {code, message}}.
func (p HTTPChatProvider) SendTemplate(ctx context.Context, msg ChatMessage) (string, error) {
	params := make([]map[string]string, 0, len(msg.Params))
	for _, v := range msg.Params {
		params = append(params, map[string]string{"type": "text", "text": v})
	}
	body, _ := json.Marshal(map[string]any{
		"messaging_product": "whatsapp", "to": msg.To, "type": "template", "biz_opaque_callback_data": msg.Reference,
		"template": map[string]any{"name": msg.Template, "language": map[string]string{"code": msg.Language},
			"components": []map[string]any{{"type": "body", "parameters": params}}},
	})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.BaseURL+"/messages", bytes.NewReader(body))
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+p.Token)
	client := p.Client
	if client == nil {
		client = &http.Client{Timeout: 15 * time.Second}
	}
	resp, err := client.Do(req)
	if err != nil {
		return "", fmt.Errorf("chat provider: %w", err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	var out struct {
		Messages []struct {
			ID string `json:"id"`
		} `json:"messages"`
		Error *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	_ = json.Unmarshal(raw, &out)
	switch {
	case out.Error != nil:
		return "", &ChatError{Code: out.Error.Code, Message: out.Error.Message}
	case resp.StatusCode >= 300 || len(out.Messages) == 0:
		return "", fmt.Errorf("chat provider answered %d", resp.StatusCode)
	}
	return out.Messages[0].ID, nil
}

// LogChatProvider stands in for a chat app in local development: it
// accepts every message and logs it.
type LogChatProvider struct {
	Log func(msg string, args ...any)
}

// SendTemplate logs what was sent, without the customer's phone number or
// the parameters (their name is one), and returns a made-up id.
func (p LogChatProvider) SendTemplate(_ context.Context, msg ChatMessage) (string, error) {
	if p.Log != nil {
		p.Log("chat message (dev provider, not sent)", "template", msg.Template, "language", msg.Language,
			"reference", msg.Reference, "params", len(msg.Params))
	}
	return fmt.Sprintf("dev-%d", time.Now().UnixNano()), nil
}
