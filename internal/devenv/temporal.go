package devenv

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/server/api/adminservice/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/merchantsvc/svc/internal/temporalsetup"
	uiconfig "github.com/temporalio/ui-server/v2/server/config"
	uiserveroptions "github.com/temporalio/ui-server/v2/server/server_options"

	uiserver "github.com/temporalio/ui-server/v2/server"
	"go.temporal.io/sdk/client"
	"go.temporal.io/server/common/cluster"
	"go.temporal.io/server/common/config"
	"go.temporal.io/server/common/dynamicconfig"
	"go.temporal.io/server/common/log"
	sqliteplugin "go.temporal.io/server/common/persistence/sql/sqlplugin/sqlite"
	"go.temporal.io/server/schema/sqlite"
	"go.temporal.io/server/temporal"
)

// Temporal is an in-process Temporal server on SQLite, with an optional web UI.
type Temporal struct {
	HostPort  string
	Namespace string
	UIURL     string // empty when no UI runs
	server    temporal.Server
	ui        *uiserver.Server
}

// TemporalOptions says where Temporal keeps its state and where it listens.
type TemporalOptions struct {
	// DBFile persists state across runs; empty keeps everything in memory.
	DBFile    string
	Port      int // frontend gRPC port
	UIPort    int // 0: no UI
	Namespace string
	// Postgres, when set, keeps the state on a Postgres server instead
	// (DBFile is then unused).
	Postgres *TemporalPostgres
	// SearchAttributes are registered in the namespace before StartTemporal
	// returns: the service's workflows carry them, and a server that does
	// not know them refuses every start (workflows.SearchAttributeTypes,
	// handed in by the caller).
	SearchAttributes map[string]enumspb.IndexedValueType
}

