package theme_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/merchantsvc/svc/storage/theme"
)

// Any document is validated without panicking; every error it reports has
// a code and a JSON Pointer into the document, and a document the validator
// accepts is JSON that canonicalises.
func FuzzValidateDocument(f *testing.F) {
	th := theme.Default()
	f.Add([]byte(th.DefaultDocument()))
	f.Add([]byte(`{}`))
	f.Add([]byte(`{"settings":{"colors":[]},"templates":{"index":{"sections":{"x":{"type":"hero","settings":{}}},"order":["x","x"]}}}`))
	f.Add([]byte(`{"templates":{"index":{"sections":{"a/b~c":{"type":"nope"}},"order":["a/b~c"]}}}`))
	f.Add([]byte(`[1, "two", null]`))
	f.Fuzz(func(t *testing.T, doc []byte) {
		errs, err := th.Validate(context.Background(), json.RawMessage(doc), refs)
		if err != nil {
			t.Fatalf("validate: %v", err)
		}
		for _, e := range errs {
			if e.Code == "" || (e.Pointer != "" && !strings.HasPrefix(e.Pointer, "/")) {
				t.Fatalf("malformed error %#v for %q", e, doc)
			}
		}
		if len(errs) == 0 {
			if _, _, err := theme.Canonical(doc); err != nil {
				t.Fatalf("accepted %q but it does not canonicalise: %v", doc, err)
			}
		}
	})
}
