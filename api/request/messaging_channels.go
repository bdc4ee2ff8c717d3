package request

import (
	"strings"

	"github.com/merchantsvc/svc/api/wire"
)

// ConnectWhatsApp is the JSON body handleConnectWhatsApp reads
// (api/messaging_channels.go): the Cloud API number and business account,
// and the secrets Meta gave the merchant.
type ConnectWhatsApp struct {
	PhoneNumberID string `json:"phone_number_id"`
	WABAID        string `json:"waba_id"`
	AccessToken   string `json:"access_token"`
	AppSecret     string `json:"app_secret"`
}

// Valid lists what is wrong with the body, for wire.Decode's 422.
func (req ConnectWhatsApp) Valid() []wire.FieldError {
	var c Checker
	for _, id := range []struct{ field, value string }{{"phone_number_id", req.PhoneNumberID}, {"waba_id", req.WABAID}} {
		switch {
		case id.value == "":
			c.Add(id.field, "required", "is required")
		case len(id.value) > 32 || strings.Trim(id.value, "0123456789") != "":
			c.Add(id.field, "invalid", "must be the numeric id Meta shows (at most 32 digits)")
		}
	}
	for _, secret := range []struct {
		field, value string
		min, max     int
	}{{"access_token", req.AccessToken, 16, 1024}, {"app_secret", req.AppSecret, 16, 255}} {
		if secret.value == "" {
			c.Add(secret.field, "required", "is required")
			continue
		}
		c.Text(secret.field, secret.value, secret.min, secret.max)
	}
	return c.Result()
}
