// Package deploy_test checks the deployment files this machine cannot run
// (no container engine here): they parse, name only real settings, and
// wire the pieces the way docs/architecture.md says.
package deploy_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	composeloader "github.com/compose-spec/compose-go/v2/loader"
	composetypes "github.com/compose-spec/compose-go/v2/types"
	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"
)

func readYAML(t *testing.T, path string) []map[string]any {
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	var docs []map[string]any
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	for {
		var doc map[string]any
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err, path)
		docs = append(docs, doc)
	}
	return docs
}

// settings are the SVC_ variables cmd/svc reads.
func settings(t *testing.T) map[string]bool {
	src, err := os.ReadFile("../cmd/svc/config.go")
	require.NoError(t, err)
	out := map[string]bool{}
	for _, m := range regexp.MustCompile(`envconfig:"([A-Z0-9_]+)"`).FindAllStringSubmatch(string(src), -1) {
		out["SVC_"+m[1]] = true
	}
	require.NotEmpty(t, out)
	return out
}

func m(v any) map[string]any { return v.(map[string]any) }

func TestComposeFile(t *testing.T) {
	docs := readYAML(t, "compose.yaml")
	require.Len(t, docs, 1)
	services := m(docs[0]["services"])
	for _, name := range []string{"postgres", "temporal", "temporal-ui", "minio", "migrate", "temporal-setup", "api", "worker"} {
		require.Contains(t, services, name)
	}
	require.True(t, strings.HasPrefix(m(services["temporal"])["image"].(string), "temporalio/auto-setup:"))
	require.Equal(t, []any{"migrate"}, m(services["migrate"])["command"])
	require.Equal(t, []any{"temporal-setup"}, m(services["temporal-setup"])["command"])
	known := settings(t)
	for _, role := range []string{"api", "worker"} {
		svc := m(services[role])
		require.Equal(t, 2, m(svc["deploy"])["replicas"], role)
		require.Equal(t, "service_completed_successfully", m(m(svc["depends_on"])["migrate"])["condition"], role)
		require.Equal(t, "service_completed_successfully", m(m(svc["depends_on"])["temporal-setup"])["condition"], role)
		require.Equal(t, []any{role}, svc["command"])
		for k := range m(svc["environment"]) {
			require.True(t, known[k], "%s: %s is not a setting of cmd/svc", role, k)
		}
	}
}

func TestKubernetesManifests(t *testing.T) {
	known := settings(t)
	kust := readYAML(t, "kubernetes/kustomization.yaml")[0]
	kinds := map[string]map[string]any{}
	for _, f := range kust["resources"].([]any) {
		for _, doc := range readYAML(t, filepath.Join("kubernetes", f.(string))) {
			require.NotEmpty(t, doc["apiVersion"], f)
			name := m(doc["metadata"])["name"].(string)
			kinds[doc["kind"].(string)+"/"+name] = doc
			if doc["kind"] == "ConfigMap" {
				for k := range m(doc["data"]) {
					require.True(t, known[k], "%s is not a setting", k)
				}
			}
			if doc["kind"] == "Secret" {
				for k := range m(doc["stringData"]) {
					require.True(t, known[k], "%s is not a setting", k)
				}
			}
		}
	}
	container := func(key string) map[string]any {
		d, ok := kinds[key]
		require.True(t, ok, key)
		return m(m(m(m(d["spec"])["template"])["spec"])["containers"].([]any)[0])
	}
	api := container("Deployment/svc-api")
	require.Equal(t, []any{"api"}, api["args"])
	require.Equal(t, "/readyz", m(m(api["readinessProbe"])["httpGet"])["path"])
	require.Equal(t, "/healthz", m(m(api["livenessProbe"])["httpGet"])["path"])
	worker := container("Deployment/svc-worker")
	require.Equal(t, []any{"worker"}, worker["args"])
	require.Equal(t, "/readyz", m(m(worker["readinessProbe"])["httpGet"])["path"])
	require.Equal(t, "/healthz", m(m(worker["livenessProbe"])["httpGet"])["path"])
	require.Equal(t, "metrics", m(m(worker["livenessProbe"])["httpGet"])["port"])
	require.Equal(t, []any{"migrate"}, container("Job/svc-migrate")["args"])
	for _, d := range []string{"Deployment/svc-api", "Deployment/svc-worker"} {
		inits := m(m(m(kinds[d]["spec"])["template"])["spec"])["initContainers"].([]any)
		require.Equal(t, []any{"temporal-setup"}, m(inits[0])["args"], "%s registers the search attributes before it starts", d)
	}
	hpa := m(kinds["HorizontalPodAutoscaler/svc-worker"]["spec"])
	require.Equal(t, "svc-worker", m(hpa["scaleTargetRef"])["name"])
	require.Equal(t, "cpu", m(m(hpa["metrics"].([]any)[0])["resource"])["name"])
	require.Contains(t, kinds, "Service/svc-api")
}