// StartTemporal starts the server (all four services in this process).
func StartTemporal(ctx context.Context, opts TemporalOptions) (*Temporal, error) {
	if opts.Namespace == "" {
		opts.Namespace = "default"
	}
	var persistence config.Persistence
	var sqlCfg *config.SQL
	if opts.Postgres != nil {
		store, visibility, err := opts.Postgres.prepare(ctx)
		if err != nil {
			return nil, err
		}
		if err := opts.Postgres.forgetMembers(ctx); err != nil {
			return nil, err
		}
		sqlCfg = store
		persistence = config.Persistence{
			DefaultStore:     "postgres",
			VisibilityStore:  "postgres-visibility",
			NumHistoryShards: PostgresHistoryShards,
			DataStores:       map[string]config.DataStore{"postgres": {SQL: store}, "postgres-visibility": {SQL: visibility}},
		}
	} else {
		sqlCfg = &config.SQL{PluginName: sqliteplugin.PluginName, ConnectAttributes: map[string]string{}}
		if opts.DBFile == "" {
			sqlCfg.ConnectAttributes["mode"] = "memory"
			sqlCfg.ConnectAttributes["cache"] = "shared"
			sqlCfg.DatabaseName = fmt.Sprintf("svc-%d", rand.Int64())
		} else {
			sqlCfg.ConnectAttributes["mode"] = "rwc"
			sqlCfg.ConnectAttributes["_journal_mode"] = "wal"
			sqlCfg.ConnectAttributes["_synchronous"] = "normal"
			sqlCfg.DatabaseName = opts.DBFile
			if err := os.MkdirAll(filepath.Dir(opts.DBFile), 0o755); err != nil {
				return nil, fmt.Errorf("create temporal dir: %w", err)
			}
			if _, err := os.Stat(opts.DBFile); os.IsNotExist(err) {
				if err := sqlite.SetupSchema(sqlCfg); err != nil {
					return nil, fmt.Errorf("set up temporal schema: %w", err)
				}
			} else if err := forgetMembers(opts.DBFile); err != nil {
				return nil, err
			}
			// A file is changed before the server holds it.
			if err := slimVisibility(opts.DBFile); err != nil {
				return nil, err
			}
		}
		persistence = config.Persistence{
			DefaultStore:     sqliteplugin.PluginName,
			VisibilityStore:  sqliteplugin.PluginName,
			NumHistoryShards: 1,
			DataStores:       map[string]config.DataStore{sqliteplugin.PluginName: {SQL: sqlCfg}},
		}
	}
	cfg, err := serverConfig(persistence, opts.Port)
	if err != nil {
		return nil, err
	}
	ns, err := sqlite.NewNamespaceConfig(cfg.ClusterMetadata.CurrentClusterName, opts.Namespace, false, nil)
	if err != nil {
		return nil, fmt.Errorf("temporal namespace config: %w", err)
	}
	// CreateNamespaces writes through the generic SQL persistence, so it
	// serves the Postgres store as well as SQLite.
	if err := sqlite.CreateNamespaces(sqlCfg, ns); err != nil {
		return nil, fmt.Errorf("create temporal namespace: %w", err)
	}
	dynamicConfig := dynamicconfig.NewMemoryClient()
	for key, value := range map[dynamicconfig.Key]any{
		// One matching host: one partition per task queue, so a task
		// never waits in a partition no poller is on.
		dynamicconfig.MatchingNumTaskqueueReadPartitions.Key():  1,
		dynamicconfig.MatchingNumTaskqueueWritePartitions.Key(): 1,
		// The visibility queue is read at most visibilityReadsPerSecond
		// times a second under load, in pages large enough for every
		// task of the interval: a workflow that closes before its
		// start task is read gets one visibility write, not two.
		dynamicconfig.VisibilityProcessorMaxPollRPS.Key(): visibilityReadsPerSecond,
		dynamicconfig.VisibilityTaskBatchSize.Key():       1000,
		dynamicconfig.NamespaceCacheRefreshInterval.Key(): namespaceRefresh,
		// External payloads (payloads kept in an external store, Temporal's
		// feature for large ones) are not used here; with the feature on,
		// every event batch written is walked to add up their sizes, about
		// 2% of the server's CPU under the mix.
		dynamicconfig.ExternalPayloadsEnabled.Key(): false,
	} {
		dynamicConfig.OverrideValue(key, value)
	}
	// Until the service's search attributes are registered and every
	// cache has read them, each read of them goes to the database; after,
	// the caches answer (reading them on every workflow start and
	// visibility write was about 5% of the server's CPU under load).
	stopForcedRefresh := dynamicConfig.OverrideSetting(dynamicconfig.ForceSearchAttributesCacheRefreshOnRead, true)
	srv, err := temporal.NewServer(
		temporal.WithConfig(cfg),
		temporal.ForServices(temporal.DefaultServices),
		temporal.WithLogger(serverLogger()),
		temporal.WithDynamicConfigClient(dynamicConfig),
	)
	if err != nil {
		return nil, fmt.Errorf("create temporal server: %w", err)
	}
	if err := srv.Start(); err != nil {
		return nil, fmt.Errorf("start temporal server: %w", err)
	}
	t := &Temporal{HostPort: cfg.PublicClient.HostPort, Namespace: opts.Namespace, server: srv}
	if err := t.waitReady(ctx); err != nil {
		_ = srv.Stop()
		return nil, err
	}
	// A server stopped while one of its services is still joining the
	// membership ring panics inside ringpop (its monitor sets labels on a
	// node Stop destroyed), so Start returns only once every role is in.
	if err := t.waitMembership(ctx); err != nil {
		_ = srv.Stop()
		return nil, err
	}
	// An in-memory database exists once the server has made it.
	if sqlCfg.PluginName == sqliteplugin.PluginName && opts.DBFile == "" {
		if err := slimVisibility("file:" + sqlCfg.DatabaseName + "?cache=shared&mode=memory"); err != nil {
			_ = srv.Stop()
			return nil, err
		}
	}
	if err := t.registerSearchAttributes(ctx, opts.SearchAttributes); err != nil {
		_ = srv.Stop()
		return nil, err
	}
	time.AfterFunc(searchAttributesSettle, stopForcedRefresh)
	if opts.UIPort != 0 {
		t.ui = uiserver.NewServer(uiserveroptions.WithConfigProvider(&uiconfig.Config{
			TemporalGRPCAddress: t.HostPort,
			Host:                "127.0.0.1",
			Port:                opts.UIPort,
			EnableUI:            true,
			DefaultNamespace:    opts.Namespace,
			HideLogs:            true,
			DisableNewsFetch:    true,
			Distribution:        "svc-dev",
			CORS:                uiconfig.CORS{CookieInsecure: true},
		}))
		go func() { _ = t.ui.Start() }()
		t.UIURL = fmt.Sprintf("http://127.0.0.1:%d", opts.UIPort)
	}
	return t, nil
}

