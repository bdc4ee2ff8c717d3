package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"mime"
	"net/http"
	"reflect"
	"slices"
	"strings"
)

// MaxJSONBody is the JSON body limit of decisions §1.
const MaxJSONBody = 1 << 20

// validator is a request body that checks itself after decoding.
type validator interface {
	Valid() []FieldError
}

// Decode reads a JSON body into T: 415 unless JSON (a body without a
// Content-Type included), 413 over 1 MiB, 400 when malformed, 422 for
// unknown fields or what Valid refuses. An empty body is {}.
func Decode[T validator](r *http.Request) (T, error) {
	var v T
	ct := r.Header.Get("Content-Type")
	if ct != "" {
		mediaType, _, err := mime.ParseMediaType(ct)
		if err != nil || (mediaType != "application/json" && !strings.HasSuffix(mediaType, "+json")) {
			return v, ErrUnsupportedMediaType
		}
	}
	body, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, MaxJSONBody))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return v, ErrPayloadTooLarge
		}
		return v, ErrMalformedJSON
	}
	if len(bytes.TrimSpace(body)) == 0 {
		body = []byte("{}")
	} else if ct == "" {
		return v, ErrUnsupportedMediaType
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
		return ErrMalformedJSON
	}
	var (
		syntaxErr *json.SyntaxError
		typeErr   *json.UnmarshalTypeError
	)
	switch {
	case err == nil:
		return nil
	case errors.As(err, &syntaxErr), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return ErrMalformedJSON
	case errors.As(err, &typeErr):
		field := typeErr.Field
		if field == "" {
			field = "body"
		}
		return validationError([]FieldError{{Field: field, Code: "invalid_type",
			Message: fmt.Sprintf("must be %s", jsonTypeName(typeErr.Type.Kind().String())), MessageAr: "نوع القيمة غير صحيح"}})
	default:
		// encoding/json v1 has no typed error for an unknown field, so find
		// it by walking the body against the request type.
		if field := unknownField(body, reflect.TypeOf(v).Elem()); field != "" {
			return validationError([]FieldError{{Field: field, Code: "unknown_field",
				Message: "unknown field", MessageAr: "حقل غير معروف"}})
		}
		return ErrMalformedJSON
	}
}

var unmarshalerType = reflect.TypeFor[json.Unmarshaler]()

// unknownField returns the dotted path of the first key in body that the
// request type t does not declare ("" when every key is known). Keys match
// field names without case, as encoding/json matches them.
func unknownField(body []byte, t reflect.Type) string {
	var doc any
	if err := json.Unmarshal(body, &doc); err != nil {
		return ""
	}
	return findUnknown(doc, t, "")
}

func findUnknown(node any, t reflect.Type, path string) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if opt, ok := reflect.New(t).Interface().(interface{ optionalOf() reflect.Type }); ok {
		return findUnknown(node, opt.optionalOf(), path)
	}
	if reflect.PointerTo(t).Implements(unmarshalerType) {
		return "" // decodes itself (json.RawMessage, time.Time)
	}
	join := func(key string) string {
		if path == "" {
			return key
		}
		return path + "." + key
	}
	switch t.Kind() {
	case reflect.Struct:
		obj, ok := node.(map[string]any)
		if !ok {
			return ""
		}
		fields := map[string]reflect.Type{}
		for i := range t.NumField() {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name != "" && name != "-" && f.IsExported() {
				fields[strings.ToLower(name)] = f.Type
			}
		}
		keys := slices.Sorted(maps.Keys(obj))
		for _, key := range keys {
			ft, known := fields[strings.ToLower(key)]
			if !known {
				return join(key)
			}
			if unknown := findUnknown(obj[key], ft, join(key)); unknown != "" {
				return unknown
			}
		}
	case reflect.Slice, reflect.Array:
		list, _ := node.([]any)
		for i, item := range list {
			if unknown := findUnknown(item, t.Elem(), fmt.Sprintf("%s[%d]", path, i)); unknown != "" {
				return unknown
			}
		}
	}
	return ""
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

// Optional tells an absent JSON field from null from a value, for PATCH.
type Optional[T any] struct {
	Set   bool
	Null  bool
	Value T
}

// optionalOf names the wrapped type, for the unknown-field check.
func (Optional[T]) optionalOf() reflect.Type { return reflect.TypeFor[T]() }

// UnmarshalJSON is only called when the field is present.
func (o *Optional[T]) UnmarshalJSON(b []byte) error {
	o.Set = true
	if string(b) == "null" {
		o.Null = true
		return nil
	}
	return json.Unmarshal(b, &o.Value)
}