// The image builds the binary the way `make build` does.
func TestDockerfileBuildsLikeMake(t *testing.T) {
	docker, err := os.ReadFile("Dockerfile")
	require.NoError(t, err)
	makefile, err := os.ReadFile("../Makefile")
	require.NoError(t, err)
	build := regexp.MustCompile(`go build -o \S+ (\./cmd/svc)`)
	fromMake := build.FindStringSubmatch(string(makefile))
	fromDocker := build.FindStringSubmatch(string(docker))
	require.NotNil(t, fromMake)
	require.NotNil(t, fromDocker)
	require.Equal(t, fromMake[1], fromDocker[1])
	require.Contains(t, string(docker), "libvips-dev", "cgo needs libvips at build time")
	require.Contains(t, string(docker), "libvips42", "and at run time")
	require.Contains(t, string(docker), `ENTRYPOINT ["/usr/local/bin/svc"]`)
}

// kubectl (when the machine has it) builds the kustomization offline.
func TestKustomizeBuilds(t *testing.T) {
	kubectl, err := exec.LookPath("kubectl")
	if err != nil {
		t.Skip("kubectl is not installed; TestKubernetesManifests still checks the files")
	}
	out, err := exec.Command(kubectl, "kustomize", "kubernetes").CombinedOutput()
	require.NoError(t, err, string(out))
	require.Contains(t, string(out), "image: registry.example.com/svc:latest")
	require.Equal(t, 7, strings.Count(string(out), "\nkind: ")+boolInt(strings.HasPrefix(string(out), "kind: ")))
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// The compose file loads with compose-go, the loader `docker compose config`
// runs (schema validation, interpolation, dependency checks), since no
// Docker client here has the compose plugin.
func TestComposeFileLoadsLikeDockerCompose(t *testing.T) {
	project, err := composeloader.LoadWithContext(context.Background(), composetypes.ConfigDetails{
		WorkingDir:  ".",
		ConfigFiles: []composetypes.ConfigFile{{Filename: "compose.yaml"}},
		Environment: composetypes.Mapping{},
	})
	require.NoError(t, err)
	require.Equal(t, "svc", project.Name)
	for _, role := range []string{"api", "worker"} {
		svc, ok := project.Services[role]
		require.True(t, ok, role)
		require.NotNil(t, svc.Deploy)
		require.Equal(t, 2, *svc.Deploy.Replicas, role)
		require.Equal(t, "svc:local", svc.Image, role)
		require.Contains(t, svc.DependsOn, "migrate", role)
		require.Equal(t, "http://jaeger:4318", *svc.Environment["SVC_OTEL_ENDPOINT"], role)
	}
	require.ElementsMatch(t, []string{"postgres", "temporal", "temporal-ui", "minio", "mailpit", "jaeger", "migrate", "temporal-setup", "api", "worker", "gateway"},
		project.ServiceNames())
}
