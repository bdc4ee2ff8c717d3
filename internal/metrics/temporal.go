package metrics

import (
	"maps"
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
	maps.Copy(merged, h.tags)
	maps.Copy(merged, tags)
	return temporalHandler{vecs: h.vecs, tags: merged}
}

// family returns the vector registered under name, making and registering
// it on first use.
func family[V prometheus.Collector](v *temporalVecs, vecs map[string]V, name string, newVec func() V) V {
	v.mu.Lock()
	defer v.mu.Unlock()
	vec, ok := vecs[name]
	if !ok {
		vec = newVec()
		_ = v.registry.Register(vec)
		vecs[name] = vec
	}
	return vec
}

// Counter implements client.MetricsHandler.
func (h temporalHandler) Counter(name string) client.MetricsCounter {
	vec := family(h.vecs, h.vecs.counters, name, func() *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{Name: metricName(name), Help: "Temporal SDK: " + name}, temporalLabels)
	})
	c := vec.WithLabelValues(h.values()...)
	return counterFunc(func(d int64) { c.Add(float64(d)) })
}

// Gauge implements client.MetricsHandler.
func (h temporalHandler) Gauge(name string) client.MetricsGauge {
	vec := family(h.vecs, h.vecs.gauges, name, func() *prometheus.GaugeVec {
		return prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: metricName(name), Help: "Temporal SDK: " + name}, temporalLabels)
	})
	return gaugeFunc(vec.WithLabelValues(h.values()...).Set)
}

// Timer implements client.MetricsHandler.
func (h temporalHandler) Timer(name string) client.MetricsTimer {
	vec := family(h.vecs, h.vecs.timers, name, func() *prometheus.HistogramVec {
		return prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: metricName(name) + "_seconds", Help: "Temporal SDK: " + name,
			Buckets: prometheus.ExponentialBuckets(0.001, 4, 10)}, temporalLabels)
	})
	o := vec.WithLabelValues(h.values()...)
	return timerFunc(func(d time.Duration) { o.Observe(d.Seconds()) })
}

type counterFunc func(int64)

func (f counterFunc) Inc(d int64) { f(d) }

type gaugeFunc func(float64)

func (f gaugeFunc) Update(v float64) { f(v) }

type timerFunc func(time.Duration)

func (f timerFunc) Record(d time.Duration) { f(d) }
