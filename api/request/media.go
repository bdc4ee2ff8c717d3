package request

import (
	"strings"

	"github.com/merchantsvc/svc/api/wire"
)

// MediaAlt is an item's alt text by language; a language absent is kept,
// null (or empty) clears it.
type MediaAlt struct {
	Ar wire.Optional[string] `json:"ar"`
	En wire.Optional[string] `json:"en"`
}

// UpdateMedia is the JSON body handleUpdateMedia reads (api/media.go):
// `alt` is the only field a media item's owner edits; null clears both
// languages.
type UpdateMedia struct {
	Alt wire.Optional[MediaAlt] `json:"alt"`
}

// Valid lists what is wrong with the body, for wire.Decode's 422.
func (req UpdateMedia) Valid() []wire.FieldError {
	var c Checker
	c.Required("alt", req.Alt.Set)
	for _, lang := range []struct {
		field string
		text  wire.Optional[string]
	}{{"alt.ar", req.Alt.Value.Ar}, {"alt.en", req.Alt.Value.En}} {
		if lang.text.Set && !lang.text.Null {
			c.Text(lang.field, strings.TrimSpace(lang.text.Value), 0, 512)
		}
	}
	return c.Result()
}
