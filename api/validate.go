package api

import (
	"fmt"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/go-chi/chi/v5"
	"github.com/google/uuid"
	"github.com/merchantsvc/svc/storage"
)

// arabicFieldMessage is the Arabic text of a field error code.
func arabicFieldMessage(code string) string {
	switch code {
	case "required":
		return "هذا الحقل مطلوب"
	case "too_long":
		return "القيمة أطول من المسموح"
	case "too_short":
		return "القيمة أقصر من المسموح"
	case "out_of_range":
		return "القيمة خارج النطاق المسموح"
	case "range_too_large":
		return "الفترة أطول من المسموح: قصّرها أو اختر فاصلًا أكبر"
	case "unknown_timezone":
		return "ليست منطقة زمنية معروفة؛ استخدم اسمًا مثل Africa/Cairo"
	case "one_of":
		return "القيمة ليست من القيم المسموح بها"
	case "invalid_uuid":
		return "المعرّف ليس UUID صالحًا"
	case "invalid_type":
		return "نوع القيمة غير صحيح"
	case "not_found":
		return "العنصر المشار إليه غير موجود في هذا المتجر"
	case "cycle":
		return "لا يمكن أن يكون التصنيف أبًا لنفسه أو لأحد أسلافه"
	case "multiple_locations":
		return "المتغير مخزَّن في أكثر من موقع؛ استخدم تعديلات المخزون"
	case "managed_by_variants":
		return "للمنتج متغيرات؛ اكتب كمية كل متغير على حدة"
	case "sign":
		return "إشارة التغيير لا تناسب السبب: الاستلام يزيد المخزون والتالف ينقصه"
	case "duplicate":
		return "القيمة مكرّرة: عنصر آخر في الطلب يشير إلى الشيء نفسه"
	case "exceeds_balance":
		return "المبلغ أكبر من الرصيد المستحق بعد خصم الشحنات المفتوحة الأخرى"
	case "not_cod":
		return "الطلب ليس بالدفع عند الاستلام"
	case "only_when_delivered":
		return "يُرسل هذا الحقل مع الحالة delivered فقط"
	case "exceeds_returnable":
		return "الكمية أكبر مما يمكن إرجاعه: المُسلَّم ناقص المُرتجَع والمرتجعات المفتوحة"
	case "exceeds_refundable":
		return "المبلغ أكبر مما يمكن استرداده: المدفوع ناقص الاستردادات المعلّقة والناجحة"
	case "exceeds_refundable_quantity":
		return "الكمية أكبر من القطع التي لم تُسترد بعد"
	case "exceeds_shipping":
		return "المبلغ أكبر من رسوم الشحن التي لم تُسترد بعد"
	case "not_ascending":
		return "يجب أن تكون الشرائح تصاعدية تمامًا حسب الوزن"
	case "not_allowed":
		return "هذا الحقل غير مسموح به هنا"
	case "immutable":
		return "لا يمكن تغيير هذه القيمة؛ أنشئ خصمًا جديدًا"
	case "automatic":
		return "يُسوّى الاسترداد عبر بوابة الدفع تلقائيًا"
	case "original_unavailable":
		return "الاسترداد بطريقة الدفع الأصلية غير متاح لهذا الطلب"
	case "departed":
		return "لا يمكن التعديل بعد خروج الشحنة"
	case "invalid_url":
		return "الرابط غير صالح"
	case "default_location":
		return "لا يمكن إيقاف الموقع الافتراضي أو نزع صفته؛ اجعل موقعًا آخر هو الافتراضي أولًا"
	default:
		return "القيمة غير صالحة"
	}
}

// checker collects field errors so a 422 lists every problem at once.
type checker struct {
	fields []fieldError
}

func (c *checker) add(field, code, message string) {
	c.fields = append(c.fields, fieldError{Field: field, Code: code, Message: message, MessageAr: arabicFieldMessage(code)})
}

func (c *checker) required(field string, present bool) {
	if !present {
		c.add(field, "required", "is required")
	}
}

// text checks a string's length in characters.
func (c *checker) text(field, value string, minLen, maxLen int) {
	n := utf8.RuneCountInString(strings.TrimSpace(value))
	switch {
	case n < minLen && minLen == 1:
		c.add(field, "required", "is required")
	case n < minLen:
		c.add(field, "too_short", fmt.Sprintf("must be at least %d characters", minLen))
	case utf8.RuneCountInString(value) > maxLen:
		c.add(field, "too_long", fmt.Sprintf("must be at most %d characters", maxLen))
	}
}

