package request

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/merchantsvc/svc/api/wire"
	"github.com/merchantsvc/svc/storage"
	"github.com/merchantsvc/svc/storage/handle"
)

// Collections (decisions §21): the bodies of api/collection.go.

// collectionArabic are the Arabic messages of the codes only collections use.
var collectionArabic = map[string]string{
	"type":          "نوع القيمة غير مناسب لهذا الحقل",
	"limit_reached": "بلغ المتجر الحد الأقصى للمجموعات الذكية",
	"mismatch":      "يجب أن تذكر كل منتجات المجموعة مرة واحدة",
	"blank":         "المعرّف فارغ بعد التوحيد",
	"invalid":       "يحتوي المعرّف على رموز غير مسموح بها",
	"too_many":      "العدد أكبر من المسموح",
}

// addCollection records a problem with its Arabic message.
func addCollection(c *Checker, field, code, message string) {
	ar, ok := collectionArabic[code]
	if !ok {
		ar = wire.ArabicFieldMessage(code)
	}
	c.Fields = append(c.Fields, wire.FieldError{Field: field, Code: code, Message: message, MessageAr: ar})
}

// CollectionText is bilingual text: {ar, en}, one at least.
type CollectionText struct {
	Ar *string `json:"ar"`
	En *string `json:"en"`
}

// Stored is the text as stored, trimmed.
func (t CollectionText) Stored() storage.CollectionText {
	var out storage.CollectionText
	if t.Ar != nil {
		out.Ar = strings.TrimSpace(*t.Ar)
	}
	if t.En != nil {
		out.En = strings.TrimSpace(*t.En)
	}
	return out
}

func checkCollectionText(c *Checker, field string, t CollectionText, required bool, maxLen int) {
	s := t.Stored()
	if required && s.Ar == "" && s.En == "" {
		c.Add(field, "required", "needs ar or en")
	}
	if utf8.RuneCountInString(s.Ar) > maxLen {
		c.Add(field+".ar", "too_long", fmt.Sprintf("must be at most %d characters", maxLen))
	}
	if utf8.RuneCountInString(s.En) > maxLen {
		c.Add(field+".en", "too_long", fmt.Sprintf("must be at most %d characters", maxLen))
	}
}

// CollectionSEO is what search engines see: title ≤ 70, description ≤ 320.
type CollectionSEO struct {
	Title       string `json:"title"`
	Description string `json:"description"`
}

func checkCollectionSEO(c *Checker, seo CollectionSEO) {
	if utf8.RuneCountInString(seo.Title) > 70 {
		c.Add("seo.title", "too_long", "must be at most 70 characters")
	}
	if utf8.RuneCountInString(seo.Description) > 320 {
		c.Add("seo.description", "too_long", "must be at most 320 characters")
	}
}

// Handle normalises a handle a merchant typed (a collection's, a product's),
// or records why it cannot be one.
func Handle(c *Checker, typed string) string {
	h, err := handle.Normalize(typed)
	switch {
	case errors.Is(err, handle.ErrBlank):
		addCollection(c, "handle", "blank", "is empty once normalised")
	case errors.Is(err, handle.ErrTooLong):
		addCollection(c, "handle", "too_long", fmt.Sprintf("must be at most %d characters", handle.MaxLength))
	case err != nil:
		addCollection(c, "handle", "invalid", "may hold letters, digits, '-' and '_' only")
	}
	return h
}

// CheckCollectionRules checks a smart collection's rules: match all or any,
// 1-20 conditions, each naming a field, a relation that field takes and a
// value of its type (none for is_set and is_not_set).
func CheckCollectionRules(c *Checker, rules *storage.CollectionRules) {
	if rules == nil {
		c.Add("rules", "required", "a smart collection needs rules")
		return
	}
	c.OneOf("rules.match", rules.Match, []string{"all", "any"})
	if len(rules.Conditions) < 1 || len(rules.Conditions) > storage.MaxCollectionConditions {
		c.Add("rules.conditions", "out_of_range", fmt.Sprintf("must hold 1 to %d conditions", storage.MaxCollectionConditions))
	}
	for i, cond := range rules.Conditions {
		at := fmt.Sprintf("rules.conditions[%d]", i)
		def, ok := storage.CollectionRuleFields[cond.Field]
		if !ok {
			c.Add(at+".field", "one_of", "must be one of "+strings.Join(storage.CollectionRuleFieldNames, ", "))
			continue
		}
		if !slices.Contains(def.Relations, cond.Relation) {
			c.Add(at+".relation", "one_of", "must be one of "+strings.Join(def.Relations, ", "))
			continue
		}
		absent := len(bytes.TrimSpace(cond.Value)) == 0 || string(bytes.TrimSpace(cond.Value)) == "null"
		if cond.Relation == storage.RelIsSet || cond.Relation == storage.RelIsNotSet {
			if !absent {
				addCollection(c, at+".value", "not_allowed", "is_set and is_not_set take no value")
			}
			continue
		}
		if absent {
			c.Add(at+".value", "required", "is required")
			continue
		}
		checkRuleValue(c, at+".value", def.Type, cond.Value)
	}
}

