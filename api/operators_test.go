package api_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/interceptor"

	"github.com/merchantsvc/svc/activities"
	"github.com/merchantsvc/svc/api"
	"github.com/merchantsvc/svc/internal/webhook"
	"github.com/merchantsvc/svc/workflows"
)

// listWork lists the workflows a visibility query finds, with their search
// attributes and summaries, as the Temporal UI does.
func (h *harness) listWork(query string) []workflowListing {
	h.t.Helper()
	ctx := context.Background()
	var out []workflowListing
	var token []byte
	for {
		page, err := h.temporal.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Query: query, NextPageToken: token})
		require.NoError(h.t, err, query)
		for _, info := range page.Executions {
			l := workflowListing{ID: info.Execution.WorkflowId, Type: info.Type.Name, Running: info.Status.String() == "Running"}
			fields := info.GetSearchAttributes().GetIndexedFields()
			for name, target := range map[string]*string{"StoreId": &l.StoreID, "WorkKind": &l.Kind, "ResourceId": &l.ResourceID, "OrderNumber": &l.OrderNumber} {
				if p, ok := fields[name]; ok {
					require.NoError(h.t, converter.GetDefaultDataConverter().FromPayload(p, target))
				}
			}
			desc, err := h.temporal.DescribeWorkflowExecution(ctx, info.Execution.WorkflowId, info.Execution.RunId)
			require.NoError(h.t, err)
			if s := desc.GetExecutionConfig().GetUserMetadata().GetSummary(); s != nil {
				require.NoError(h.t, converter.GetDefaultDataConverter().FromPayload(s, &l.Summary))
			}
			out = append(out, l)
		}
		if token = page.NextPageToken; len(token) == 0 {
			return out
		}
	}
}

type workflowListing struct {
	ID, Type, StoreID, Kind, ResourceID, OrderNumber, Summary string
	Running                                                   bool
}

