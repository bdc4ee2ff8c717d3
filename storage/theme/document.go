package theme

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
)

// Pages are the templates a draft may customize.
var Pages = []string{"index", "product", "collection", "cart", "page", "blog", "article", "search"}

var instanceID = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// ValidationError is one invalid place in a draft: where (an RFC 6901 JSON
// Pointer, and the section, block and setting ids when there are any), a
// stable code and a message.
type ValidationError struct {
	Pointer   string `json:"pointer"`
	SectionID string `json:"section_id,omitempty"`
	BlockID   string `json:"block_id,omitempty"`
	SettingID string `json:"setting_id,omitempty"`
	Code      string `json:"code"`
	Message   string `json:"message"`
}

// References finds which picker references do not exist in the store.
type References interface {
	Missing(ctx context.Context, kind string, ids []string) (map[string]bool, error)
}

// Pointer builds an RFC 6901 JSON Pointer from its tokens.
func Pointer(tokens ...string) string {
	var b strings.Builder
	for _, t := range tokens {
		b.WriteByte('/')
		b.WriteString(strings.NewReplacer("~", "~0", "/", "~1").Replace(t))
	}
	return b.String()
}

// checker collects a document's errors and its picker references.
type checker struct {
	errs    []ValidationError
	refs    map[string][]refUse
	schemes []string
}

type refUse struct {
	id  string
	err ValidationError
}

func (c *checker) add(e ValidationError) { c.errs = append(c.errs, e) }

// Validate checks a whole draft document against the theme and the store's
// references, and returns every error (nil when it is valid). Values hidden
// by visible_if are checked like any other and kept.
func (t *Theme) Validate(ctx context.Context, doc json.RawMessage, refs References) ([]ValidationError, error) {
	c, ok := t.walk(doc)
	if !ok {
		return c.errs, nil
	}
	for _, kind := range sortedKeys(c.refs) {
		uses := c.refs[kind]
		ids := make([]string, 0, len(uses))
		for _, u := range uses {
			ids = append(ids, u.id)
		}
		missing, err := refs.Missing(ctx, kind, dedupe(ids))
		if err != nil {
			return nil, err
		}
		for _, u := range uses {
			if missing[u.id] {
				e := u.err
				e.Code, e.Message = "not_found", fmt.Sprintf("no %s %s in this store", kind, u.id)
				c.add(e)
			}
		}
	}
	return c.errs, nil
}

// Use is one picker value naming the store's content: the id or handle it
// names and the JSON Pointer of the value in the document.
type Use struct {
	ID, Pointer string
}

// Uses lists where doc's pickers name content of kind (RefMenu, RefPage,
// RefCollection …), in document order: what a delete or a rename of that
// content must not leave dangling. A document that is not a JSON object
// names nothing.
func (t *Theme) Uses(doc json.RawMessage, kind string) []Use {
	c, ok := t.walk(doc)
	if !ok {
		return nil
	}
	uses := make([]Use, 0, len(c.refs[kind]))
	for _, u := range c.refs[kind] {
		uses = append(uses, Use{ID: u.id, Pointer: u.err.Pointer})
	}
	return uses
}

// walk checks doc's shape and collects its picker references; ok is false
// when doc is not a JSON object (c.errs says why).
func (t *Theme) walk(doc json.RawMessage) (c *checker, ok bool) {
	root, err := decodeValue(doc)
	if err != nil {
		return &checker{errs: []ValidationError{{Pointer: "", Code: "invalid_json", Message: "the document is not JSON"}}}, false
	}
	c = &checker{refs: map[string][]refUse{}}
	top, isObject := root.(map[string]any)
	if !isObject {
		c.errs = []ValidationError{{Pointer: "", Code: "invalid_type", Message: "the document must be an object"}}
		return c, false
	}
	c.onlyKeys(top, []string{"settings", "templates"}, ValidationError{})
	c.schemes = t.schemeIDs(top["settings"])
	if settings, present := top["settings"]; present {
		c.settings(settings, t.Settings, ValidationError{Pointer: "/settings"})
	}
	if templates, present := top["templates"]; present {
		obj, isObject := templates.(map[string]any)
		if !isObject {
			c.add(ValidationError{Pointer: "/templates", Code: "invalid_type", Message: "must be an object of pages"})
		}
		for _, page := range sortedKeys(obj) {
			if !slices.Contains(Pages, page) {
				c.add(ValidationError{Pointer: Pointer("templates", page), Code: "unknown_key", Message: "is not a page: " + strings.Join(Pages, ", ")})
				continue
			}
			c.template(t, page, obj[page])
		}
	}
	return c, true
}

func (c *checker) onlyKeys(obj map[string]any, allowed []string, at ValidationError) {
	for _, k := range sortedKeys(obj) {
		if !slices.Contains(allowed, k) {
			e := at
			e.Pointer, e.Code, e.Message = at.Pointer+Pointer(k), "unknown_key", "is not a known key"
			c.add(e)
		}
	}
}

