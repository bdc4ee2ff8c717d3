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
	rec := newReceiver(t, func(int) int { return http.StatusOK })
	h := newHarness(t, api.Config{WebhookGuard: webhook.Guard{AllowPrivate: true}})
	httpClient, err := webhook.Guard{AllowPrivate: true}.NewClient(rec.caFile)
	require.NoError(t, err)
	h.startWorker(httpClient)

	doc, err := api.OpenAPIDocument()
	require.NoError(t, err)
	dir := t.TempDir()
	docFile := filepath.Join(dir, "openapi.json")
	require.NoError(t, os.WriteFile(docFile, doc, 0o644))
	generated, err := filepath.Abs("testdata/genclient/client.gen.go")
	require.NoError(t, err)
	t.Cleanup(func() { _ = os.Remove(generated) })
	goTool := func(args ...string) {
		t.Helper()
		cmd := exec.Command("go", args...)
		cmd.Dir = ".." // the module root
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "go %s:\n%s", strings.Join(args, " "), out)
	}
	goTool("tool", "oapi-codegen", "-generate", "types,client,skip-prune", "-package", "genclient", "-o", generated, docFile)
	binary := filepath.Join(dir, "flow.test")
	goTool("test", "-c", "-o", binary, "./api/testdata/genclient")

	flow := exec.Command(binary, "-test.run", "^TestFlow$", "-test.v")
	flow.Env = append(os.Environ(), "SVC_FLOW_BASE="+h.url, "SVC_FLOW_RECEIVER="+rec.url())
	out, err := flow.CombinedOutput()
	require.NoError(t, err, "the generated client's flow:\n%s", out)
	require.Contains(t, string(out), "delivered ")
}
