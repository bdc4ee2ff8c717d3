package request

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/merchantsvc/svc/api/wire"
	"github.com/merchantsvc/svc/storage"
)

// Checker collects field errors so a 422 lists every problem at once.
type Checker struct {
	// Fields are the problems found so far.
	Fields []wire.FieldError
}

// Add records a problem with a field.
func (c *Checker) Add(field, code, message string) {
	c.Fields = append(c.Fields, wire.FieldError{Field: field, Code: code, Message: message, MessageAr: wire.ArabicFieldMessage(code)})
}

// Required checks that a field was sent.
func (c *Checker) Required(field string, present bool) {
	if !present {
		c.Add(field, "required", "is required")
	}
}

// Text checks a string's length in characters.
func (c *Checker) Text(field, value string, minLen, maxLen int) {
	n := utf8.RuneCountInString(strings.TrimSpace(value))
	switch {
	case n < minLen && minLen == 1:
		c.Add(field, "required", "is required")
	case n < minLen:
		c.Add(field, "too_short", fmt.Sprintf("must be at least %d characters", minLen))
	case utf8.RuneCountInString(value) > maxLen:
		c.Add(field, "too_long", fmt.Sprintf("must be at most %d characters", maxLen))
	}
}

// MinInt checks a whole number of at least minValue.
func (c *Checker) MinInt(field string, value, minValue int64) {
	if value < minValue {
		c.Add(field, "out_of_range", fmt.Sprintf("must be at least %d", minValue))
	}
}

// IntRange checks a whole number between minValue and maxValue.
func (c *Checker) IntRange(field string, value, minValue, maxValue int64) {
	if value < minValue || value > maxValue {
		c.Add(field, "out_of_range", fmt.Sprintf("must be between %d and %d", minValue, maxValue))
	}
}

// Amount checks money in minor units: 0 to storage.MaxAmount (10^12).
func (c *Checker) Amount(field string, value int64) {
	if value < 0 || value > storage.MaxAmount {
		c.Add(field, "out_of_range", "must be between 0 and 1000000000000 minor units")
	}
}

// AsStrings lists the values of a named string type (statuses, kinds) for oneOf.
func AsStrings[T ~string](values []T) []string {
	out := make([]string, len(values))
	for i, v := range values {
		out[i] = string(v)
	}
	return out
}

// OneOf checks a value among the allowed ones.
func (c *Checker) OneOf(field, value string, allowed []string) {
	if !slices.Contains(allowed, value) {
		c.Add(field, "one_of", "must be one of "+strings.Join(allowed, ", "))
	}
}

// UUID checks a uuid in canonical form.
func (c *Checker) UUID(field, value string) {
	if _, err := ParseUUID(value); err != nil {
		c.Add(field, "invalid_uuid", "must be a uuid")
	}
}

// Country checks an ISO 3166-1 alpha-2 code: two capital letters.
func (c *Checker) Country(field, value string) {
	if len(value) != 2 || value[0] < 'A' || value[0] > 'Z' || value[1] < 'A' || value[1] > 'Z' {
		c.Add(field, "invalid", "must be an ISO 3166-1 alpha-2 code such as EG")
	}
}

// Result is every problem found.
func (c *Checker) Result() []wire.FieldError { return c.Fields }

// ParseUUID accepts only the canonical 36-character form.
func ParseUUID(s string) (uuid.UUID, error) {
	if len(s) != 36 {
		return uuid.Nil, fmt.Errorf("not a canonical uuid")
	}
	return uuid.Parse(s)
}
