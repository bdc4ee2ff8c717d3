package request

import "github.com/merchantsvc/svc/api/wire"

// DeleteImage is the JSON body handleDeleteImage reads (api/catalog_images.go).
type DeleteImage struct {
	URL string `json:"url"`
}

// Valid lists what is wrong with the body, for wire.Decode's 422.
func (req DeleteImage) Valid() []wire.FieldError {
	var c Checker
	c.Required("url", req.URL != "")
	return c.Result()
}

// SetAlt is the JSON body handleSetImageAlt reads (api/catalog_images.go).
type SetAlt struct {
	URL string `json:"url"`
	Alt string `json:"alt"`
}

// Valid lists what is wrong with the body, for wire.Decode's 422.
func (req SetAlt) Valid() []wire.FieldError {
	var c Checker
	c.Required("url", req.URL != "")
	c.Text("alt", req.Alt, 0, 512)
	return c.Result()
}
