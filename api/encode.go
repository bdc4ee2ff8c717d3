package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
)

// maxJSONBody is the JSON body limit of decisions §1.
const maxJSONBody = 1 << 20

type envelope struct {
	Success bool `json:"success"`
	Data    any  `json:"data"`
}

// listData is the paginated list of decisions §1.
type listData[T any] struct {
	Items      []T        `json:"items"`
	Pagination pagination `json:"pagination"`
}

type pagination struct {
	Page       int  `json:"page"`
	Limit      int  `json:"limit"`
	Total      int  `json:"total"`
	TotalPages int  `json:"total_pages"`
	HasNext    bool `json:"has_next"`
}

func newList[T any](items []T, page, limit, total int) listData[T] {
	if items == nil {
		items = []T{}
	}
	pages := (total + limit - 1) / limit
	return listData[T]{Items: items, Pagination: pagination{
		Page: page, Limit: limit, Total: total, TotalPages: pages, HasNext: page < pages,
	}}
}

// encode writes v as JSON with the status.
func encode(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// respond writes the success envelope.
func respond(w http.ResponseWriter, status int, data any) {
	encode(w, status, envelope{Success: true, Data: data})
}

// validator is a request body that checks itself after decoding.
type validator interface {
	Valid() []fieldError
}

// decode reads a JSON body into T: 415 unless JSON, 413 over 1 MiB, 400 when
// malformed, 422 for unknown fields or what Valid refuses.
func decode[T validator](r *http.Request) (T, error) {
	var v T
	if ct := r.Header.Get("Content-Type"); ct != "" {
		mediaType, _, err := mime.ParseMediaType(ct)
		if err != nil || (mediaType != "application/json" && !strings.HasSuffix(mediaType, "+json")) {
			return v, errUnsupportedMediaType
		}
	}
	body, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, maxJSONBody))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return v, errPayloadTooLarge
		}
		return v, errMalformedJSON
	}
	if len(bytes.TrimSpace(body)) == 0 {
		body = []byte("{}")
	}
	if err := decodeStrict(body, &v); err != nil {
		return v, err
	}
	if fields := v.Valid(); len(fields) > 0 {
		return v, validationError(fields)
	}
	return v, nil
}

// decodeStrict decodes JSON refusing unknown fields and trailing data.
func decodeStrict(body []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	err := dec.Decode(v)
	if err == nil && dec.More() {
		return errMalformedJSON
	}
	var (
		syntaxErr *json.SyntaxError
		typeErr   *json.UnmarshalTypeError
		fieldErr  *fieldTypeError
	)
	switch {
	case err == nil:
		return nil
	case errors.As(err, &syntaxErr), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return errMalformedJSON
	case errors.As(err, &typeErr):
		field := typeErr.Field
		if field == "" {
			field = "body"
		}
		return validationError([]fieldError{{Field: field, Code: "invalid_type",
			Message: fmt.Sprintf("must be %s", jsonTypeName(typeErr.Type.Kind().String())), MessageAr: "نوع القيمة غير صحيح"}})
	case errors.As(err, &fieldErr):
		return validationError([]fieldError{{Field: fieldErr.field, Code: "invalid_type", Message: fieldErr.message, MessageAr: "نوع القيمة غير صحيح"}})
	default:
		// encoding/json reports an unknown field only through its message:
		// `json: unknown field "name"` (there is no typed error in v1).
		if name, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
			return validationError([]fieldError{{Field: strings.Trim(name, `"`), Code: "unknown_field",
				Message: "unknown field", MessageAr: "حقل غير معروف"}})
		}
		return errMalformedJSON
	}
}

func jsonTypeName(kind string) string {
	switch kind {
	case "int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64":
		return "an integer"
	case "float32", "float64":
		return "a number"
	case "string":
		return "a string"
	case "bool":
		return "a boolean"
	case "slice", "array":
		return "an array"
	default:
		return "an object"
	}
}

// fieldTypeError is returned by custom unmarshalers for a wrong value type.
type fieldTypeError struct {
	field   string
	message string
}

func (e *fieldTypeError) Error() string { return e.field + ": " + e.message }

// optional tells an absent JSON field from null from a value, for PATCH.
type optional[T any] struct {
	Set   bool
	Null  bool
	Value T
}

// UnmarshalJSON is only called when the field is present.
func (o *optional[T]) UnmarshalJSON(b []byte) error {
	o.Set = true
	if string(b) == "null" {
		o.Null = true
		return nil
	}
	return json.Unmarshal(b, &o.Value)
}