// settings checks a settings object against its definitions.
func (c *checker) settings(v any, defs []Setting, at ValidationError) {
	obj, ok := v.(map[string]any)
	if !ok {
		e := at
		e.Code, e.Message = "invalid_type", "must be an object of settings"
		c.add(e)
		return
	}
	for _, id := range sortedKeys(obj) {
		e := at
		e.Pointer, e.SettingID = at.Pointer+Pointer(id), id
		def, ok := findSetting(defs, id)
		if !ok {
			e.Code, e.Message = "unknown_setting", "is not a setting of this schema"
			c.add(e)
			continue
		}
		raw, _ := json.Marshal(obj[id])
		if p := checkStatic(def, raw); p != nil {
			e.Code, e.Message = p.Code, p.Message
			c.add(e)
			continue
		}
		c.references(def, obj[id], e)
	}
}

func (c *checker) references(def Setting, v any, at ValidationError) {
	if def.Type == "color_scheme" {
		if s, ok := v.(string); ok && !slices.Contains(c.schemes, s) {
			at.Code, at.Message = "unknown_scheme", "is not one of the theme's color schemes"
			c.add(at)
		}
		return
	}
	kind := referenceKind(def.Type)
	if kind == "" || v == nil {
		return
	}
	switch val := v.(type) {
	case string:
		c.refs[kind] = append(c.refs[kind], refUse{val, at})
	case []any:
		for i, item := range val {
			e := at
			e.Pointer = fmt.Sprintf("%s/%d", at.Pointer, i)
			c.refs[kind] = append(c.refs[kind], refUse{item.(string), e})
		}
	}
}

// schemeIDs are the color schemes a draft defines (or the theme's default
// ones when the draft sets none).
func (t *Theme) schemeIDs(settings any) []string {
	for _, def := range t.Settings {
		if def.Type != "color_scheme_group" {
			continue
		}
		var group map[string]any
		if obj, ok := settings.(map[string]any); ok {
			group, _ = obj[def.ID].(map[string]any)
		}
		if group == nil {
			_ = json.Unmarshal(def.Default, &group)
		}
		return sortedKeys(group)
	}
	return nil
}

func (c *checker) template(t *Theme, page string, v any) {
	at := ValidationError{Pointer: Pointer("templates", page)}
	obj, ok := v.(map[string]any)
	if !ok {
		at.Code, at.Message = "invalid_type", "must be an object with sections and order"
		c.add(at)
		return
	}
	c.onlyKeys(obj, []string{"sections", "order"}, at)
	sections, ok := obj["sections"].(map[string]any)
	if !ok {
		c.add(ValidationError{Pointer: at.Pointer + "/sections", Code: "invalid_type", Message: "must be an object of sections"})
		sections = map[string]any{}
	}
	for _, id := range sortedKeys(sections) {
		c.section(t, at.Pointer+Pointer("sections", id), id, sections[id])
	}
	c.order(obj["order"], sections, ValidationError{Pointer: at.Pointer + "/order"})
}

// order checks that a list names every key of a map exactly once.
func (c *checker) order(v any, items map[string]any, at ValidationError) {
	list, ok := v.([]any)
	if !ok {
		at.Code, at.Message = "invalid_type", "must be a list of ids"
		c.add(at)
		return
	}
	seen := map[string]bool{}
	for i, item := range list {
		id, _ := item.(string)
		e := at
		e.Pointer = fmt.Sprintf("%s/%d", at.Pointer, i)
		switch {
		case items[id] == nil:
			e.Code, e.Message = "order_mismatch", fmt.Sprintf("%q is not in the map", id)
			c.add(e)
		case seen[id]:
			e.Code, e.Message = "order_mismatch", fmt.Sprintf("%q is listed twice", id)
			c.add(e)
		}
		seen[id] = true
	}
	for _, id := range sortedKeys(items) {
		if !seen[id] {
			e := at
			e.Code, e.Message = "order_mismatch", fmt.Sprintf("%q is missing from the order", id)
			c.add(e)
		}
	}
}

