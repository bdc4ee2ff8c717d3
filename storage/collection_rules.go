package storage

import (
	"encoding/json"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
)

// A smart collection's rules (decisions §21): conditions on a product's
// fields, all or any of which a member meets. They are checked on the way in
// (CheckCollectionRules) and evaluated in memory against a product's facts,
// in the product write's own transaction and in the rebuild.

// CollectionRules are a smart collection's rules.
type CollectionRules struct {
	Match      string                `json:"match"`
	Conditions []CollectionCondition `json:"conditions"`
}

// CollectionCondition is one condition: a field, a relation and, except for
// is_set and is_not_set, a value.
type CollectionCondition struct {
	Field    string          `json:"field"`
	Relation string          `json:"relation"`
	Value    json.RawMessage `json:"value,omitempty"`
}

// Relations of a condition.
const (
	RelEquals      = "equals"
	RelNotEquals   = "not_equals"
	RelContains    = "contains"
	RelNotContains = "not_contains"
	RelGreaterThan = "greater_than"
	RelLessThan    = "less_than"
	RelIsSet       = "is_set"
	RelIsNotSet    = "is_not_set"
)

// CollectionRuleField says which relations a field takes and what its value is:
// "uuid" (a category of the store), "amount" (minor units), "text",
// "kind" (a product kind), "boolean" or "days" (a whole number ≥ 0).
type CollectionRuleField struct {
	Relations []string
	Type      string
}

// CollectionRuleFields are the fields a condition may name.
var CollectionRuleFields = map[string]CollectionRuleField{
	"category":         {[]string{RelEquals, RelNotEquals, RelIsSet, RelIsNotSet}, "uuid"},
	"price":            {[]string{RelEquals, RelNotEquals, RelGreaterThan, RelLessThan}, "amount"},
	"tag":              {[]string{RelEquals, RelNotEquals, RelContains, RelNotContains, RelIsSet, RelIsNotSet}, "text"},
	"title":            {[]string{RelEquals, RelNotEquals, RelContains, RelNotContains}, "text"},
	"sku":              {[]string{RelEquals, RelNotEquals, RelContains, RelNotContains, RelIsSet, RelIsNotSet}, "text"},
	"product_kind":     {[]string{RelEquals, RelNotEquals}, "kind"},
	"available":        {[]string{RelEquals, RelNotEquals}, "boolean"},
	"created_days_ago": {[]string{RelEquals, RelGreaterThan, RelLessThan}, "days"},
}

// CollectionRuleFieldNames are the fields in the order the API lists them.
var CollectionRuleFieldNames = []string{"category", "price", "tag", "title", "sku", "product_kind", "available", "created_days_ago"}

// ProductKinds are the kinds a product_kind condition names (decisions §20);
// products are all "standard" until bundles and gift cards add a kind.
var ProductKinds = []string{"standard", "bundle", "gift_card"}

// MaxCollectionConditions is how many conditions a collection's rules hold.
const MaxCollectionConditions = 20

// compiledCondition is a condition with its value decoded once.
type compiledCondition struct {
	field, relation string
	text            string
	number          int64
	flag            bool
	id              uuid.UUID
}

// compiledRules are a collection's rules ready to evaluate.
type compiledRules struct {
	any        bool
	conditions []compiledCondition
}

// compileRules decodes rules already checked on the way in; a value that
// does not decode leaves its zero (it never matches what it should not:
// a stored rule is always one that was checked).
func compileRules(r CollectionRules) compiledRules {
	out := compiledRules{any: r.Match == "any", conditions: make([]compiledCondition, 0, len(r.Conditions))}
	for _, c := range r.Conditions {
		cc := compiledCondition{field: c.Field, relation: c.Relation}
		switch CollectionRuleFields[c.Field].Type {
		case "uuid":
			var s string
			_ = json.Unmarshal(c.Value, &s)
			cc.id, _ = uuid.Parse(s)
		case "amount", "days":
			_ = json.Unmarshal(c.Value, &cc.number)
		case "boolean":
			_ = json.Unmarshal(c.Value, &cc.flag)
		default:
			_ = json.Unmarshal(c.Value, &cc.text)
			cc.text = strings.ToLower(strings.TrimSpace(cc.text))
		}
		out.conditions = append(out.conditions, cc)
	}
	return out
}

// productFacts is what the rules read of a product.
type productFacts struct {
	ID         uuid.UUID
	Categories []uuid.UUID // its category and that category's ancestors
	HasCat     bool
	Prices     []int64 // the product's price and each variant's
	Tags       []string
	Title      string
	SKUs       []string
	Kind       string
	Available  bool
	CreatedAt  time.Time
}

// matches answers whether the product meets the rules at now.
func (r compiledRules) matches(p productFacts, now time.Time) bool {
	if len(r.conditions) == 0 {
		return false
	}
	for _, c := range r.conditions {
		ok := c.matches(p, now)
		if r.any && ok {
			return true
		}
		if !r.any && !ok {
			return false
		}
	}
	return !r.any
}

func (c compiledCondition) matches(p productFacts, now time.Time) bool {
	switch c.field {
	case "category":
		switch c.relation {
		case RelIsSet:
			return p.HasCat
		case RelIsNotSet:
			return !p.HasCat
		case RelEquals:
			return slices.Contains(p.Categories, c.id)
		default:
			return !slices.Contains(p.Categories, c.id)
		}
	case "price":
		if c.relation == RelNotEquals {
			return !slices.Contains(p.Prices, c.number)
		}
		return slices.ContainsFunc(p.Prices, func(v int64) bool { return compareNumber(c.relation, v, c.number) })
	case "tag":
		return textListMatches(c, p.Tags)
	case "sku":
		return textListMatches(c, p.SKUs)
	case "title":
		return textListMatches(c, []string{p.Title})
	case "product_kind":
		return (p.Kind == c.text) == (c.relation == RelEquals)
	case "available":
		return (p.Available == c.flag) == (c.relation == RelEquals)
	case "created_days_ago":
		days := int64(now.Sub(p.CreatedAt) / (24 * time.Hour))
		return compareNumber(c.relation, days, c.number)
	}
	return false
}

func compareNumber(relation string, v, want int64) bool {
	switch relation {
	case RelEquals:
		return v == want
	case RelGreaterThan:
		return v > want
	case RelLessThan:
		return v < want
	}
	return false
}

// textListMatches compares case-insensitively: equals and contains hold
// when one of the values does, their negations when none does.
func textListMatches(c compiledCondition, values []string) bool {
	present := slices.ContainsFunc(values, func(v string) bool { return strings.TrimSpace(v) != "" })
	hit := func(pred func(string) bool) bool {
		return slices.ContainsFunc(values, func(v string) bool { return pred(strings.ToLower(strings.TrimSpace(v))) })
	}
	switch c.relation {
	case RelIsSet:
		return present
	case RelIsNotSet:
		return !present
	case RelEquals:
		return hit(func(v string) bool { return v == c.text })
	case RelNotEquals:
		return !hit(func(v string) bool { return v == c.text })
	case RelContains:
		return hit(func(v string) bool { return strings.Contains(v, c.text) })
	case RelNotContains:
		return !hit(func(v string) bool { return strings.Contains(v, c.text) })
	}
	return false
}

// categoryIDs lists the category ids conditions name (to check they exist).
func (r CollectionRules) categoryIDs() []uuid.UUID {
	var ids []uuid.UUID
	for _, c := range compileRules(r).conditions {
		if c.field == "category" && (c.relation == RelEquals || c.relation == RelNotEquals) {
			ids = append(ids, c.id)
		}
	}
	return ids
}
