package api_test

import (
	"context"
	"encoding/json"
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
