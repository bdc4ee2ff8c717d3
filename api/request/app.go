package request

import (
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"

	"github.com/merchantsvc/svc/api/wire"
	"github.com/merchantsvc/svc/storage"
)

var slugPattern = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{1,48}[a-z0-9]$`)

// Manifest is the JSON body handleRegisterApp reads (api/app.go).
type Manifest struct {
	Name   string `json:"name"`
	Slug   string `json:"slug"`
	AppURL string `json:"app_url"`
	OAuth  *struct {
		Scopes         []string `json:"scopes"`
		OptionalScopes []string `json:"optional_scopes"`
		RedirectURLs   []string `json:"redirect_urls"`
	} `json:"oauth"`
	Webhooks *struct {
		URL    string   `json:"url"`
		Events []string `json:"events"`
	} `json:"webhooks"`
}

// checkAppURL allows absolute https URLs without a query string or fragment,
// so that the signed strings stay predictable (spec §5.2 rule 7).
func checkAppURL(c *Checker, field, raw string) {
	u, err := url.Parse(raw)
	switch {
	case err != nil || u.Host == "" || !u.IsAbs():
		c.Add(field, "invalid", "must be an absolute https URL")
	case u.Scheme != "https":
		c.Add(field, "https_required", "must use https")
	case u.RawQuery != "" || u.ForceQuery || u.Fragment != "" || strings.Contains(raw, "#"):
		c.Add(field, "query_not_allowed", "must not have a query string or fragment")
	}
}

// Valid lists what is wrong with the body, for wire.Decode's 422.
func (req Manifest) Valid() []wire.FieldError {
	var c Checker
	c.Text("name", req.Name, 1, 100)
	if !slugPattern.MatchString(req.Slug) {
		c.Add("slug", "invalid", "must be 3-50 lowercase letters, digits and dashes")
	}
	checkAppURL(&c, "app_url", req.AppURL)
	if req.OAuth == nil {
		c.Add("oauth", "required", "is required")
		return c.Result()
	}
	if len(req.OAuth.Scopes) == 0 {
		c.Add("oauth.scopes", "required", "list at least one scope")
	}
	for i, s := range req.OAuth.Scopes {
		if !slices.Contains(AllScopes, s) {
			c.Add(fmt.Sprintf("oauth.scopes[%d]", i), "one_of", "must be one of the 18 scopes")
		}
	}
	for i, s := range req.OAuth.OptionalScopes {
		switch {
		case !slices.Contains(AllScopes, s):
			c.Add(fmt.Sprintf("oauth.optional_scopes[%d]", i), "one_of", "must be one of the 18 scopes")
		case slices.Contains(req.OAuth.Scopes, s):
			c.Add(fmt.Sprintf("oauth.optional_scopes[%d]", i), "duplicate", "is already a required scope")
		}
	}
	if len(req.OAuth.RedirectURLs) == 0 || len(req.OAuth.RedirectURLs) > 10 {
		c.Add("oauth.redirect_urls", "out_of_range", "list 1 to 10 redirect URLs")
	}
	for i, u := range req.OAuth.RedirectURLs {
		checkAppURL(&c, fmt.Sprintf("oauth.redirect_urls[%d]", i), u)
	}
	if req.Webhooks != nil {
		// The receiver's URL rules (https, public address) are checked by the
		// handler with the webhook guard.
		if len(req.Webhooks.Events) == 0 {
			c.Add("webhooks.events", "required", "list at least one event")
		}
		for i, e := range req.Webhooks.Events {
			if !slices.Contains(storage.WebhookEvents, e) {
				c.Add(fmt.Sprintf("webhooks.events[%d]", i), "one_of", "must be one of "+strings.Join(storage.WebhookEvents, ", "))
			}
		}
	}
	return c.Result()
}

// Token is the JSON body handleTokenExchange reads (api/app.go).
type Token struct {
	ClientID     string  `json:"client_id"`
	ClientSecret string  `json:"client_secret"`
	Code         string  `json:"code"`
	GrantType    *string `json:"grant_type"`
}

// Valid lists what is wrong with the body, for wire.Decode's 422.
func (req Token) Valid() []wire.FieldError {
	var c Checker
	c.Text("client_id", req.ClientID, 1, 200)
	c.Text("client_secret", req.ClientSecret, 1, 200)
	c.Text("code", req.Code, 1, 200)
	return c.Result()
}

// Revoke is the JSON body handleRevoke reads (api/app.go).
type Revoke struct {
	ClientID     string `json:"client_id"`
	ClientSecret string `json:"client_secret"`
	Token        string `json:"token"`
}

// Valid lists what is wrong with the body, for wire.Decode's 422.
func (req Revoke) Valid() []wire.FieldError {
	var c Checker
	c.Text("client_id", req.ClientID, 1, 200)
	c.Text("client_secret", req.ClientSecret, 1, 200)
	c.Text("token", req.Token, 1, 500)
	return c.Result()
}
