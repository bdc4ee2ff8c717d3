package metrics_test

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"

	"github.com/merchantsvc/svc/internal/metrics"
)

// The Temporal SDK's counters, gauges and timers land in Prometheus as one
// family each, whatever tags they come with.
func TestTemporalHandler(t *testing.T) {
	reg := prometheus.NewRegistry()
	h := metrics.TemporalHandler(reg)
	h.WithTags(map[string]string{"task_queue": "svc", "activity_type": "AttemptDelivery"}).Counter("temporal_activity_execution_failed").Inc(2)
	h.WithTags(map[string]string{"task_queue": "svc", "unknown_tag": "x"}).Counter("temporal_activity_execution_failed").Inc(1)
	h.WithTags(map[string]string{"worker_type": "ActivityWorker"}).Gauge("temporal_worker_task_slots_available").Update(7)
	h.Timer("temporal_request_latency").Record(20 * time.Millisecond)

	n, err := testutil.GatherAndCount(reg)
	require.NoError(t, err)
	require.Equal(t, 4, n)
	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(`
# HELP temporal_activity_execution_failed Temporal SDK: temporal_activity_execution_failed
# TYPE temporal_activity_execution_failed counter
temporal_activity_execution_failed{activity_type="",client_name="",namespace="",operation="",poller_type="",status_code="",task_queue="svc",worker_type="",workflow_type=""} 1
temporal_activity_execution_failed{activity_type="AttemptDelivery",client_name="",namespace="",operation="",poller_type="",status_code="",task_queue="svc",worker_type="",workflow_type=""} 2
`), "temporal_activity_execution_failed"))
}

func TestWorkerCountersAreNilSafe(t *testing.T) {
	var none *metrics.Worker
	none.Delivery("succeeded")
	none.ImportedRows(5)
	m := metrics.NewWorker()
	m.Delivery("succeeded")
	m.Delivery("succeeded")
	m.ImportedRows(1000)
	require.Equal(t, 2.0, testutil.ToFloat64(m.Deliveries.WithLabelValues("succeeded")))
	require.Equal(t, 1000.0, testutil.ToFloat64(m.ImportRows))
}
