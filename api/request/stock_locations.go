package request

import "github.com/merchantsvc/svc/api/wire"

type locationAddress struct {
	Line1   string  `json:"line1"`
	City    string  `json:"city"`
	Region  *string `json:"region,omitempty"`
	Country string  `json:"country"`
}

func (a locationAddress) check(c *Checker, prefix string) {
	c.Text(prefix+".line1", a.Line1, 1, 300)
	c.Text(prefix+".city", a.City, 1, 100)
	if a.Region != nil {
		c.Text(prefix+".region", *a.Region, 0, 100)
	}
	c.Country(prefix+".country", a.Country)
}

// CreateLocation is the JSON body handleCreateLocation reads (api/stock_locations.go).
type CreateLocation struct {
	Name      string           `json:"name"`
	Address   *locationAddress `json:"address"`
	Phone     *string          `json:"phone"`
	Priority  *int             `json:"priority"`
	IsDefault bool             `json:"is_default"`
}

// Valid lists what is wrong with the body, for wire.Decode's 422.
func (req CreateLocation) Valid() []wire.FieldError {
	var c Checker
	c.Text("name", req.Name, 1, 120)
	if req.Address == nil {
		c.Add("address", "required", "is required")
	} else {
		req.Address.check(&c, "address")
	}
	checkLocationPhone(&c, req.Phone)
	if req.Priority != nil {
		c.MinInt("priority", int64(*req.Priority), 0)
	}
	return c.Result()
}

func checkLocationPhone(c *Checker, phone *string) {
	if phone != nil && !phonePattern.MatchString(NormalizePhone(*phone)) {
		c.Add("phone", "invalid", "must be a phone number such as +201001234567")
	}
}

// UpdateLocation is the JSON body handleUpdateLocation reads (api/stock_locations.go).
type UpdateLocation struct {
	Name      wire.Optional[string]          `json:"name"`
	Address   wire.Optional[locationAddress] `json:"address"`
	Phone     wire.Optional[string]          `json:"phone"`
	Priority  wire.Optional[int]             `json:"priority"`
	IsDefault wire.Optional[bool]            `json:"is_default"`
	IsActive  wire.Optional[bool]            `json:"is_active"`
}

// Valid lists what is wrong with the body, for wire.Decode's 422.
func (req UpdateLocation) Valid() []wire.FieldError {
	var c Checker
	if notNull(&c, "name", req.Name) {
		c.Text("name", req.Name.Value, 1, 120)
	}
	if notNull(&c, "address", req.Address) {
		req.Address.Value.check(&c, "address")
	}
	if req.Phone.Set && !req.Phone.Null {
		checkLocationPhone(&c, &req.Phone.Value)
	}
	if notNull(&c, "priority", req.Priority) {
		c.MinInt("priority", int64(req.Priority.Value), 0)
	}
	notNull(&c, "is_default", req.IsDefault)
	notNull(&c, "is_active", req.IsActive)
	return c.Result()
}
