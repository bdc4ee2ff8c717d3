package api_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
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
	require.Equal(t, "SCOPE_MISSING, STORE_MISMATCH, STORE_SUSPENDED, TOKEN_NOT_ALLOWED, TOKEN_REQUIRED, ROLE_NOT_ALLOWED or CROSS_SITE_REQUEST", *forbidden.Description)
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

// nodeTool is the node binary the npm-based checks run with (Redocly and the
// TypeScript client). Without node on PATH they skip, unless SVC_REQUIRE_NODE
// is set: `make test` sets it, since its deps step installed their packages.
func nodeTool(t *testing.T) string {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		if os.Getenv("SVC_REQUIRE_NODE") != "" {
			t.Fatal("node is not on PATH, and SVC_REQUIRE_NODE says this run needs it")
		}
		t.Skip("node is not on PATH: install Node.js 20 or later and run `make deps` for this check")
	}
	return node
}

// npmPackages is the absolute path of dir, an npm package of testdata whose
// node_modules `make deps` installs (npm ci) from its package-lock.json.
func npmPackages(t *testing.T, dir string) string {
	t.Helper()
	abs, err := filepath.Abs(dir)
	require.NoError(t, err)
	if _, err := os.Stat(filepath.Join(abs, "node_modules", ".package-lock.json")); err != nil {
		t.Fatalf("%s has no node_modules: run `make deps` (npm ci --prefix api/%s)", dir, dir)
	}
	return abs
}

// The served document passes a second, independent validator: Redocly CLI
// (pinned in testdata/openapi-lint, installed by `make deps`) with its
// recommended rules, no error and no warning. The exceptions, each justified
// in testdata/openapi-lint/redocly.yaml, are rules turned off there and nodes
// listed in its .redocly.lint-ignore.yaml.
func TestOpenAPIDocumentPassesRedocly(t *testing.T) {
	node := nodeTool(t)
	dir := npmPackages(t, "testdata/openapi-lint")
	raw, err := api.OpenAPIDocument()
	require.NoError(t, err)
	// The served bytes, indented so a problem's line means something; the
	// ignore file names this file.
	var indented bytes.Buffer
	require.NoError(t, json.Indent(&indented, raw, "", "  "))
	docFile := filepath.Join(dir, "openapi.json")
	require.NoError(t, os.WriteFile(docFile, indented.Bytes(), 0o644))
	t.Cleanup(func() {
		if !t.Failed() {
			_ = os.Remove(docFile)
		}
	})

	lint := exec.Command(node, "node_modules/@redocly/cli/bin/cli.js", "lint", "--config", "redocly.yaml",
		"--format", "json", "--max-problems", "1000", "openapi.json")
	lint.Dir = dir
	lint.Env = append(os.Environ(), "REDOCLY_TELEMETRY=off", "REDOCLY_SUPPRESS_UPDATE_NOTICE=true")
	var stdout, stderr bytes.Buffer
	lint.Stdout, lint.Stderr = &stdout, &stderr
	runErr := lint.Run()
	var report struct {
		Totals   struct{ Errors, Warnings, Ignored int }
		Problems []struct {
			RuleID   string `json:"ruleId"`
			Severity string
			Message  string
			Ignored  bool
			Location []struct{ Pointer string }
		}
	}
	require.NoError(t, json.Unmarshal(stdout.Bytes(), &report), "redocly lint (%v) did not answer JSON:\n%s\n%s", runErr, stdout.String(), stderr.String())
	for _, p := range report.Problems {
		if p.Ignored {
			continue
		}
		where := ""
		if len(p.Location) > 0 {
			where = p.Location[0].Pointer
		}
		t.Errorf("redocly %s %s at %s: %s", p.Severity, p.RuleID, where, p.Message)
	}
	require.Zero(t, report.Totals.Errors, "redocly errors (the document is left in %s)", docFile)
	require.Zero(t, report.Totals.Warnings, "redocly warnings: fix them, or justify an exception in testdata/openapi-lint/redocly.yaml")
	require.NoError(t, runErr, "redocly lint:\n%s", stderr.String())
}
