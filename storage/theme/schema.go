// Package theme holds the theme-customization rules of spec §2.9: the
// setting schemas (theme-level and per section), their validation when
// loaded, and the validation of a store's draft document against them.
package theme

import (
	"embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"slices"
	"strings"
)

// SettingTypes are the 26 values a setting's type may take (spec §2.9).
var SettingTypes = []string{"text", "inline_richtext", "richtext", "textarea", "number", "range", "range_with_unit", "select",
	"radio", "checkbox", "color", "color_scheme", "color_scheme_group", "font_picker", "image_picker", "video_url", "url",
	"link_list_picker", "page_picker", "blog_picker", "product", "product_list", "collection", "collection_list",
	"variant_picker", "header"}

// Option is one choice of a select or radio setting.
type Option struct {
	Value string `json:"value"`
	Label string `json:"label"`
}

// Setting is one field of a settings form.
type Setting struct {
	Type       string                     `json:"type"`
	ID         string                     `json:"id"`
	Label      string                     `json:"label"`
	Default    json.RawMessage            `json:"default,omitempty"`
	Options    []Option                   `json:"options,omitempty"`
	VisibleIf  map[string]json.RawMessage `json:"visible_if,omitempty"`
	Min        *float64                   `json:"min,omitempty"`
	Max        *float64                   `json:"max,omitempty"`
	Step       *float64                   `json:"step,omitempty"`
	Unit       string                     `json:"unit,omitempty"`
	Units      []string                   `json:"units,omitempty"`
	Limit      int                        `json:"limit,omitempty"`
	Definition []Setting                  `json:"definition,omitempty"`
}

// Block is a kind of block a section may hold.
type Block struct {
	Type     string    `json:"type"`
	Name     string    `json:"name"`
	Limit    int       `json:"limit,omitempty"`
	Settings []Setting `json:"settings"`
}

// PresetBlock is a block a preset starts with.
type PresetBlock struct {
	Type     string                     `json:"type"`
	Settings map[string]json.RawMessage `json:"settings,omitempty"`
}

// Preset is a ready-made section instance.
type Preset struct {
	Name     string                     `json:"name"`
	Settings map[string]json.RawMessage `json:"settings,omitempty"`
	Blocks   []PresetBlock              `json:"blocks,omitempty"`
}

// Section is a section type's schema.
type Section struct {
	Type     string    `json:"type"`
	Name     string    `json:"name"`
	Settings []Setting `json:"settings"`
	Blocks   []Block   `json:"blocks,omitempty"`
	Presets  []Preset  `json:"presets,omitempty"`
}

// Theme is a theme's schemas: the theme-level settings and every section.
type Theme struct {
	Name     string             `json:"name"`
	Version  string             `json:"version"`
	Settings []Setting          `json:"settings"`
	Sections map[string]Section `json:"sections"`
}

// Block returns a section's block definition.
func (s Section) Block(blockType string) (Block, bool) {
	for _, b := range s.Blocks {
		if b.Type == blockType {
			return b, true
		}
	}
	return Block{}, false
}

//go:embed default
var defaultFiles embed.FS

var defaultTheme = func() *Theme {
	sub, _ := fs.Sub(defaultFiles, "default")
	t, err := Load(sub)
	if err != nil {
		panic("the default theme is invalid: " + err.Error())
	}
	return t
}()

// Default is the theme every store starts with.
func Default() *Theme { return defaultTheme }

var idPattern = regexp.MustCompile(`^[a-z][a-z0-9_]{0,63}$`)

// Load reads settings_schema.json and schemas/sections/*.json from fsys and
// checks them: ids unique and well formed, types known, defaults valid,
// visible_if naming earlier settings of the same list, presets naming real
// settings and block types within the blocks' limits.
func Load(fsys fs.FS) (*Theme, error) {
	raw, err := fs.ReadFile(fsys, "settings_schema.json")
	if err != nil {
		return nil, err
	}
	var t Theme
	if err := json.Unmarshal(raw, &t); err != nil {
		return nil, fmt.Errorf("settings_schema.json: %w", err)
	}
	if err := checkSettings("settings_schema.json", t.Settings); err != nil {
		return nil, err
	}
	files, err := fs.Glob(fsys, "schemas/sections/*.json")
	if err != nil {
		return nil, err
	}
	t.Sections = map[string]Section{}
	for _, f := range files {
		raw, err := fs.ReadFile(fsys, f)
		if err != nil {
			return nil, err
		}
		var s Section
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		if s.Type != strings.TrimSuffix(path.Base(f), ".json") {
			return nil, fmt.Errorf("%s: type %q does not match the file name", f, s.Type)
		}
		if err := checkSection(f, s); err != nil {
			return nil, err
		}
		t.Sections[s.Type] = s
	}
	return &t, nil
}

