package request

import (
	"github.com/merchantsvc/svc/api/wire"
	"github.com/merchantsvc/svc/storage/theme"
)

// Publish is the JSON body handlePublishTheme reads (api/theme.go).
type Publish struct {
	Name *string `json:"name"`
}

// Valid lists what is wrong with the body, for wire.Decode's 422.
func (req Publish) Valid() []wire.FieldError {
	var c Checker
	if req.Name != nil {
		c.Text("name", *req.Name, 1, 100)
	}
	return c.Result()
}

// SwitchTheme is the JSON body handleSwitchTheme reads (api/theme.go): a
// theme of the library (theme.Builtins).
type SwitchTheme struct {
	ThemeID *string `json:"theme_id"`
}

// Valid lists what is wrong with the body, for wire.Decode's 422.
func (req SwitchTheme) Valid() []wire.FieldError {
	var c Checker
	c.Required("theme_id", req.ThemeID != nil)
	if req.ThemeID != nil {
		var ids []string
		for _, b := range theme.Builtins() {
			ids = append(ids, b.ID)
		}
		c.OneOf("theme_id", *req.ThemeID, ids)
	}
	return c.Result()
}
