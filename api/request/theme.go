package request

import "github.com/merchantsvc/svc/api/wire"

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
