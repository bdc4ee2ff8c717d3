package metrics

import (
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.temporal.io/sdk/client"
)

// The Temporal SDK reports through a MetricsHandler; this one feeds a
// Prometheus registry. (The SDK's tally bridge is not served by the module
// proxy here.) Every Temporal metric gets the same label set, so that a
// metric reported with different tags stays one family; tags outside it are
// dropped.
var temporalLabels = []string{"namespace", "task_queue", "workflow_type", "activity_type", "operation", "worker_type",
	"poller_type", "status_code", "client_name"}

type temporalVecs struct {
	mu       sync.Mutex
	registry prometheus.Registerer
	counters map[string]*prometheus.CounterVec
	gauges   map[string]*prometheus.GaugeVec
	timers   map[string]*prometheus.HistogramVec
}

type temporalHandler struct {
	vecs *temporalVecs
	tags map[string]string
}

// TemporalHandler returns the SDK metrics handler writing into registry.
func TemporalHandler(registry prometheus.Registerer) client.MetricsHandler {
	return temporalHandler{vecs: &temporalVecs{registry: registry, counters: map[string]*prometheus.CounterVec{},
		gauges: map[string]*prometheus.GaugeVec{}, timers: map[string]*prometheus.HistogramVec{}}}
}

func metricName(name string) string {
	return "temporal_" + strings.NewReplacer(".", "_", "-", "_").Replace(strings.TrimPrefix(name, "temporal_"))
}

func (h temporalHandler) values() []string {
	out := make([]string, len(temporalLabels))
	for i, k := range temporalLabels {
		out[i] = h.tags[k]
	}
	return out
}

// WithTags implements client.MetricsHandler.
func (h temporalHandler) WithTags(tags map[string]string) client.MetricsHandler {
	merged := make(map[string]string, len(h.tags)+len(tags))
	for k, v := range h.tags {
		merged[k] = v
	}
	for k, v := range tags {
		merged[k] = v
	}
	return temporalHandler{vecs: h.vecs, tags: merged}
}

// Counter implements client.MetricsHandler.
func (h temporalHandler) Counter(name string) client.MetricsCounter {
	v := h.vecs
	v.mu.Lock()
	vec, ok := v.counters[name]
	if !ok {
		vec = prometheus.NewCounterVec(prometheus.CounterOpts{Name: metricName(name), Help: "Temporal SDK: " + name}, temporalLabels)
		_ = v.registry.Register(vec)
		v.counters[name] = vec
	}
	v.mu.Unlock()
	c := vec.WithLabelValues(h.values()...)
	return counterFunc(func(d int64) { c.Add(float64(d)) })
}

// Gauge implements client.MetricsHandler.
func (h temporalHandler) Gauge(name string) client.MetricsGauge {
	v := h.vecs
	v.mu.Lock()
	vec, ok := v.gauges[name]
	if !ok {
		vec = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: metricName(name), Help: "Temporal SDK: " + name}, temporalLabels)
		_ = v.registry.Register(vec)
		v.gauges[name] = vec
	}
	v.mu.Unlock()
	g := vec.WithLabelValues(h.values()...)
	return gaugeFunc(g.Set)
}

// Timer implements client.MetricsHandler.
func (h temporalHandler) Timer(name string) client.MetricsTimer {
	v := h.vecs
	v.mu.Lock()
	vec, ok := v.timers[name]
	if !ok {
		vec = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: metricName(name) + "_seconds", Help: "Temporal SDK: " + name,
			Buckets: prometheus.ExponentialBuckets(0.001, 4, 10)}, temporalLabels)
		_ = v.registry.Register(vec)
		v.timers[name] = vec
	}
	v.mu.Unlock()
	o := vec.WithLabelValues(h.values()...)
	return timerFunc(func(d time.Duration) { o.Observe(d.Seconds()) })
}

type counterFunc func(int64)

func (f counterFunc) Inc(d int64) { f(d) }

type gaugeFunc func(float64)

func (f gaugeFunc) Update(v float64) { f(v) }

type timerFunc func(time.Duration)

func (f timerFunc) Record(d time.Duration) { f(d) }
