package api_test

import (
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	_ "github.com/oapi-codegen/runtime" // the generated client's runtime, kept in go.mod for it
	"github.com/stretchr/testify/require"

	"github.com/merchantsvc/svc/api"
	"github.com/merchantsvc/svc/internal/webhook"
)

// startFlowAPI starts the API and its worker for a generated client's flow,
// with a webhook receiver that answers 200, and writes the served OpenAPI
// document to a file. It returns the API's base URL, the receiver's URL and
// the document's path.
func startFlowAPI(t *testing.T) (base, receiverURL, docFile string) {
	t.Helper()
	rec := newReceiver(t, func(int) int { return http.StatusOK })
	h := newHarness(t, api.Config{WebhookGuard: webhook.Guard{AllowPrivate: true}})
	httpClient, err := webhook.Guard{AllowPrivate: true}.NewClient(rec.caFile)
	require.NoError(t, err)
	h.startWorker(httpClient)

	doc, err := api.OpenAPIDocument()
	require.NoError(t, err)
	docFile = filepath.Join(t.TempDir(), "openapi.json")
	require.NoError(t, os.WriteFile(docFile, doc, 0o644))
	return h.url, rec.url(), docFile
}

// runTool runs a command in dir and fails the test with its output if it fails.
func runTool(t *testing.T, dir string, name string, args ...string) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s %s:\n%s", filepath.Base(name), strings.Join(args, " "), out)
}

// A Go client generated from the served document with oapi-codegen (pinned
// as a tool dependency) compiles and drives a real flow against the API:
// sign up, mint a token, create a product and a variant, place an order, list
// orders by status, and read the order's webhook delivery from the log. Its
// methods are named after the operations' ids (SignUpWithResponse,
// CreateOrderWithResponse, ListOrdersWithResponse).
func TestGeneratedGoClientDrivesARealFlow(t *testing.T) {
	if testing.Short() {
		t.Skip("generates and builds a client")
	}
	base, receiverURL, docFile := startFlowAPI(t)
	generated, err := filepath.Abs("testdata/genclient/client.gen.go")
	require.NoError(t, err)
	t.Cleanup(func() { _ = os.Remove(generated) })
	moduleRoot := ".."
	runTool(t, moduleRoot, "go", "tool", "oapi-codegen", "-generate", "types,client,skip-prune", "-package", "genclient", "-o", generated, docFile)
	binary := filepath.Join(t.TempDir(), "flow.test")
	runTool(t, moduleRoot, "go", "test", "-c", "-o", binary, "./api/testdata/genclient")

	flow := exec.Command(binary, "-test.run", "^TestFlow$", "-test.v")
	flow.Env = append(os.Environ(), "SVC_FLOW_BASE="+base, "SVC_FLOW_RECEIVER="+receiverURL)
	out, err := flow.CombinedOutput()
	require.NoError(t, err, "the generated client's flow:\n%s", out)
	require.Contains(t, string(out), "delivered ")
}

// The same flow through a TypeScript client: openapi-typescript turns the
// served document into types (testdata/tsclient/schema.gen.ts), tsc
// type-checks flow.ts, whose openapi-fetch calls and request bodies are typed
// by them, and node runs it against the API. The npm packages are pinned in
// testdata/tsclient/package-lock.json and installed by `make deps`.
func TestGeneratedTypeScriptClientDrivesARealFlow(t *testing.T) {
	if testing.Short() {
		t.Skip("generates and compiles a client")
	}
	node := nodeTool(t)
	dir := npmPackages(t, "testdata/tsclient")
	base, receiverURL, docFile := startFlowAPI(t)

	schema, dist := filepath.Join(dir, "schema.gen.ts"), filepath.Join(dir, "dist")
	t.Cleanup(func() { _ = os.Remove(schema); _ = os.RemoveAll(dist) })
	// Defaults make no field required (a request may leave it out), and a
	// bare `type: object` is any object, as JSON Schema says.
	runTool(t, dir, node, "node_modules/openapi-typescript/bin/cli.js", docFile, "--output", schema,
		"--default-non-nullable", "false", "--empty-objects-unknown")
	runTool(t, dir, node, "node_modules/typescript/bin/tsc", "--project", "tsconfig.json")

	flow := exec.Command(node, filepath.Join(dist, "flow.js"))
	flow.Dir = dir
	flow.Env = append(os.Environ(), "SVC_FLOW_BASE="+base, "SVC_FLOW_RECEIVER="+receiverURL)
	out, err := flow.CombinedOutput()
	require.NoError(t, err, "the TypeScript client's flow:\n%s", out)
	require.Contains(t, string(out), "delivered ")
}
