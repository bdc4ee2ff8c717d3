package theme

import (
	"encoding/json"
	"reflect"
)

// Op is one RFC 6902 operation.
type Op struct {
	Op    string `json:"op"`
	Path  string `json:"path"`
	Value any    `json:"value,omitempty"`
}

// Change is one readable difference.
type Change struct {
	Path   string `json:"path"`
	Kind   string `json:"kind"` // added, removed or changed
	Before any    `json:"before,omitempty"`
	After  any    `json:"after,omitempty"`
}

// Diff compares two documents: a JSON Patch that turns from into to
// (objects are walked key by key; a list that differs is replaced whole),
// and the same differences as a readable list.
func Diff(from, to json.RawMessage) ([]Op, []Change, error) {
	a, err := decodeValue(from)
	if err != nil {
		return nil, nil, err
	}
	b, err := decodeValue(to)
	if err != nil {
		return nil, nil, err
	}
	ops, changes := []Op{}, []Change{}
	diffValue("", a, b, &ops, &changes)
	return ops, changes, nil
}

func diffValue(path string, a, b any, ops *[]Op, changes *[]Change) {
	if reflect.DeepEqual(a, b) {
		return
	}
	ao, aIsObj := a.(map[string]any)
	bo, bIsObj := b.(map[string]any)
	if !aIsObj || !bIsObj {
		*ops = append(*ops, Op{Op: "replace", Path: path, Value: b})
		*changes = append(*changes, Change{Path: path, Kind: "changed", Before: a, After: b})
		return
	}
	for _, k := range sortedKeys(ao) {
		p := path + Pointer(k)
		if bv, ok := bo[k]; ok {
			diffValue(p, ao[k], bv, ops, changes)
			continue
		}
		*ops = append(*ops, Op{Op: "remove", Path: p})
		*changes = append(*changes, Change{Path: p, Kind: "removed", Before: ao[k]})
	}
	for _, k := range sortedKeys(bo) {
		if _, ok := ao[k]; !ok {
			p := path + Pointer(k)
			*ops = append(*ops, Op{Op: "add", Path: p, Value: bo[k]})
			*changes = append(*changes, Change{Path: p, Kind: "added", After: bo[k]})
		}
	}
}