// An operator filters the Temporal UI by StoreId and sees exactly that
// store's work, each workflow with its kind and a summary a person reads;
// a long import answers its progress query and heartbeats its progress;
// a workflow started before the attributes existed still lists.
func TestOperatorsFindAStoresWorkByStoreId(t *testing.T) {
	rec := newReceiver(t, func(int) int { return http.StatusOK })
	h := newHarness(t, api.Config{WebhookGuard: webhook.Guard{AllowPrivate: true}, ImportWait: time.Millisecond})
	// Each batch pauses after it commits, so the import is still running
	// while the test reads its heartbeat, lists running work and queries it.
	h.workerInterceptors = []interceptor.WorkerInterceptor{slowHeartbeats(1500 * time.Millisecond)}
	httpClient, err := webhook.Guard{AllowPrivate: true}.NewClient(rec.caFile)
	require.NoError(t, err)
	h.startWorker(httpClient)

	// An old run: started the way the service started workflows before.
	oldID := "ping:before-attributes-" + uuid.NewString()
	old, err := h.temporal.ExecuteWorkflow(context.Background(), client.StartWorkflowOptions{ID: oldID, TaskQueue: h.queue},
		workflows.Ping, workflows.PingInput{})
	require.NoError(t, err)
	require.NoError(t, old.Get(context.Background(), nil))

	type storeWork struct {
		s             shop
		orderNumber   string
		importID      string
		expectedKinds []string
	}
	stores := map[string]*storeWork{}
	for _, name := range []string{"ops-a", "ops-b"} {
		s := newShop(t, h, name, 100)
		sub := h.do(request{method: "POST", path: storePath(s.m.storeID, "/webhooks"), auth: bearer(s.token),
			body: map[string]any{"url": rec.url(), "events": []string{"order.created"}}})
		require.Equal(t, http.StatusCreated, sub.Status, string(sub.Raw))
		order := h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders"), auth: bearer(s.token), body: orderBody(s.variantID, 1, "+201001234567")})
		require.Equal(t, http.StatusCreated, order.Status, string(order.Raw))
		imp := h.importCSV(s.token, s.m.storeID, productCSV(name, 3000), nil)
		require.Equal(t, http.StatusAccepted, imp.Status, string(imp.Raw))
		stores[s.m.storeID] = &storeWork{s: s, orderNumber: order.data()["order_number"].(string), importID: imp.data()["import_id"].(string)}
	}

	a := stores[firstKey(stores)]
	// While A's import runs: its heartbeat details and its progress query.
	importWorkflow := workflows.ProductImportWorkflowID(uuid.MustParse(a.importID))
	var beat activities.ImportHeartbeat
	waitFor(t, "the import's heartbeat details", func() bool {
		desc, err := h.temporal.DescribeWorkflowExecution(context.Background(), importWorkflow, "")
		require.NoError(t, err)
		for _, pa := range desc.PendingActivities {
			if pa.HeartbeatDetails != nil && converter.GetDefaultDataConverter().FromPayloads(pa.HeartbeatDetails, &beat) == nil && beat.RowsDone > 0 {
				return true
			}
		}
		return false
	})
	require.Equal(t, 3, beat.Batches)
	running := h.listWork(fmt.Sprintf(`StoreId = "%s" AND ExecutionStatus = "Running"`, a.s.m.storeID))
	require.NotEmpty(t, running)
	for _, l := range running {
		require.True(t, l.Running, l.ID)
		require.Equal(t, a.s.m.storeID, l.StoreID, l.ID)
	}
	value, err := h.temporal.QueryWorkflow(context.Background(), importWorkflow, "", workflows.ProgressQuery)
	require.NoError(t, err)
	var progress workflows.ImportProgress
	require.NoError(t, value.Get(&progress))
	require.Equal(t, "running", progress.Status)

	waitFor(t, "both imports to finish", func() bool {
		for _, w := range stores {
			resp := h.do(request{method: "GET", path: storePath(w.s.m.storeID, "/products/imports/"+w.importID), auth: bearer(w.s.token)})
			if resp.data()["status"] != "succeeded" {
				return false
			}
		}
		return true
	})
	// The import's row says succeeded once its last batch commits; the
	// workflow hears the activity's result a moment later. Ask it once it
	// has finished.
	require.NoError(t, h.temporal.GetWorkflow(context.Background(), importWorkflow, "").Get(context.Background(), nil))
	value, err = h.temporal.QueryWorkflow(context.Background(), importWorkflow, "", workflows.ProgressQuery)
	require.NoError(t, err)
	require.NoError(t, value.Get(&progress))
	require.Equal(t, workflows.ImportProgress{Status: "succeeded", TotalRows: 3000, ProcessedRows: 3000, Batches: 3, BatchesDone: 3}, progress)

	for storeID, w := range stores {
		var listed []workflowListing
		waitFor(t, "the store's work in visibility", func() bool {
			listed = h.listWork(fmt.Sprintf(`StoreId = "%s"`, storeID))
			kinds := map[string]bool{}
			for _, l := range listed {
				kinds[l.Kind] = true
			}
			return kinds["order-placed"] && kinds["product-import"] && kinds["webhook-dispatch"]
		})
		for _, l := range listed {
			require.Equal(t, storeID, l.StoreID, "only the store's own work: %+v", l)
			require.NotEmpty(t, l.Summary, "%s has a summary", l.ID)
			require.NotEmpty(t, l.ResourceID, l.ID)
			require.Contains(t, l.Summary, "store ops-", l.ID)
			switch l.Kind {
			case "order-placed":
				require.Equal(t, w.orderNumber, l.OrderNumber)
				require.Contains(t, l.Summary, w.orderNumber+" · store ops-")
				require.Contains(t, l.Summary, "3 side effects")
			case "product-import":
				require.Equal(t, w.importID, l.ResourceID)
			}
		}
		byNumber := h.listWork(fmt.Sprintf(`StoreId = "%s" AND OrderNumber = "%s"`, storeID, w.orderNumber))
		require.Len(t, byNumber, 1)
		require.Equal(t, "OrderPlaced", byNumber[0].Type)
	}
	// The run from before the attributes: found by id, not by store.
	before := h.listWork(fmt.Sprintf(`WorkflowId = "%s"`, oldID))
	require.Len(t, before, 1)
	require.Empty(t, before[0].StoreID)
}

func firstKey[V any](m map[string]V) string {
	for k := range m {
		return k
	}
	return ""
}
