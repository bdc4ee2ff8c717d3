package request

import (
	"strings"

	"github.com/merchantsvc/svc/api/wire"
)

// ConnectGateway is the JSON body handleConnectGateway reads (api/pay_gateways.go).
type ConnectGateway struct {
	SecretKey           string  `json:"secret_key"`
	WebhookSecret       string  `json:"webhook_secret"`
	StatementDescriptor *string `json:"statement_descriptor"`
}

// Valid lists what is wrong with the body, for wire.Decode's 422.
func (req ConnectGateway) Valid() []wire.FieldError {
	var c Checker
	switch {
	case req.SecretKey == "":
		c.Add("secret_key", "required", "is required")
	case !strings.HasPrefix(req.SecretKey, "sk_") && !strings.HasPrefix(req.SecretKey, "rk_"):
		c.Add("secret_key", "invalid", "must be a Stripe secret or restricted key (sk_… or rk_…), never the publishable key")
	default:
		c.Text("secret_key", req.SecretKey, 8, 255)
	}
	switch {
	case req.WebhookSecret == "":
		c.Add("webhook_secret", "required", "is required")
	case !strings.HasPrefix(req.WebhookSecret, "whsec_"):
		c.Add("webhook_secret", "invalid", "must be the endpoint's signing secret (whsec_…)")
	default:
		c.Text("webhook_secret", req.WebhookSecret, 8, 255)
	}
	if req.StatementDescriptor != nil {
		c.Text("statement_descriptor", *req.StatementDescriptor, 1, 22)
		if strings.ContainsAny(*req.StatementDescriptor, `<>\'"*`) {
			c.Add("statement_descriptor", "invalid", `may not contain < > \ ' " *`)
		}
	}
	return c.Result()
}
