package request

import (
	"fmt"
	"strings"

	"github.com/merchantsvc/svc/api/wire"
)

type roleRequest struct {
	Name   wire.Optional[string]   `json:"name"`
	Scopes wire.Optional[[]string] `json:"scopes"`
}

func (req roleRequest) check(c *Checker, create bool) {
	if create || req.Name.Set {
		c.Text("name", strings.TrimSpace(req.Name.Value), 1, 60)
	}
	if create || req.Scopes.Set {
		if n := len(req.Scopes.Value); n < 1 || n > len(AllScopes) {
			c.Add("scopes", "out_of_range", fmt.Sprintf("must name 1 to %d scopes", len(AllScopes)))
		}
		for i, scope := range req.Scopes.Value {
			c.OneOf(fmt.Sprintf("scopes[%d]", i), scope, AllScopes)
		}
	}
}

// CreateRole is the JSON body handleCreateRole reads (api/staff.go).
type CreateRole struct{ roleRequest }

// Valid lists what is wrong with the body, for wire.Decode's 422.
func (req CreateRole) Valid() []wire.FieldError {
	var c Checker
	req.check(&c, true)
	return c.Result()
}

// UpdateRole is the JSON body handleUpdateRole reads (api/staff.go).
type UpdateRole struct{ roleRequest }

// Valid lists what is wrong with the body, for wire.Decode's 422.
func (req UpdateRole) Valid() []wire.FieldError {
	var c Checker
	req.check(&c, false)
	return c.Result()
}

// MemberRole is the JSON body handleChangeMemberRole reads (api/staff.go).
type MemberRole struct {
	RoleID string `json:"role_id"`
}

// Valid lists what is wrong with the body, for wire.Decode's 422.
func (req MemberRole) Valid() []wire.FieldError {
	var c Checker
	c.UUID("role_id", req.RoleID)
	return c.Result()
}

// Invitation is the JSON body handleInvite reads (api/staff.go).
type Invitation struct {
	Email  string `json:"email"`
	RoleID string `json:"role_id"`
}

// Valid lists what is wrong with the body, for wire.Decode's 422.
func (req Invitation) Valid() []wire.FieldError {
	var c Checker
	checkEmail(&c, "email", strings.TrimSpace(req.Email))
	c.UUID("role_id", req.RoleID)
	return c.Result()
}

// InvitationToken is the JSON body handleLookupInvitation reads (api/staff.go).
type InvitationToken struct {
	Token string `json:"token"`
}

// Valid lists what is wrong with the body, for wire.Decode's 422.
func (req InvitationToken) Valid() []wire.FieldError {
	var c Checker
	c.Required("token", req.Token != "")
	return c.Result()
}

// AcceptInvitation is the JSON body handleAcceptInvitation reads (api/staff.go).
type AcceptInvitation struct {
	Token    string  `json:"token"`
	Name     *string `json:"name"`
	Password *string `json:"password"`
}

// Valid lists what is wrong with the body, for wire.Decode's 422.
func (req AcceptInvitation) Valid() []wire.FieldError {
	var c Checker
	c.Required("token", req.Token != "")
	if req.Name != nil {
		c.Text("name", strings.TrimSpace(*req.Name), 1, 200)
	}
	if req.Password != nil {
		checkNewPassword(&c, "password", *req.Password)
	}
	return c.Result()
}
