package request

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/merchantsvc/svc/api/wire"
)

// CreateMessageTemplate is the JSON body handleCreateMessageTemplate reads
// (api/messaging_templates.go).
type CreateMessageTemplate struct {
	Channel  string            `json:"channel"`
	Name     string            `json:"name"`
	Category string            `json:"category"`
	Language string            `json:"language"`
	Header   *string           `json:"header"`
	Body     string            `json:"body"`
	Footer   *string           `json:"footer"`
	Buttons  []string          `json:"buttons"`
	Examples map[string]string `json:"examples"`
}

var (
	templateName        = regexp.MustCompile(`^[a-z0-9_]{1,512}$`)
	templatePlaceholder = regexp.MustCompile(`\{\{(\d+)\}\}`)
)

// Placeholders are the body's {{n}} numbers in order of first use.
func (req CreateMessageTemplate) Placeholders() []int {
	var out []int
	for _, m := range templatePlaceholder.FindAllStringSubmatch(req.Body, -1) {
		n, _ := strconv.Atoi(m[1])
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}

// BodyExamples are the examples of the body's placeholders 1..n in order.
func (req CreateMessageTemplate) BodyExamples() []string {
	ns := req.Placeholders()
	slices.Sort(ns)
	out := make([]string, 0, len(ns))
	for _, n := range ns {
		out = append(out, req.Examples[strconv.Itoa(n)])
	}
	return out
}

// Valid lists what is wrong with the body, for wire.Decode's 422.
func (req CreateMessageTemplate) Valid() []wire.FieldError {
	var c Checker
	c.OneOf("channel", req.Channel, []string{"whatsapp", "email"})
	if !templateName.MatchString(req.Name) {
		c.Add("name", "invalid", "must be 1-512 of a-z, 0-9 and _")
	}
	c.OneOf("category", req.Category, []string{"marketing", "utility", "authentication"})
	c.OneOf("language", req.Language, []string{"ar", "en"})
	if req.Header != nil {
		c.Text("header", *req.Header, 1, 60)
	}
	if req.Footer != nil {
		c.Text("footer", *req.Footer, 1, 60)
	}
	if req.Body == "" || utf8.RuneCountInString(req.Body) > 1024 {
		c.Add("body", "out_of_range", "must be 1-1024 characters")
	}
	// Placeholders number 1..n with none skipped, each with an example.
	ns := req.Placeholders()
	sorted := slices.Sorted(slices.Values(ns))
	for i, n := range sorted {
		if n != i+1 {
			c.Add("body", "invalid_placeholders", "placeholders must be {{1}} to {{n}} with none skipped")
			break
		}
	}
	for _, n := range sorted {
		if ex := req.Examples[strconv.Itoa(n)]; ex == "" {
			c.Add(fmt.Sprintf("examples.%d", n), "required", "each placeholder needs an example")
		}
	}
	for key := range req.Examples {
		if n, err := strconv.Atoi(key); err != nil || !slices.Contains(ns, n) {
			c.Add("examples."+key, "unknown_placeholder", "names no placeholder of the body")
		}
	}
	if len(req.Buttons) > 3 {
		c.Add("buttons", "too_many", "at most 3 buttons")
	}
	for i, b := range req.Buttons {
		c.Text(fmt.Sprintf("buttons[%d]", i), b, 1, 25)
	}
	return c.Result()
}