func checkSection(file string, s Section) error {
	if err := checkSettings(file, s.Settings); err != nil {
		return err
	}
	blockTypes := map[string]Block{}
	for _, b := range s.Blocks {
		if b.Type == "" || blockTypes[b.Type].Type != "" {
			return fmt.Errorf("%s: block type %q is empty or repeated", file, b.Type)
		}
		if b.Limit < 0 {
			return fmt.Errorf("%s: block %s has a negative limit", file, b.Type)
		}
		if err := checkSettings(file+" block "+b.Type, b.Settings); err != nil {
			return err
		}
		blockTypes[b.Type] = b
	}
	for _, p := range s.Presets {
		if err := checkPresetSettings(file+" preset "+p.Name, s.Settings, p.Settings); err != nil {
			return err
		}
		counts := map[string]int{}
		for _, pb := range p.Blocks {
			b, ok := blockTypes[pb.Type]
			if !ok {
				return fmt.Errorf("%s: preset %s has a block of unknown type %q", file, p.Name, pb.Type)
			}
			counts[pb.Type]++
			if b.Limit > 0 && counts[pb.Type] > b.Limit {
				return fmt.Errorf("%s: preset %s has more %s blocks than the limit %d", file, p.Name, pb.Type, b.Limit)
			}
			if err := checkPresetSettings(file+" preset "+p.Name+" block "+pb.Type, b.Settings, pb.Settings); err != nil {
				return err
			}
		}
	}
	return nil
}

func checkPresetSettings(where string, defs []Setting, values map[string]json.RawMessage) error {
	for id, v := range values {
		def, ok := findSetting(defs, id)
		if !ok {
			return fmt.Errorf("%s: unknown setting %q", where, id)
		}
		if problem := checkStatic(def, v); problem != nil {
			return fmt.Errorf("%s: setting %s: %s", where, id, problem.Message)
		}
	}
	return nil
}

func findSetting(defs []Setting, id string) (Setting, bool) {
	for _, s := range defs {
		if s.ID == id {
			return s, true
		}
	}
	return Setting{}, false
}

// checkSettings checks one settings list of a schema.
func checkSettings(where string, defs []Setting) error {
	seen := map[string]Setting{}
	for _, s := range defs {
		if !slices.Contains(SettingTypes, s.Type) {
			return fmt.Errorf("%s: setting %q has unknown type %q", where, s.ID, s.Type)
		}
		if !idPattern.MatchString(s.ID) {
			return fmt.Errorf("%s: setting id %q is not lowercase letters, digits and _", where, s.ID)
		}
		if _, dup := seen[s.ID]; dup {
			return fmt.Errorf("%s: setting id %q is repeated", where, s.ID)
		}
		for key, want := range s.VisibleIf {
			earlier, ok := seen[key]
			if !ok {
				return fmt.Errorf("%s: %s.visible_if names %q, which is not an earlier setting", where, s.ID, key)
			}
			if problem := checkStatic(earlier, want); problem != nil {
				return fmt.Errorf("%s: %s.visible_if value for %s: %s", where, s.ID, key, problem.Message)
			}
		}
		switch s.Type {
		case "select", "radio":
			if len(s.Options) == 0 {
				return fmt.Errorf("%s: %s needs options", where, s.ID)
			}
		case "range", "range_with_unit":
			if s.Min == nil || s.Max == nil || s.Step == nil || *s.Step <= 0 || *s.Min >= *s.Max {
				return fmt.Errorf("%s: %s needs min < max and a positive step", where, s.ID)
			}
			if s.Type == "range_with_unit" && len(s.Units) == 0 {
				return fmt.Errorf("%s: %s needs units", where, s.ID)
			}
		case "color_scheme_group":
			if err := checkSettings(where+" "+s.ID+".definition", s.Definition); err != nil {
				return err
			}
		}
		if len(s.Default) > 0 {
			if problem := checkStatic(s, s.Default); problem != nil {
				return fmt.Errorf("%s: default of %s: %s", where, s.ID, problem.Message)
			}
		}
		seen[s.ID] = s
	}
	return nil
}
