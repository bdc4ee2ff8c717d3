package api_test

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/stretchr/testify/require"

	"github.com/merchantsvc/svc/api"
)

// The served document is valid OpenAPI 3.1 by a maintained validator
// (kin-openapi), so client generators and validators can trust it.
func TestOpenAPIDocumentIsValid(t *testing.T) {
	raw, err := api.OpenAPIDocument()
	require.NoError(t, err)
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(raw)
	require.NoError(t, err)
	require.True(t, doc.IsOpenAPI31OrLater(), "the document says it is 3.1")
	require.NoError(t, doc.Validate(context.Background()))
}

// Every description with a comma survives as text: a comma in an unquoted
// YAML flow mapping would otherwise split it into a stray key with no value.
func TestOpenAPIDescriptionsKeepTheirCommas(t *testing.T) {
	raw, err := api.OpenAPIDocument()
	require.NoError(t, err)
	doc, err := openapi3.NewLoader().LoadFromData(raw)
	require.NoError(t, err)
	forbidden := doc.Components.Responses["Forbidden"].Value
	require.Equal(t, "SCOPE_MISSING, STORE_MISMATCH, STORE_SUSPENDED, TOKEN_NOT_ALLOWED, TOKEN_REQUIRED or ROLE_NOT_ALLOWED", *forbidden.Description)
	amount := doc.Components.Schemas["PaymentProof"].Value.Properties["amount"].Value
	require.Equal(t, "Minor units credited (recorded, or the balance an approval covered)", amount.Description)

	// No mapping anywhere holds a key whose value is null: that is what a
	// split description leaves behind.
	var generic map[string]any
	require.NoError(t, json.Unmarshal(raw, &generic))
	var walk func(path string, node any)
	walk = func(path string, node any) {
		switch v := node.(type) {
		case map[string]any:
			for k, child := range v {
				require.NotNil(t, child, "%s/%s is null: a description split by a comma?", path, k)
				walk(path+"/"+strings.ReplaceAll(k, "/", "~1"), child)
			}
		case []any:
			for _, child := range v {
				walk(path, child)
			}
		}
	}
	walk("#", generic)
}

// operationMethods are the keys of a path item that are operations.
var operationMethods = []string{"get", "put", "post", "delete", "options", "head", "patch", "trace"}

// Every operation and webhook has an operationId, camelCase and unique, and
// the ids are v1's compatibility promise (the document's info.description):
// generated clients name their methods after them, so none is renamed,
// removed or reused within v1. testdata/openapi/operation-ids.txt lists
// every id with its operation; a new operation adds its line there.
func TestOpenAPIOperationIDsAreStable(t *testing.T) {
	raw, err := api.OpenAPIDocument()
	require.NoError(t, err)
	var doc struct {
		Paths    map[string]map[string]json.RawMessage `json:"paths"`
		Webhooks map[string]map[string]json.RawMessage `json:"webhooks"`
	}
	require.NoError(t, json.Unmarshal(raw, &doc))

	camelCase := regexp.MustCompile(`^[a-z][a-zA-Z0-9]*$`)
	owner := map[string]string{}
	var served []string
	collect := func(kind func(method string) string, items map[string]map[string]json.RawMessage) {
		for key, item := range items {
			for method, rawOp := range item {
				if !slices.Contains(operationMethods, method) {
					continue
				}
				var op struct {
					OperationID string `json:"operationId"`
				}
				require.NoError(t, json.Unmarshal(rawOp, &op))
				where := kind(method) + " " + key
				require.NotEmpty(t, op.OperationID, "%s has no operationId", where)
				require.Regexp(t, camelCase, op.OperationID, "%s: an operationId is camelCase", where)
				require.NotContains(t, owner, op.OperationID, "%s and %s share an operationId", owner[op.OperationID], where)
				owner[op.OperationID] = where
				served = append(served, op.OperationID+" "+where)
			}
		}
	}
	collect(strings.ToUpper, doc.Paths)
	collect(func(string) string { return "WEBHOOK" }, doc.Webhooks)

	f, err := os.Open("testdata/openapi/operation-ids.txt")
	require.NoError(t, err)
	defer f.Close()
	var promised []string
	for lines := bufio.NewScanner(f); lines.Scan(); {
		if line := strings.TrimSpace(lines.Text()); line != "" && !strings.HasPrefix(line, "#") {
			promised = append(promised, line)
		}
	}
	var gone, added []string
	for _, line := range promised {
		if !slices.Contains(served, line) {
			gone = append(gone, line)
		}
	}
	for _, line := range served {
		if !slices.Contains(promised, line) {
			added = append(added, line)
		}
	}
	slices.Sort(added)
	require.Empty(t, gone, "operationIds are never renamed or removed within v1, nor moved to another operation")
	require.Empty(t, added, "a new operation: add its line to testdata/openapi/operation-ids.txt")
}
