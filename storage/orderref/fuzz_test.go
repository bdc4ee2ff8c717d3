package orderref

import (
	"strings"
	"testing"
)

// An order reference is an id only in the uuid's 36-character form.
func FuzzOrderRef(f *testing.F) {
	for _, seed := range []string{"ORD-1001", "01a20bbc-987d-71e4-a754-2bc7b31e11d4", "{01a20bbc-987d-71e4-a754-2bc7b31e11d4}",
		"urn:uuid:01a20bbc-987d-71e4-a754-2bc7b31e11d4", "01A20BBC-987D-71E4-A754-2BC7B31E11D4", ""} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, ref string) {
		id, ok := Parse(ref)
		if ok && (len(ref) != 36 || !strings.EqualFold(id.String(), ref)) {
			t.Fatalf("%q taken as id %s", ref, id)
		}
	})
}