func (c *checker) minInt(field string, value, minValue int64) {
	if value < minValue {
		c.add(field, "out_of_range", fmt.Sprintf("must be at least %d", minValue))
	}
}

// intRange checks a whole number between minValue and maxValue.
func (c *checker) intRange(field string, value, minValue, maxValue int64) {
	if value < minValue || value > maxValue {
		c.add(field, "out_of_range", fmt.Sprintf("must be between %d and %d", minValue, maxValue))
	}
}

// amount checks money in minor units: 0 to storage.MaxAmount (10^12).
func (c *checker) amount(field string, value int64) {
	if value < 0 || value > storage.MaxAmount {
		c.add(field, "out_of_range", "must be between 0 and 1000000000000 minor units")
	}
}

// asStrings lists the values of a named string type (statuses, kinds) for oneOf.
func asStrings[T ~string](values []T) []string {
	out := make([]string, len(values))
	for i, v := range values {
		out[i] = string(v)
	}
	return out
}

func (c *checker) oneOf(field, value string, allowed []string) {
	if !slices.Contains(allowed, value) {
		c.add(field, "one_of", "must be one of "+strings.Join(allowed, ", "))
	}
}

// uuid checks a uuid in canonical form.
func (c *checker) uuid(field, value string) {
	if _, err := parseUUID(value); err != nil {
		c.add(field, "invalid_uuid", "must be a uuid")
	}
}

// country checks an ISO 3166-1 alpha-2 code: two capital letters.
func (c *checker) country(field, value string) {
	if len(value) != 2 || value[0] < 'A' || value[0] > 'Z' || value[1] < 'A' || value[1] > 'Z' {
		c.add(field, "invalid", "must be an ISO 3166-1 alpha-2 code such as EG")
	}
}

func (c *checker) result() []fieldError { return c.fields }

// queryParser reads and checks query parameters, collecting errors.
type queryParser struct {
	checker
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
		q.add(name, "invalid_type", "must be an integer")
		return def
	}
	if n < minValue || n > maxValue {
		q.add(name, "out_of_range", fmt.Sprintf("must be between %d and %d", minValue, maxValue))
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
		q.add(name, "invalid_type", "must be an integer")
		return nil
	}
	if n < minValue {
		q.add(name, "out_of_range", fmt.Sprintf("must be at least %d", minValue))
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
		q.add(name, "invalid_type", "must be true or false")
		return nil
	}
	return &b
}

func (q *queryParser) uuid(name string) *uuid.UUID {
	raw := q.values.Get(name)
	if raw == "" {
		return nil
	}
	id, err := parseUUID(raw)
	if err != nil {
		q.add(name, "invalid_uuid", "must be a uuid")
		return nil
	}
	return &id
}

func (q *queryParser) enum(name string, allowed []string, def string) string {
	raw := q.values.Get(name)
	if raw == "" {
		return def
	}
	q.oneOf(name, raw, allowed)
	return raw
}

// page reads page and limit (1-100, default limit given).
func (q *queryParser) page(defaultLimit int) (page, limit int) {
	return q.intIn("page", 1, math.MaxInt32/100, 1), q.intIn("limit", 1, 100, defaultLimit)
}

func (q *queryParser) err() error {
	if len(q.fields) > 0 {
		return validationError(q.fields)
	}
	return nil
}

// parseUUID accepts only the canonical 36-character form.
func parseUUID(s string) (uuid.UUID, error) {
	if len(s) != 36 {
		return uuid.Nil, fmt.Errorf("not a canonical uuid")
	}
	return uuid.Parse(s)
}

// pathUUID reads a *_id path parameter; malformed answers 422 naming it.
func pathUUID(r *http.Request, name string) (uuid.UUID, error) {
	id, err := parseUUID(chi.URLParam(r, name))
	if err != nil {
		return uuid.Nil, validationError([]fieldError{{Field: name, Code: "invalid_uuid",
			Message: "must be a uuid in canonical form", MessageAr: arabicFieldMessage("invalid_uuid")}})
	}
	return id, nil
}

func itoa(i int) string { return strconv.Itoa(i) }

// dateTime reads an RFC 3339 date-time.
func (q *queryParser) dateTime(name string) *time.Time {
	raw := q.values.Get(name)
	if raw == "" {
		return nil
	}
	t, err := time.Parse(time.RFC3339, raw)
	if err != nil {
		q.add(name, "invalid_type", "must be an ISO 8601 date-time such as 2026-11-01T00:00:00Z")
		return nil
	}
	return &t
}
