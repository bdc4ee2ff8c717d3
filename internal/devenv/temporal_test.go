package devenv

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/temporal"

	"github.com/merchantsvc/svc/internal/temporalsetup"
	"github.com/merchantsvc/svc/workflows"
)

// The development server is whole when StartTemporal returns: every role
// has joined the membership ring (so an immediate Stop cannot race a
// service still joining it) and the service's search attributes exist. A
// restart on the same store keeps them and starts as fast as the first:
// on a SQLite file, and on Postgres (databases created, schema applied,
// and on the restart the schema left as it is).
func TestTemporalStartsWholeAndStopsAtOnce(t *testing.T) {
	ctx := context.Background()
	stores := map[string]TemporalOptions{"sqlite": {DBFile: filepath.Join(t.TempDir(), "temporal.db"), SearchAttributes: workflows.SearchAttributeTypes}}
	if admin := os.Getenv("SVC_TEST_DATABASE_URL"); admin != "" {
		database := fmt.Sprintf("temporal_test_%d", rand.Uint32())
		stores["postgres"] = TemporalOptions{Postgres: &TemporalPostgres{AdminURL: admin, Database: database}, SearchAttributes: workflows.SearchAttributeTypes}
		t.Cleanup(func() {
			conn, err := pgx.Connect(ctx, admin)
			require.NoError(t, err)
			defer conn.Close(ctx)
			for _, db := range []string{database, database + "_visibility"} {
				_, err := conn.Exec(ctx, "DROP DATABASE IF EXISTS "+db+" WITH (FORCE)")
				require.NoError(t, err)
			}
		})
	} else {
		t.Log("SVC_TEST_DATABASE_URL is not set: Temporal on Postgres is not tried (run through make test)")
	}
	for name, opts := range stores {
		t.Run(name, func(t *testing.T) {
			for i := range 2 {
				started := time.Now()
				tmp, err := StartTemporal(ctx, opts)
				require.NoError(t, err)
				t.Logf("start %d took %s", i+1, time.Since(started).Round(time.Millisecond))
				require.Less(t, time.Since(started), 15*time.Second, "a restart does not wait on the previous run's dead members")
				c, err := tmp.Client(ctx)
				require.NoError(t, err)
				attrs, err := c.OperatorService().ListSearchAttributes(ctx, &operatorservice.ListSearchAttributesRequest{Namespace: tmp.Namespace})
				require.NoError(t, err)
				for name, kind := range workflows.SearchAttributeTypes {
					require.Equal(t, kind, attrs.GetCustomAttributes()[name], name)
				}
				require.NoError(t, temporalsetup.RegisterSearchAttributes(ctx, c, tmp.Namespace, workflows.SearchAttributeTypes), "registering again changes nothing")
				c.Close()
				require.NoError(t, tmp.Stop())
			}
		})
	}
}

// The embedded server's visibility table keeps only the indexes its lists
// use, and those lists still answer: the UI's filters by the service's
// search attributes, by type and by status find a running workflow.
func TestTemporalVisibilityKeepsWhatListsUse(t *testing.T) {
	ctx := context.Background()
	file := filepath.Join(t.TempDir(), "temporal.db")
	tmp, err := StartTemporal(ctx, TemporalOptions{DBFile: file, SearchAttributes: workflows.SearchAttributeTypes})
	require.NoError(t, err)
	t.Cleanup(func() { _ = tmp.Stop() })
	c, err := tmp.Client(ctx)
	require.NoError(t, err)
	defer c.Close()

	storeID := fmt.Sprintf("store-%d", rand.Uint32())
	work := workflows.Work{Kind: workflows.KindOrderPlaced, StoreID: uuid.New(), ResourceID: uuid.New(), Summary: "test"}
	opts := work.StartOptions("visibility-test-"+storeID, "no-worker")
	opts.TypedSearchAttributes = temporal.NewSearchAttributes(workflows.StoreIDAttribute.ValueSet(storeID), workflows.WorkKindAttribute.ValueSet("order-placed"))
	_, err = c.ExecuteWorkflow(ctx, opts, "NotRegistered")
	require.NoError(t, err)
	for _, query := range []string{
		"StoreId = '" + storeID + "'",
		"StoreId = '" + storeID + "' AND WorkKind = 'order-placed' AND ExecutionStatus = 'Running'",
		"StoreId = '" + storeID + "' AND WorkflowType = 'NotRegistered'",
	} {
		require.Eventually(t, func() bool {
			list, err := c.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Namespace: tmp.Namespace, Query: query})
			return err == nil && len(list.GetExecutions()) == 1
		}, 10*time.Second, 50*time.Millisecond, query)
	}

	db, err := sql.Open("sqlite", file)
	require.NoError(t, err)
	defer db.Close()
	indexes := map[string]bool{}
	rows, err := db.Query(`SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'executions_visibility'`)
	require.NoError(t, err)
	for rows.Next() {
		var name string
		require.NoError(t, rows.Scan(&name))
		indexes[name] = true
	}
	require.NoError(t, rows.Err())
	for _, kept := range []string{"default_idx", "by_workflow_id", "by_workflow_type", "by_status", "by_keyword_01", "by_temporal_namespace_division"} {
		require.True(t, indexes[kept], kept)
	}
	for _, dropped := range unusedVisibilityIndexes {
		require.False(t, indexes[dropped], dropped)
	}
	var triggers int
	require.NoError(t, db.QueryRow(`SELECT count(*) FROM sqlite_master WHERE type = 'trigger' AND tbl_name = 'executions_visibility'`).Scan(&triggers))
	require.Zero(t, triggers, "the full-text triggers are dropped")
}

// Once the search attributes' reads stop going to the database
// (searchAttributesSettle after the registration), the server's caches
// hold them: a workflow carrying every one of the service's attributes is
// accepted, and listed by them.
func TestTemporalAcceptsTheSearchAttributesFromItsCaches(t *testing.T) {
	ctx := context.Background()
	tmp, err := StartTemporal(ctx, TemporalOptions{SearchAttributes: workflows.SearchAttributeTypes})
	require.NoError(t, err)
	t.Cleanup(func() { _ = tmp.Stop() })
	c, err := tmp.Client(ctx)
	require.NoError(t, err)
	defer c.Close()
	time.Sleep(searchAttributesSettle + namespaceRefresh)

	storeID := uuid.New()
	work := workflows.Work{Kind: workflows.KindOrderPlaced, StoreID: storeID, ResourceID: uuid.New(), OrderNumber: "ORD-1001", Summary: "test"}
	_, err = c.ExecuteWorkflow(ctx, work.StartOptions("cached-attributes-test", "no-worker"), "NotRegistered")
	require.NoError(t, err)
	query := "StoreId = '" + storeID.String() + "' AND WorkKind = '" + string(workflows.KindOrderPlaced) + "' AND OrderNumber = 'ORD-1001'"
	require.Eventually(t, func() bool {
		list, err := c.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Namespace: tmp.Namespace, Query: query})
		return err == nil && len(list.GetExecutions()) == 1
	}, 10*time.Second, 50*time.Millisecond, query)
}