func checkRuleValue(c *Checker, field, typ string, raw json.RawMessage) {
	wrongType := func(want string) { addCollection(c, field, "type", "must be "+want) }
	switch typ {
	case "uuid":
		var s string
		if json.Unmarshal(raw, &s) != nil {
			wrongType("a category id")
			return
		}
		c.UUID(field, s)
	case "amount", "days":
		var n int64
		if json.Unmarshal(raw, &n) != nil {
			wrongType("a whole number")
			return
		}
		if typ == "amount" {
			c.Amount(field, n)
		} else {
			c.IntRange(field, n, 0, 36500)
		}
	case "boolean":
		var b bool
		if json.Unmarshal(raw, &b) != nil {
			wrongType("true or false")
		}
	case "kind":
		var s string
		if json.Unmarshal(raw, &s) != nil {
			wrongType("a string")
			return
		}
		c.OneOf(field, s, storage.ProductKinds)
	default:
		var s string
		if json.Unmarshal(raw, &s) != nil {
			wrongType("a string")
			return
		}
		c.Text(field, s, 1, 255)
	}
}

// CreateCollection is the JSON body handleCreateCollection reads.
type CreateCollection struct {
	Handle      *string                  `json:"handle"`
	Title       CollectionText           `json:"title"`
	Description CollectionText           `json:"description"`
	ImageID     *string                  `json:"image_id"`
	Kind        string                   `json:"kind"`
	Rules       *storage.CollectionRules `json:"rules"`
	Sort        *string                  `json:"sort"`
	Published   *bool                    `json:"published"`
	SEO         CollectionSEO            `json:"seo"`
}

// Valid lists what is wrong with the body, for wire.Decode's 422.
func (req CreateCollection) Valid() []wire.FieldError {
	var c Checker
	checkCollectionText(&c, "title", req.Title, true, 255)
	checkCollectionText(&c, "description", req.Description, false, 65535)
	c.OneOf("kind", req.Kind, []string{"manual", "smart"})
	if req.Handle != nil {
		Handle(&c, *req.Handle)
	}
	if req.ImageID != nil {
		c.UUID("image_id", *req.ImageID)
	}
	switch req.Kind {
	case "smart":
		CheckCollectionRules(&c, req.Rules)
	case "manual":
		if req.Rules != nil {
			addCollection(&c, "rules", "not_allowed", "a manual collection has no rules")
		}
	}
	if req.Sort != nil {
		c.OneOf("sort", *req.Sort, storage.CollectionSorts)
	}
	checkCollectionSEO(&c, req.SEO)
	return c.Result()
}

// UpdateCollection is the JSON body handleUpdateCollection reads.
type UpdateCollection struct {
	Handle      wire.Optional[string]                  `json:"handle"`
	Title       wire.Optional[CollectionText]          `json:"title"`
	Description wire.Optional[CollectionText]          `json:"description"`
	ImageID     wire.Optional[string]                  `json:"image_id"`
	Rules       wire.Optional[storage.CollectionRules] `json:"rules"`
	Sort        wire.Optional[string]                  `json:"sort"`
	Published   wire.Optional[bool]                    `json:"published"`
	SEO         wire.Optional[CollectionSEO]           `json:"seo"`
}

// Valid lists what is wrong with the body, for wire.Decode's 422.
func (req UpdateCollection) Valid() []wire.FieldError {
	var c Checker
	if notNull(&c, "handle", req.Handle) {
		Handle(&c, req.Handle.Value)
	}
	if notNull(&c, "title", req.Title) {
		checkCollectionText(&c, "title", req.Title.Value, true, 255)
	}
	if req.Description.Set && !req.Description.Null {
		checkCollectionText(&c, "description", req.Description.Value, false, 65535)
	}
	if req.ImageID.Set && !req.ImageID.Null {
		c.UUID("image_id", req.ImageID.Value)
	}
	if notNull(&c, "rules", req.Rules) {
		CheckCollectionRules(&c, &req.Rules.Value)
	}
	if notNull(&c, "sort", req.Sort) {
		c.OneOf("sort", req.Sort.Value, storage.CollectionSorts)
	}
	notNull(&c, "published", req.Published)
	if req.SEO.Set && !req.SEO.Null {
		checkCollectionSEO(&c, req.SEO.Value)
	}
	return c.Result()
}

// CollectionProducts is the body of POST and DELETE …/collections/{id}/products.
type CollectionProducts struct {
	ProductIDs []string `json:"product_ids"`
}

// Valid lists what is wrong with the body, for wire.Decode's 422.
func (req CollectionProducts) Valid() []wire.FieldError {
	var c Checker
	if len(req.ProductIDs) < 1 || len(req.ProductIDs) > 250 {
		c.Add("product_ids", "out_of_range", "must list 1 to 250 products")
	}
	for i, id := range req.ProductIDs {
		c.UUID(fmt.Sprintf("product_ids[%d]", i), id)
	}
	return c.Result()
}

// CollectionOrder is the body of PUT …/collections/{id}/products/order:
// every product of the collection, in order.
type CollectionOrder struct {
	ProductIDs []string `json:"product_ids"`
}

// Valid lists what is wrong with the body, for wire.Decode's 422.
func (req CollectionOrder) Valid() []wire.FieldError {
	var c Checker
	if req.ProductIDs == nil {
		c.Add("product_ids", "required", "is required")
	}
	for i, id := range req.ProductIDs {
		c.UUID(fmt.Sprintf("product_ids[%d]", i), id)
	}
	return c.Result()
}
