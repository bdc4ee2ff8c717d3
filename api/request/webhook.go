package request

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/merchantsvc/svc/api/wire"
	"github.com/merchantsvc/svc/storage"
)

func checkEvents(c *Checker, events []string) {
	if len(events) == 0 {
		c.Add("events", "required", "must name at least one event")
	}
	for i, e := range events {
		if !slices.Contains(storage.WebhookEvents, e) {
			c.Add(fmt.Sprintf("events[%d]", i), "one_of", "must be one of "+strings.Join(storage.WebhookEvents, ", "))
		}
	}
}

// CreateSubscription is the JSON body handleCreateWebhook reads (api/webhook.go).
type CreateSubscription struct {
	URL         string   `json:"url"`
	Events      []string `json:"events"`
	Description string   `json:"description"`
	IsActive    *bool    `json:"is_active"`
}

// Valid lists what is wrong with the body, for wire.Decode's 422.
func (req CreateSubscription) Valid() []wire.FieldError {
	var c Checker
	c.Required("url", req.URL != "")
	checkEvents(&c, req.Events)
	c.Text("description", req.Description, 0, 500)
	return c.Result()
}

// UpdateSubscription is the JSON body handleUpdateWebhook reads (api/webhook.go).
type UpdateSubscription struct {
	URL         wire.Optional[string]   `json:"url"`
	Events      wire.Optional[[]string] `json:"events"`
	Description wire.Optional[string]   `json:"description"`
	IsActive    wire.Optional[bool]     `json:"is_active"`
}

// Valid lists what is wrong with the body, for wire.Decode's 422.
func (req UpdateSubscription) Valid() []wire.FieldError {
	var c Checker
	notNull(&c, "url", req.URL)
	if notNull(&c, "events", req.Events) {
		checkEvents(&c, req.Events.Value)
	}
	if notNull(&c, "description", req.Description) {
		c.Text("description", req.Description.Value, 0, 500)
	}
	notNull(&c, "is_active", req.IsActive)
	return c.Result()
}

// Recover is the JSON body handleRecover reads (api/webhook.go).
type Recover struct {
	Since *time.Time `json:"since"`
}

// Valid lists what is wrong with the body, for wire.Decode's 422.
func (req Recover) Valid() []wire.FieldError {
	var c Checker
	c.Required("since", req.Since != nil)
	return c.Result()
}
