package request

import "github.com/merchantsvc/svc/api/wire"

// CreateCategory is the JSON body handleCreateCategory reads (api/catalog_categories.go).
type CreateCategory struct {
	Name     string  `json:"name"`
	ParentID *string `json:"parent_id"`
	Position int     `json:"position"`
}

// Valid lists what is wrong with the body, for wire.Decode's 422.
func (req CreateCategory) Valid() []wire.FieldError {
	var c Checker
	c.Text("name", req.Name, 1, maxNameLength)
	if req.ParentID != nil {
		c.UUID("parent_id", *req.ParentID)
	}
	c.MinInt("position", int64(req.Position), 0)
	return c.Result()
}

// UpdateCategory is the JSON body handleUpdateCategory reads (api/catalog_categories.go).
type UpdateCategory struct {
	Name     wire.Optional[string] `json:"name"`
	ParentID wire.Optional[string] `json:"parent_id"`
	Position wire.Optional[int]    `json:"position"`
}

// Valid lists what is wrong with the body, for wire.Decode's 422.
func (req UpdateCategory) Valid() []wire.FieldError {
	var c Checker
	if notNull(&c, "name", req.Name) {
		c.Text("name", req.Name.Value, 1, maxNameLength)
	}
	if req.ParentID.Set && !req.ParentID.Null {
		c.UUID("parent_id", req.ParentID.Value)
	}
	if notNull(&c, "position", req.Position) {
		c.MinInt("position", int64(req.Position.Value), 0)
	}
	return c.Result()
}
