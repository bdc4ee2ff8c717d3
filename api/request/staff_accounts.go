package request

import (
	"net/mail"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/merchantsvc/svc/api/wire"
)

// currencies the service prices in (decisions §1 lists their exponents).
var currencies = []string{"EGP", "SAR", "AED", "USD", "EUR", "KWD", "BHD", "OMR", "JOD", "QAR"}

var subdomainPattern = regexp.MustCompile(`^[a-z0-9](?:[a-z0-9-]{1,61}[a-z0-9])$`)

// Signup is the JSON body handleSignup reads (api/staff_accounts.go).
type Signup struct {
	Email    string `json:"email"`
	Password string `json:"password"`
	Name     string `json:"name"`
	Store    struct {
		Name            string `json:"name"`
		Subdomain       string `json:"subdomain"`
		Currency        string `json:"currency"`
		DefaultLanguage string `json:"default_language"`
	} `json:"store"`
}

// Valid lists what is wrong with the body, for wire.Decode's 422.
func (req Signup) Valid() []wire.FieldError {
	var c Checker
	if _, err := mail.ParseAddress(req.Email); err != nil || !strings.Contains(req.Email, "@") || strings.ContainsAny(req.Email, "<> ") {
		c.Add("email", "invalid", "must be an email address")
	}
	checkNewPassword(&c, "password", req.Password)
	c.Text("name", req.Name, 1, 200)
	c.Text("store.name", req.Store.Name, 1, 200)
	if !subdomainPattern.MatchString(req.Store.Subdomain) {
		c.Add("store.subdomain", "invalid", "must be 3-63 lowercase letters, digits or hyphens, not starting or ending with a hyphen")
	}
	c.OneOf("store.currency", req.Store.Currency, currencies)
	c.OneOf("store.default_language", req.Store.DefaultLanguage, []string{"ar", "en"})
	return c.Result()
}

// checkNewPassword holds a new password to 10 characters and bcrypt's 72
// bytes.
func checkNewPassword(c *Checker, field, password string) {
	switch {
	case len([]rune(password)) < 10:
		c.Add(field, "too_short", "must be at least 10 characters")
	case len(password) > maxPasswordBytes:
		c.Add(field, "too_long", "must be at most 72 bytes (72 Latin or about 36 Arabic letters)")
	}
}

// Login is the JSON body handleLogin reads (api/staff_accounts.go).
type Login struct {
	Email    string `json:"email"`
	Password string `json:"password"`
}

// Valid lists what is wrong with the body, for wire.Decode's 422.
func (req Login) Valid() []wire.FieldError {
	var c Checker
	c.Required("email", req.Email != "")
	c.Required("password", req.Password != "")
	if len(req.Password) > maxPasswordBytes {
		c.Add("password", "too_long", "must be at most 72 bytes")
	}
	return c.Result()
}

// maxPasswordBytes is all bcrypt reads of a password; a longer one would
// fail to hash (a 500), so it is refused as the input it is.
const maxPasswordBytes = 72

// CreateToken is the JSON body handleCreateAccessToken reads (api/staff_accounts.go).
type CreateToken struct {
	Name          string   `json:"name"`
	Scopes        []string `json:"scopes"`
	ExpiresInDays *int     `json:"expires_in_days"`
}

// Valid lists what is wrong with the body, for wire.Decode's 422.
func (req CreateToken) Valid() []wire.FieldError {
	var c Checker
	c.Text("name", req.Name, 1, 100)
	if len(req.Scopes) == 0 {
		c.Add("scopes", "required", "must name at least one scope")
	}
	for i, scope := range req.Scopes {
		if !slices.Contains(AllScopes, scope) {
			c.Add("scopes["+strconv.Itoa(i)+"]", "one_of", "must be one of "+strings.Join(AllScopes, ", "))
		}
	}
	if req.ExpiresInDays != nil && (*req.ExpiresInDays < 1 || *req.ExpiresInDays > 365) {
		c.Add("expires_in_days", "out_of_range", "must be between 1 and 365")
	}
	return c.Result()
}

// ChangePassword is the JSON body handleChangePassword reads
// (api/staff_recovery.go).
type ChangePassword struct {
	CurrentPassword string `json:"current_password"`
	NewPassword     string `json:"new_password"`
}

// Valid lists what is wrong with the body, for wire.Decode's 422.
func (req ChangePassword) Valid() []wire.FieldError {
	var c Checker
	c.Required("current_password", req.CurrentPassword != "")
	if len(req.CurrentPassword) > maxPasswordBytes {
		c.Add("current_password", "too_long", "must be at most 72 bytes")
	}
	checkNewPassword(&c, "new_password", req.NewPassword)
	return c.Result()
}

// PasswordReset is the JSON body handlePasswordReset reads
// (api/staff_recovery.go).
type PasswordReset struct {
	Email string `json:"email"`
}

// Valid lists what is wrong with the body, for wire.Decode's 422.
func (req PasswordReset) Valid() []wire.FieldError {
	var c Checker
	c.Text("email", req.Email, 1, 320)
	return c.Result()
}

// ConfirmPasswordReset is the JSON body handleConfirmPasswordReset reads
// (api/staff_recovery.go).
type ConfirmPasswordReset struct {
	Token    string `json:"token"`
	Password string `json:"password"`
}

// Valid lists what is wrong with the body, for wire.Decode's 422.
func (req ConfirmPasswordReset) Valid() []wire.FieldError {
	var c Checker
	c.Required("token", req.Token != "")
	checkNewPassword(&c, "password", req.Password)
	return c.Result()
}

// VerifyEmail is the JSON body handleVerifyEmail reads
// (api/staff_recovery.go).
type VerifyEmail struct {
	Token string `json:"token"`
}

// Valid lists what is wrong with the body, for wire.Decode's 422.
func (req VerifyEmail) Valid() []wire.FieldError {
	var c Checker
	c.Required("token", req.Token != "")
	return c.Result()
}