func (t *Temporal) waitReady(ctx context.Context) error {
	deadline := time.Now().Add(60 * time.Second)
	for {
		c, err := client.Dial(client.Options{HostPort: t.HostPort, Namespace: t.Namespace, Logger: quietLogger{}})
		if err == nil {
			_, err = c.CheckHealth(ctx, &client.CheckHealthRequest{})
			c.Close()
			if err == nil {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("temporal not ready: %w", err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// forgetMembers clears the membership ring a previous run on the file left.
// Its services listened on ports of their own; a restart within 20 s would
// take those dead addresses as seeds and spend about 45 s failing to join
// them before its matching and history services are in.
func forgetMembers(dbFile string) error {
	db, err := sql.Open("sqlite", dbFile)
	if err != nil {
		return fmt.Errorf("open temporal database: %w", err)
	}
	defer db.Close()
	if _, err := db.Exec(`DELETE FROM cluster_membership`); err != nil {
		return fmt.Errorf("forget the previous run's members: %w", err)
	}
	return nil
}

// unusedVisibilityIndexes are the indexes of Temporal's SQLite visibility
// table that serve list filters nobody here uses: sizes, counts and
// durations, the worker-deployment and pause attributes, and the custom
// search-attribute columns of types the service does not register (its
// four are keywords). What stays serves the Temporal UI's list and its
// filters (workflow id, type, status, task queue, times, parent and root
// workflow), schedules (TemporalNamespaceDivision) and the service's
// keyword attributes (StoreId, WorkKind, ResourceId, OrderNumber). A
// filter on a dropped column still answers, by scanning.
var unusedVisibilityIndexes = []string{
	"by_history_length", "by_history_size_bytes", "by_execution_duration", "by_state_transition_count",
	"by_parent_run_id", "by_root_run_id", "by_batcher_user",
	"by_temporal_scheduled_start_time", "by_temporal_scheduled_by_id", "by_temporal_schedule_paused",
	"by_temporal_pause_info", "by_temporal_worker_deployment_version", "by_temporal_workflow_versioning_behavior",
	"by_temporal_worker_deployment",
	"by_bool_01", "by_bool_02", "by_bool_03", "by_datetime_01", "by_datetime_02", "by_datetime_03",
	"by_double_01", "by_double_02", "by_double_03", "by_int_01", "by_int_02", "by_int_03",
	"by_temporal_bool_01", "by_temporal_bool_02", "by_temporal_datetime_01", "by_temporal_datetime_02",
	"by_temporal_double_01", "by_temporal_double_02", "by_temporal_int_01", "by_temporal_int_02",
	"by_temporal_keyword_01", "by_temporal_keyword_02", "by_temporal_keyword_03", "by_temporal_keyword_04",
	"by_temporal_low_cardinality_keyword_01",
	// The service registers four keyword attributes: Keyword01-04.
	"by_keyword_05", "by_keyword_06", "by_keyword_07", "by_keyword_08", "by_keyword_09", "by_keyword_10",
}

// namespaceRefresh is how often the server rereads its namespaces (its
// default is 2 s).
const namespaceRefresh = time.Second

// searchAttributesSettle is how long after the service's search attributes
// are registered their reads still go to the database: the namespace cache
// holds their columns once it has refreshed after the registration, within
// two of its intervals; the third is margin.
const searchAttributesSettle = 3 * namespaceRefresh

// visibilityReadsPerSecond paces the history service's visibility queue
// (Temporal's default is 20). A start task read after its workflow closed
// is skipped, and most order-placed workflows finish within half a
// second, so under load most of them cost one visibility write instead of
// two; a running workflow shows in the UI's list up to 500 ms later. The
// limiter has a burst, so an idle server reads a new task at once.
const visibilityReadsPerSecond = 2

// fullTextTriggers copy every visibility row's Text and KeywordList
// attributes into two FTS5 tables, on every insert, update and delete.
// The service registers neither kind, so slimVisibility drops them: a
// filter on a Text or KeywordList attribute (BuildIds,
// TemporalChangeVersion) then finds no workflow on the embedded server.
var fullTextTriggers = []string{"executions_visibility_ai", "executions_visibility_au", "executions_visibility_ad"}

// slimVisibility drops unusedVisibilityIndexes and fullTextTriggers.
// Temporal's schema gives its visibility table 58 indexes and three
// full-text triggers, and every workflow's start and close write its row
// through all of them: on the embedded server those two statements were
// about a quarter of the CPU a workflow cost (docs/decisions.md).
func slimVisibility(dsn string) error {
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return fmt.Errorf("open temporal database: %w", err)
	}
	defer db.Close()
	// An in-memory name that missed the server's database would open an
	// empty one, where every DROP INDEX IF EXISTS succeeds.
	var tables int
	if err := db.QueryRow(`SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'executions_visibility'`).Scan(&tables); err != nil || tables != 1 {
		return fmt.Errorf("temporal's visibility table not found (%d): %v", tables, err)
	}
	for _, index := range unusedVisibilityIndexes {
		if _, err := db.Exec(`DROP INDEX IF EXISTS ` + index); err != nil {
			return fmt.Errorf("drop visibility index %s: %w", index, err)
		}
	}
	for _, trigger := range fullTextTriggers {
		if _, err := db.Exec(`DROP TRIGGER IF EXISTS ` + trigger); err != nil {
			return fmt.Errorf("drop visibility trigger %s: %w", trigger, err)
		}
	}
	return nil
}

// serverRoles are the services DefaultServices runs, as ringpop names them.
var serverRoles = []string{"frontend", "history", "matching", "worker"}

func (t *Temporal) waitMembership(ctx context.Context) error {
	conn, err := grpc.NewClient(t.HostPort, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return err
	}
	defer conn.Close()
	admin := adminservice.NewAdminServiceClient(conn)
	deadline := time.Now().Add(60 * time.Second)
	for {
		resp, err := admin.DescribeCluster(ctx, &adminservice.DescribeClusterRequest{})
		if err == nil {
			joined := map[string]bool{}
			for _, ring := range resp.GetMembershipInfo().GetRings() {
				joined[ring.GetRole()] = ring.GetMemberCount() > 0
			}
			all := true
			for _, role := range serverRoles {
				all = all && joined[role]
			}
			if all {
				return nil
			}
			err = fmt.Errorf("roles in the membership ring: %v", joined)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("temporal services did not join: %w", err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func (t *Temporal) registerSearchAttributes(ctx context.Context, attrs map[string]enumspb.IndexedValueType) error {
	if len(attrs) == 0 {
		return nil
	}
	c, err := t.Client(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	return temporalsetup.RegisterSearchAttributes(ctx, c, t.Namespace, attrs)
}

// Client dials the server's frontend.
func (t *Temporal) Client(ctx context.Context) (client.Client, error) {
	return DialTemporal(ctx, t.HostPort, t.Namespace)
}

// DialTemporal dials a development Temporal server's frontend, with the SDK
// client's own logging off.
func DialTemporal(ctx context.Context, hostPort, namespace string) (client.Client, error) {
	// On loopback, gzip (the SDK's default) only costs CPU on both ends.
	return client.DialContext(ctx, client.Options{HostPort: hostPort, Namespace: namespace, Logger: quietLogger{},
		ConnectionOptions: client.ConnectionOptions{GrpcCompression: &client.GrpcCompressionNone{}}})
}

// Stop shuts the UI and the server down.
func (t *Temporal) Stop() error {
	if t.ui != nil {
		t.ui.Stop()
	}
	return t.server.Stop()
}

func serverConfig(persistence config.Persistence, frontendPort int) (*config.Config, error) {
	ports, err := FreePorts(10)
	if err != nil {
		return nil, err
	}
	if frontendPort == 0 {
		frontendPort = ports[9]
	}
	const host = "127.0.0.1"
	service := func(grpcPort, membershipPort int) config.Service {
		return config.Service{RPC: config.RPC{GRPCPort: grpcPort, MembershipPort: membershipPort, BindOnIP: host}}
	}
	cfg := &config.Config{}
	cfg.Global.Membership = config.Membership{MaxJoinDuration: 30 * time.Second, BroadcastAddress: host}
	// No metrics: the embedded server's Prometheus endpoint sat on a port
	// nobody was told of, and recording its histograms cost about a tenth
	// of its CPU per workflow (docs/benchmarks.md, the load section).
	cfg.Global.Metrics = nil
	cfg.Global.PProf = config.PProf{Port: ports[1]}
	cfg.Persistence = persistence
	frontend := fmt.Sprintf("%s:%d", host, frontendPort)
	cfg.ClusterMetadata = &cluster.Config{
		EnableGlobalNamespace:    false,
		FailoverVersionIncrement: 10,
		MasterClusterName:        "active",
		CurrentClusterName:       "active",
		ClusterInformation: map[string]cluster.ClusterInformation{
			"active": {Enabled: true, InitialFailoverVersion: 1, RPCAddress: frontend},
		},
	}
	cfg.DCRedirectionPolicy = config.DCRedirectionPolicy{Policy: "noop"}
	cfg.Services = map[string]config.Service{
		"frontend": service(frontendPort, ports[2]),
		"history":  service(ports[3], ports[4]),
		"matching": service(ports[5], ports[6]),
		"worker":   service(ports[7], ports[8]),
	}
	cfg.Archival = config.Archival{
		History:    config.HistoryArchival{State: "disabled"},
		Visibility: config.VisibilityArchival{State: "disabled"},
	}
	cfg.NamespaceDefaults = config.NamespaceDefaults{Archival: config.ArchivalNamespaceDefaults{
		History:    config.HistoryArchivalNamespaceDefaults{State: "disabled"},
		Visibility: config.VisibilityArchivalNamespaceDefaults{State: "disabled"},
	}}
	cfg.PublicClient = config.PublicClient{HostPort: frontend}
	return cfg, nil
}

// quietLogger drops the SDK client's logs during readiness polling.
type quietLogger struct{}

func (quietLogger) Debug(string, ...any) {}
func (quietLogger) Info(string, ...any)  {}
func (quietLogger) Warn(string, ...any)  {}
func (quietLogger) Error(string, ...any) {}

// serverLogger is silent unless SVC_TEMPORAL_LOG is set (debugging the
// embedded server). It is read here rather than in cmd/ because make dev,
// make test and the benchmarks all start the server, and none of them
// hands it a Config (cmd/svc/config.go lists this exception).
func serverLogger() log.Logger {
	if os.Getenv("SVC_TEMPORAL_LOG") != "" {
		return log.NewCLILogger()
	}
	return log.NewNoopLogger()
}
