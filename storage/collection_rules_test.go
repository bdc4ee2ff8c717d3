package storage

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
)

func condition(field, relation string, value any) CollectionCondition {
	c := CollectionCondition{Field: field, Relation: relation}
	if value != nil {
		c.Value, _ = json.Marshal(value)
	}
	return c
}

// A smart collection's conditions evaluated in memory against a product's
// facts, each relation on each field it takes.
func TestCollectionRulesMatch(t *testing.T) {
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	clothes, shirts, shoes := uuid.New(), uuid.New(), uuid.New()
	tee := productFacts{ID: uuid.New(), Categories: []uuid.UUID{shirts, clothes}, HasCat: true, Prices: []int64{15000, 18000},
		Tags: []string{"Summer", "cotton"}, Title: "Linen Tee", SKUs: []string{"TEE-1", "TEE-2"}, Kind: "standard", Available: true,
		CreatedAt: now.Add(-10 * 24 * time.Hour)}
	bare := productFacts{ID: uuid.New(), Prices: []int64{500}, Title: "Sticker", Kind: "standard", CreatedAt: now.Add(-time.Hour)}
	for _, c := range []struct {
		name      string
		cond      CollectionCondition
		tee, bare bool
	}{
		{"category equals an ancestor", condition("category", RelEquals, clothes.String()), true, false},
		{"category equals its own", condition("category", RelEquals, shirts.String()), true, false},
		{"category equals another", condition("category", RelEquals, shoes.String()), false, false},
		{"category not_equals an ancestor", condition("category", RelNotEquals, clothes.String()), false, true},
		{"category is_set", condition("category", RelIsSet, nil), true, false},
		{"category is_not_set", condition("category", RelIsNotSet, nil), false, true},
		{"price equals a variant's", condition("price", RelEquals, 18000), true, false},
		{"price not_equals every variant's", condition("price", RelNotEquals, 18000), false, true},
		{"price greater_than", condition("price", RelGreaterThan, 16000), true, false},
		{"price less_than", condition("price", RelLessThan, 1000), false, true},
		{"tag equals, case folded", condition("tag", RelEquals, "summer"), true, false},
		{"tag not_equals", condition("tag", RelNotEquals, "summer"), false, true},
		{"tag contains", condition("tag", RelContains, "cott"), true, false},
		{"tag not_contains", condition("tag", RelNotContains, "cott"), false, true},
		{"tag is_set", condition("tag", RelIsSet, nil), true, false},
		{"tag is_not_set", condition("tag", RelIsNotSet, nil), false, true},
		{"title equals", condition("title", RelEquals, " linen tee "), true, false},
		{"title not_equals", condition("title", RelNotEquals, "Linen Tee"), false, true},
		{"title contains", condition("title", RelContains, "TEE"), true, false},
		{"title not_contains", condition("title", RelNotContains, "tee"), false, true},
		{"sku equals a variant's", condition("sku", RelEquals, "tee-2"), true, false},
		{"sku contains", condition("sku", RelContains, "TEE"), true, false},
		{"sku is_not_set", condition("sku", RelIsNotSet, nil), false, true},
		{"product_kind equals", condition("product_kind", RelEquals, "standard"), true, true},
		{"product_kind not_equals", condition("product_kind", RelNotEquals, "standard"), false, false},
		{"available equals true", condition("available", RelEquals, true), true, false},
		{"available not_equals true", condition("available", RelNotEquals, true), false, true},
		{"created_days_ago greater_than", condition("created_days_ago", RelGreaterThan, 7), true, false},
		{"created_days_ago less_than", condition("created_days_ago", RelLessThan, 1), false, true},
		{"created_days_ago equals", condition("created_days_ago", RelEquals, 10), true, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := compileRules(CollectionRules{Match: "all", Conditions: []CollectionCondition{c.cond}})
			require.Equal(t, c.tee, r.matches(tee, now), "tee")
			require.Equal(t, c.bare, r.matches(bare, now), "sticker")
		})
	}

	both := []CollectionCondition{condition("price", RelLessThan, 1000), condition("tag", RelEquals, "summer")}
	require.False(t, compileRules(CollectionRules{Match: "all", Conditions: both}).matches(tee, now), "all: one condition fails")
	require.True(t, compileRules(CollectionRules{Match: "any", Conditions: both}).matches(tee, now), "any: one condition holds")
	require.True(t, compileRules(CollectionRules{Match: "any", Conditions: both}).matches(bare, now))
	require.False(t, compileRules(CollectionRules{Match: "any"}).matches(tee, now), "no conditions match nothing")
}
