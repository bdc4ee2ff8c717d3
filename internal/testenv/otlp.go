package testenv

import (
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"
)

// Collector is a loopback OTLP/HTTP trace receiver that keeps what it is
// sent: the paths posted to, the span names and the service names.
type Collector struct {
	URL      string
	mu       sync.Mutex
	paths    []string
	spans    []string
	services map[string]bool
}

// TraceCollector starts a Collector, closed when the test ends.
func TraceCollector(t testing.TB) *Collector {
	c := &Collector{services: map[string]bool{}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var req collectortrace.ExportTraceServiceRequest
		if err := proto.Unmarshal(body, &req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		c.mu.Lock()
		c.paths = append(c.paths, r.URL.Path)
		for _, rs := range req.ResourceSpans {
			for _, attr := range rs.GetResource().GetAttributes() {
				if attr.Key == "service.name" {
					c.services[attr.Value.GetStringValue()] = true
				}
			}
			for _, ss := range rs.ScopeSpans {
				for _, s := range ss.Spans {
					c.spans = append(c.spans, s.Name)
				}
			}
		}
		c.mu.Unlock()
		out, _ := proto.Marshal(&collectortrace.ExportTraceServiceResponse{})
		w.Header().Set("Content-Type", "application/x-protobuf")
		_, _ = w.Write(out)
	}))
	t.Cleanup(srv.Close)
	c.URL = srv.URL
	return c
}

// Paths are the URL paths spans were posted to, one per export.
func (c *Collector) Paths() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.paths...)
}

// SpanNames are the names of the spans received, in order.
func (c *Collector) SpanNames() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.spans...)
}

// Services are the service.name values of the resources received.
func (c *Collector) Services() map[string]bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]bool, len(c.services))
	for k, v := range c.services {
		out[k] = v
	}
	return out
}
