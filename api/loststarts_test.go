package api_test

import (
	"context"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/interceptor"

	"github.com/merchantsvc/svc/api"
	"github.com/merchantsvc/svc/internal/testenv"
	"github.com/merchantsvc/svc/internal/webhook"
	"github.com/merchantsvc/svc/storage/blob"
)

// switchableTemporal fails every workflow start while down is set, as an
// unreachable Temporal would.
type switchableTemporal struct {
	interceptor.ClientInterceptorBase
	down *atomic.Bool
}

func (s *switchableTemporal) InterceptClient(next interceptor.ClientOutboundInterceptor) interceptor.ClientOutboundInterceptor {
	return &startsFail{ClientOutboundInterceptorBase: interceptor.ClientOutboundInterceptorBase{Next: next}, down: s.down}
}

type startsFail struct {
	interceptor.ClientOutboundInterceptorBase
	down *atomic.Bool
}

func (s *startsFail) ExecuteWorkflow(ctx context.Context, in *interceptor.ClientExecuteWorkflowInput) (client.WorkflowRun, error) {
	if s.down.Load() {
		return nil, serviceerror.NewUnavailable("temporal is down (test)")
	}
	return s.Next.ExecuteWorkflow(ctx, in)
}

// When Temporal does not take a start, the image, the import and the
// redelivery are still accepted (202), and the dispatcher's sweep starts
// each once Temporal is back: none stays processing, running or retrying.
func TestLostWorkflowStartsAreSweptUp(t *testing.T) {
	rec := newReceiver(t, func(int) int { return http.StatusInternalServerError })
	cfg := api.Config{WebhookGuard: webhook.Guard{AllowPrivate: true}, WebhookRetrySchedule: []time.Duration{time.Hour}}
	h := newHarness(t, cfg)
	httpClient, err := webhook.Guard{AllowPrivate: true}.NewClient(rec.caFile)
	require.NoError(t, err)
	h.lostStartAge = 200 * time.Millisecond
	h.startWorker(httpClient)
	var down atomic.Bool
	cfg.TaskQueue = h.queue
	broken := newHarnessOver(t, cfg, h.db, testenv.TemporalWith(t, client.Options{Interceptors: []interceptor.ClientInterceptor{&switchableTemporal{down: &down}}}), h.blob)

	s := newShop(t, h, "lost", 10)
	sub := h.do(request{method: "POST", path: storePath(s.m.storeID, "/webhooks"), auth: bearer(s.token),
		body: map[string]any{"url": rec.url(), "events": []string{"order.created"}}})
	require.Equal(t, http.StatusCreated, sub.Status, string(sub.Raw))
	subID := sub.data()["id"].(string)
	h.placeOrder(s, "cod", 1)
	waitFor(t, "the first attempt", func() bool { return len(rec.requests()) == 1 })
	var deliveryID string
	require.NoError(t, testenv.SQL(t, h.db).QueryRow(context.Background(), `SELECT id FROM webhook_deliveries WHERE subscription_id = $1`, subID).Scan(&deliveryID))
	h.exec(`UPDATE webhook_deliveries SET status = 'exhausted' WHERE id = $1`, deliveryID)

	down.Store(true)
	productID := h.createProduct(s.token, s.m.storeID, map[string]any{"name": "Lamp", "price": 100})["id"].(string)
	image := broken.uploadFile(s.token, storePath(s.m.storeID, "/products/"+productID+"/images"), "file", photo(t, "coffee.jpg"), nil)
	require.Equal(t, http.StatusAccepted, image.Status, string(image.Raw))
	require.Equal(t, "processing", image.Body["data"].(map[string]any)["status"])
	imp := broken.importCSV(s.token, s.m.storeID, "sku,name,price\nLAMP-2,Lamp two,12.50\n", nil)
	require.Equal(t, http.StatusAccepted, imp.Status, string(imp.Raw))
	redeliver := broken.do(request{method: "POST", path: storePath(s.m.storeID, "/webhooks/"+subID+"/deliveries/"+deliveryID+"/redeliver"), auth: bearer(s.token)})
	require.Equal(t, http.StatusAccepted, redeliver.Status, string(redeliver.Raw))
	down.Store(false)

	imageID := image.Body["data"].(map[string]any)["id"].(string)
	waitFor(t, "the image", func() bool {
		r := h.do(request{method: "GET", path: storePath(s.m.storeID, "/products/"+productID+"/images/"+imageID), auth: bearer(s.token)})
		return r.data()["status"] == "ready"
	})
	importID := imp.data()["import_id"].(string)
	waitFor(t, "the import", func() bool {
		r := h.do(request{method: "GET", path: storePath(s.m.storeID, "/products/imports/"+importID), auth: bearer(s.token)})
		return r.data()["status"] == "succeeded"
	})
	waitFor(t, "the redelivery", func() bool { return len(rec.requests()) == 2 })
	var pending int
	require.NoError(t, testenv.SQL(t, h.db).QueryRow(context.Background(), `SELECT
		(SELECT count(*) FROM product_images WHERE workflow_started_at IS NULL) +
		(SELECT count(*) FROM product_imports WHERE workflow_started_at IS NULL) +
		(SELECT count(*) FROM webhook_deliveries WHERE ladder_from IS NOT NULL)`).Scan(&pending))
	require.Zero(t, pending, "every start recorded")
}

// An upload the object store does not take answers 503 with Retry-After and
// leaves nothing in progress; the same upload succeeds once it is back.
func TestUploadsWhenTheObjectStoreFails(t *testing.T) {
	h := newHarness(t, api.Config{})
	h.startWorker(nil)
	endpoint, accessKey, secretKey := testenv.S3(t)
	missing, err := blob.Open(blob.Options{Endpoint: endpoint, AccessKey: accessKey, SecretKey: secretKey, Bucket: "no-such-bucket"})
	require.NoError(t, err)
	broken := newHarnessOver(t, api.Config{TaskQueue: h.queue}, h.db, h.temporal, missing)
	s := newShop(t, h, "nostore", 10)
	productID := h.createProduct(s.token, s.m.storeID, map[string]any{"name": "Lamp", "price": 100})["id"].(string)

	image := broken.uploadFile(s.token, storePath(s.m.storeID, "/products/"+productID+"/images"), "file", photo(t, "coffee.jpg"), nil)
	require.Equal(t, http.StatusServiceUnavailable, image.Status, string(image.Raw))
	require.Equal(t, "NOT_READY", image.errorCode())
	require.NotEmpty(t, image.Header.Get("Retry-After"))
	require.NotEmpty(t, image.errorField("message_ar"))
	imp := broken.importCSV(s.token, s.m.storeID, "sku,name,price\nLAMP-2,Lamp two,12.50\n", nil)
	require.Equal(t, http.StatusServiceUnavailable, imp.Status, string(imp.Raw))
	var stuck int
	require.NoError(t, testenv.SQL(t, h.db).QueryRow(context.Background(), `SELECT
		(SELECT count(*) FROM product_images WHERE status = 'processing') + (SELECT count(*) FROM product_imports WHERE status = 'running')`).Scan(&stuck))
	require.Zero(t, stuck)

	require.Equal(t, http.StatusCreated, h.uploadFile(s.token, storePath(s.m.storeID, "/products/"+productID+"/images"), "file", photo(t, "coffee.jpg"), nil).Status)
	require.Equal(t, http.StatusOK, h.importCSV(s.token, s.m.storeID, "sku,name,price\nLAMP-2,Lamp two,12.50\n", nil).Status)
}
