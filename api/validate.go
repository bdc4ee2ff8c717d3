package api

import (
	"fmt"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/google/uuid"
	"github.com/merchantsvc/svc/api/request"
	"github.com/merchantsvc/svc/api/wire"
)

// queryParser reads and checks query parameters, collecting errors.
type queryParser struct {
	request.Checker
	values url.Values
}

func newQueryParser(r *http.Request) *queryParser {
	return &queryParser{values: r.URL.Query()}
}

func (q *queryParser) str(name string) *string {
	if !q.values.Has(name) {
		return nil
	}
	v := q.values.Get(name)
	return &v
}

// intIn reads an integer in [minValue, maxValue], def when absent.
func (q *queryParser) intIn(name string, minValue, maxValue, def int) int {
	raw := q.values.Get(name)
	if !q.values.Has(name) || raw == "" {
		return def
	}
	n, err := strconv.Atoi(raw)
	if err != nil {
		q.Add(name, "invalid_type", "must be an integer")
		return def
	}
	if n < minValue || n > maxValue {
		q.Add(name, "out_of_range", fmt.Sprintf("must be between %d and %d", minValue, maxValue))
		return def
	}
	return n
}

func (q *queryParser) int64Min(name string, minValue int64) *int64 {
	raw := q.values.Get(name)
	if raw == "" {
		return nil
	}
	n, err := strconv.ParseInt(raw, 10, 64)
	if err != nil {
		q.Add(name, "invalid_type", "must be an integer")
		return nil
	}
	if n < minValue {
		q.Add(name, "out_of_range", fmt.Sprintf("must be at least %d", minValue))
		return nil
	}
	return &n
}

func (q *queryParser) boolean(name string) *bool {
	raw := q.values.Get(name)
	if raw == "" {
		return nil
	}
	b, err := strconv.ParseBool(raw)
	if err != nil {
		q.Add(name, "invalid_type", "must be true or false")
		return nil
	}
	return &b
}

func (q *queryParser) uuid(name string) *uuid.UUID {
	raw := q.values.Get(name)
	if raw == "" {
		return nil
	}
	id, err := request.ParseUUID(raw)
	if err != nil {
		q.Add(name, "invalid_uuid", "must be a uuid")
		return nil
	}
	return &id
}

func (q *queryParser) enum(name string, allowed []string, def string) string {
	raw := q.values.Get(name)
	if raw == "" {
		return def
	}
	q.OneOf(name, raw, allowed)
	return raw
}

// page reads page and limit (1-100, default limit given).
func (q *queryParser) page(defaultLimit int) (page, limit int) {
	return q.intIn("page", 1, math.MaxInt32/100, 1), q.intIn("limit", 1, 100, defaultLimit)
}

func (q *queryParser) err() error {
	if len(q.Fields) > 0 {
		return validationError(q.Fields)
	}
	return nil
}

// pathUUID reads a *_id path parameter; malformed answers 422 naming it.
func pathUUID(r *http.Request, name string) (uuid.UUID, error) {
	id, err := request.ParseUUID(chi.URLParam(r, name))
	if err != nil {
		return uuid.Nil, validationError([]wire.FieldError{{Field: name, Code: "invalid_uuid",
			Message: "must be a uuid in canonical form", MessageAr: wire.ArabicFieldMessage("invalid_uuid")}})
	}
	return id, nil
}

// dateTime reads an RFC 3339 date-time.
func (q *queryParser) dateTime(name string) *time.Time {
	raw := q.values.Get(name)
	if raw == "" {
		return nil
	}
	t, err := time.Parse(time.RFC3339, raw)
	if err != nil {
		q.Add(name, "invalid_type", "must be an ISO 8601 date-time such as 2026-11-01T00:00:00Z")
		return nil
	}
	return &t
}