func (c *checker) section(t *Theme, pointer, id string, v any) {
	at := ValidationError{Pointer: pointer, SectionID: id}
	if !instanceID.MatchString(id) {
		e := at
		e.Code, e.Message = "invalid_id", "section ids are 1-64 letters, digits, - and _"
		c.add(e)
	}
	obj, ok := v.(map[string]any)
	if !ok {
		at.Code, at.Message = "invalid_type", "must be a section object"
		c.add(at)
		return
	}
	c.onlyKeys(obj, []string{"type", "settings", "blocks", "block_order", "disabled"}, at)
	typ, _ := obj["type"].(string)
	schema, ok := t.Sections[typ]
	if !ok {
		e := at
		e.Pointer, e.Code, e.Message = pointer+"/type", "unknown_section_type", fmt.Sprintf("%q is not a section type of the theme", typ)
		c.add(e)
		return
	}
	if d, present := obj["disabled"]; present {
		if _, ok := d.(bool); !ok {
			e := at
			e.Pointer, e.Code, e.Message = pointer+"/disabled", "invalid_type", "must be true or false"
			c.add(e)
		}
	}
	if s, present := obj["settings"]; present {
		e := at
		e.Pointer = pointer + "/settings"
		c.settings(s, schema.Settings, e)
	}
	blocks := map[string]any{}
	if b, present := obj["blocks"]; present {
		if blocks, ok = b.(map[string]any); !ok {
			e := at
			e.Pointer, e.Code, e.Message = pointer+"/blocks", "invalid_type", "must be an object of blocks"
			c.add(e)
			blocks = map[string]any{}
		}
	}
	counts := map[string]int{}
	for _, bid := range sortedKeys(blocks) {
		bat := ValidationError{Pointer: pointer + Pointer("blocks", bid), SectionID: id, BlockID: bid}
		bobj, ok := blocks[bid].(map[string]any)
		if !ok || !instanceID.MatchString(bid) {
			bat.Code, bat.Message = "invalid_type", "must be a block object under a valid id"
			c.add(bat)
			continue
		}
		c.onlyKeys(bobj, []string{"type", "settings", "disabled"}, bat)
		btype, _ := bobj["type"].(string)
		def, ok := schema.Block(btype)
		if !ok {
			e := bat
			e.Pointer, e.Code, e.Message = bat.Pointer+"/type", "unknown_block_type", fmt.Sprintf("%q is not a block of %s", btype, typ)
			c.add(e)
			continue
		}
		counts[btype]++
		if def.Limit > 0 && counts[btype] == def.Limit+1 {
			e := bat
			e.Code, e.Message = "block_limit", fmt.Sprintf("a %s section holds at most %d %s blocks", typ, def.Limit, btype)
			c.add(e)
		}
		if s, present := bobj["settings"]; present {
			e := bat
			e.Pointer = bat.Pointer + "/settings"
			c.settings(s, def.Settings, e)
		}
	}
	if bo, present := obj["block_order"]; present || len(blocks) > 0 {
		c.order(bo, blocks, ValidationError{Pointer: pointer + "/block_order", SectionID: id})
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func dedupe(list []string) []string {
	slices.Sort(list)
	return slices.Compact(list)
}

// Canonical is a document's canonical form (keys sorted, numbers as
// written) and its strong entity tag.
func Canonical(doc json.RawMessage) (json.RawMessage, string, error) {
	v, err := decodeValue(doc)
	if err != nil {
		return nil, "", err
	}
	out, err := json.Marshal(v)
	if err != nil {
		return nil, "", err
	}
	sum := sha256.Sum256(out)
	return out, `"` + hex.EncodeToString(sum[:16]) + `"`, nil
}

// DefaultDocument is a new store's draft: the theme's defaults and a home
// page built from the presets.
func (t *Theme) DefaultDocument() json.RawMessage {
	settings := map[string]any{}
	for _, s := range t.Settings {
		if len(s.Default) > 0 {
			settings[s.ID] = s.Default
		}
	}
	sections, order := map[string]any{}, []string{}
	for _, typ := range []string{"announcement-bar", "slideshow", "featured-collection", "rich-text", "footer"} {
		schema, ok := t.Sections[typ]
		if !ok || len(schema.Presets) == 0 {
			continue
		}
		sections[typ], order = t.FromPreset(typ, schema.Presets[0]), append(order, typ)
	}
	doc, _ := json.Marshal(map[string]any{"settings": settings, "templates": map[string]any{
		"index": map[string]any{"sections": sections, "order": order}}})
	out, _, _ := Canonical(doc)
	return out
}

// FromPreset is a section instance made from a preset: its settings and
// blocks, ids numbered by block type.
func (t *Theme) FromPreset(sectionType string, p Preset) map[string]any {
	blocks, blockOrder := map[string]any{}, []string{}
	counts := map[string]int{}
	for _, b := range p.Blocks {
		counts[b.Type]++
		id := fmt.Sprintf("%s-%d", b.Type, counts[b.Type])
		settings := map[string]any{}
		for k, v := range b.Settings {
			settings[k] = v
		}
		blocks[id], blockOrder = map[string]any{"type": b.Type, "settings": settings}, append(blockOrder, id)
	}
	settings := map[string]any{}
	for k, v := range p.Settings {
		settings[k] = v
	}
	return map[string]any{"type": sectionType, "settings": settings, "blocks": blocks, "block_order": blockOrder}
}
