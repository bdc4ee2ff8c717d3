// Command svc runs the merchant commerce API and its worker.
//
//	svc api       HTTP API
//	svc worker    Temporal worker
//	svc migrate   apply database migrations
//	svc temporal-setup   add the service's search attributes to the Temporal namespace
//	svc dev       everything on one machine: Postgres, Temporal + UI, MinIO, API, worker
//	svc testenv -- CMD...   run CMD with a throwaway Postgres and MinIO (make test)
package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the pgx driver for database/sql, which the migrations take
	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"

	"github.com/merchantsvc/svc/activities"
	"github.com/merchantsvc/svc/activities/einvoice"
	"github.com/merchantsvc/svc/activities/waybill"
	"github.com/merchantsvc/svc/api"
	"github.com/merchantsvc/svc/internal/gcpace"
	"github.com/merchantsvc/svc/internal/metrics"
	"github.com/merchantsvc/svc/internal/temporalsetup"
	"github.com/merchantsvc/svc/internal/tracing"
	"github.com/merchantsvc/svc/internal/webhook"
	"github.com/merchantsvc/svc/migrations"
	"github.com/merchantsvc/svc/storage"
	"github.com/merchantsvc/svc/storage/blob"
	"github.com/merchantsvc/svc/worker"
	"github.com/merchantsvc/svc/workflows"
)

func main() {
	gcpace.Apply()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	cfg, err := loadConfig()
	if err == nil {
		err = run(ctx, cfg, os.Args[1:], os.Stdout, os.Stderr)
	}
	var exit exitCode
	if errors.As(err, &exit) {
		os.Exit(int(exit))
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "svc:", err)
		os.Exit(1)
	}
}

// exitCode passes a child command's exit status through `svc testenv`.
type exitCode int

func (e exitCode) Error() string { return fmt.Sprintf("exit status %d", int(e)) }

const usage = "usage: svc api|worker|migrate|temporal-setup|dev|testenv -- CMD..."

func run(ctx context.Context, cfg Config, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return errors.New(usage)
	}
	log := newLogger(stderr, cfg.LogLevel)
	switch args[0] {
	case "api":
		return runAPI(ctx, cfg, log, stdout)
	case "worker":
		return runWorker(ctx, cfg, log)
	case "migrate":
		return runMigrate(ctx, cfg, stdout)
	case "temporal-setup":
		return runTemporalSetup(ctx, cfg, stdout)
	case "reseal-secrets":
		return runResealSecrets(ctx, cfg, stdout)
	case "dev":
		return runDev(ctx, cfg, log, stdout)
	case "testenv":
		return runTestEnv(ctx, cfg, args[1:], stdout, stderr)
	default:
		return errors.New(usage)
	}
}

// runTemporalSetup adds the search attributes every workflow of the service
// carries (StoreId, ResourceId, OrderNumber, WorkKind) to the namespace. It
// is idempotent: deploy runs it before the worker starts, every time.
func runTemporalSetup(ctx context.Context, cfg Config, stdout io.Writer) error {
	c, err := client.DialContext(ctx, client.Options{HostPort: cfg.TemporalAddress, Namespace: cfg.TemporalNamespace,
		Logger: sdklog.NewStructuredLogger(slog.New(slog.DiscardHandler))})
	if err != nil {
		return fmt.Errorf("dial temporal at %s: %w", cfg.TemporalAddress, err)
	}
	defer c.Close()
	if err := temporalsetup.RegisterSearchAttributes(ctx, c, cfg.TemporalNamespace, workflows.SearchAttributeTypes); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "search attributes StoreId, ResourceId, OrderNumber, WorkKind (Keyword) are registered in namespace %s\n", cfg.TemporalNamespace)
	return nil
}

func newLogger(w io.Writer, level string) *slog.Logger {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		l = slog.LevelInfo
	}
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: l}))
}

// deps are the connections the API and the worker share.
type deps struct {
	db       *storage.DB
	temporal client.Client
	blob     *blob.Store
	tracing  *tracing.Tracing
	log      *slog.Logger
	// secrets seals stores' gateway secrets; nil without SVC_SECRETS_KEY.
	secrets *storage.Sealer
}

func (d deps) Close() {
	if d.temporal != nil {
		d.temporal.Close()
	}
	if d.db != nil {
		d.db.Close()
	}
	// The last spans go out before the process ends.
	flush, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := d.tracing.Shutdown(flush); err != nil {
		d.log.Warn("flush traces", slog.Any("error", err))
	}
}

// connect opens Postgres, Temporal and the object store, traced when
// SVC_OTEL_ENDPOINT is set (service names the process in its spans); a
// worker passes its metrics registry so the Temporal SDK reports into it.
func connect(ctx context.Context, cfg Config, log *slog.Logger, service string, workerMetrics *metrics.Worker) (deps, error) {
	if cfg.DatabaseURL == "" {
		return deps{}, errors.New("SVC_DATABASE_URL is not set")
	}
	tr, err := tracing.New(ctx, cfg.OtelEndpoint, service, cfg.OtelSampleRatio)
	if err != nil {
		return deps{}, err
	}
	d := deps{tracing: tr, log: log}
	if d.secrets, err = secretsSealer(cfg); err != nil {
		d.Close()
		return deps{}, err
	}
	interceptors, err := tr.TemporalInterceptors()
	if err != nil {
		d.Close()
		return deps{}, err
	}
	if d.db, err = storage.OpenTraced(ctx, cfg.DatabaseURL, tr.QueryTracer()); err != nil {
		d.Close()
		return deps{}, err
	}
	d.db.UseSealer(d.secrets) // a paid order issues its sold gift cards' codes (§19)
	compression, err := cfg.temporalCompression()
	if err != nil {
		d.Close()
		return deps{}, err
	}
	d.temporal, err = client.DialContext(ctx, client.Options{
		HostPort:          cfg.TemporalAddress,
		Namespace:         cfg.TemporalNamespace,
		ConnectionOptions: client.ConnectionOptions{GrpcCompression: compression},
		Interceptors:      interceptors, // workers built from this client trace too
		Logger:            sdklog.NewStructuredLogger(log.With("component", "temporal")),
		MetricsHandler: func() client.MetricsHandler {
			if workerMetrics == nil {
				return nil
			}
			return metrics.TemporalHandler(workerMetrics.Registry)
		}(),
	})
	if err != nil {
		d.Close()
		return deps{}, fmt.Errorf("connect temporal at %s: %w", cfg.TemporalAddress, err)
	}
	if cfg.S3Endpoint == "" {
		d.Close()
		return deps{}, errors.New("SVC_S3_ENDPOINT is not set")
	}
	d.blob, err = blob.Open(blob.Options{Endpoint: cfg.S3Endpoint, AccessKey: cfg.S3AccessKey,
		SecretKey: cfg.S3SecretKey, Bucket: cfg.S3Bucket, UseTLS: cfg.S3UseTLS})
	if err != nil {
		d.Close()
		return deps{}, err
	}
	if err := d.blob.EnsureBucket(ctx); err != nil {
		log.Warn("object store not ready", slog.Any("error", err))
	}
	return d, nil
}

func apiConfig(cfg Config, tr *tracing.Tracing, secrets *storage.Sealer) api.Config {
	return api.Config{RateLimitPerMinute: cfg.RateLimitPerMinute, SessionRateLimitPerMinute: cfg.SessionRateLimitPerMinute, ExportRateLimitPerMinute: cfg.ExportRateLimitPerMinute, StorefrontRateLimitPerMinute: cfg.StorefrontRateLimitPerMinute, SecureCookies: cfg.SecureCookies,
		BaseURL: cfg.BaseURL, MerchantURL: cfg.MerchantURL, StorefrontURL: cfg.StorefrontURL, StorefrontDomain: cfg.StorefrontDomain, TaskQueue: cfg.TaskQueue,
		WebhookGuard: webhook.Guard{AllowPrivate: cfg.WebhookAllowPrivate}, WebhookRetrySchedule: cfg.WebhookRetrySchedule,
		ChatWebhookSecret: cfg.ChatWebhookSecret, Tracing: tr, TrustedProxies: cfg.TrustedProxies,
		StorefrontOrdersPerPhone: cfg.StorefrontOrdersPerPhone, StorefrontOrdersPerNetwork: cfg.StorefrontOrdersPerNetwork,
		Passwords: api.PasswordLimits{FailuresPerAccount: cfg.LoginFailuresPerAccount, FailuresPerAddress: cfg.LoginFailuresPerNetwork},
		Secrets:   secrets, StripeAPIBase: cfg.StripeAPIBase, WhatsAppAPIBase: cfg.WhatsAppAPIBase, MetricsToken: cfg.MetricsToken}
}

// startWorker runs the Temporal worker and the outbox dispatcher until ctx
// ends; the returned function waits for both to stop.
func startWorker(ctx context.Context, cfg Config, d deps, log *slog.Logger, workerMetrics *metrics.Worker) (func(), error) {
	guard := webhook.Guard{AllowPrivate: cfg.WebhookAllowPrivate}
	httpClient, err := guard.NewClient(cfg.WebhookCAFile)
	if err != nil {
		return nil, err
	}
	mailer, err := newMailer(cfg)
	if err != nil {
		return nil, err
	}
	var chat activities.ChatProvider = activities.LogChatProvider{Log: log.Info}
	if cfg.ChatBaseURL != "" {
		chat = activities.HTTPChatProvider{BaseURL: cfg.ChatBaseURL, Token: cfg.ChatToken}
	}
	printer := &waybill.Printer{ExecPath: cfg.ChromiumPath}
	w := worker.New(d.temporal, cfg.TaskQueue, &activities.Activities{DB: d.db, Blob: d.blob, HTTPClient: httpClient,
		BaseURL: cfg.BaseURL, MerchantURL: cfg.MerchantURL, Mailer: mailer, Chat: chat, Waybills: printer,
		EInvoices:    &einvoice.HTTP{BaseURL: cfg.EInvoiceURL, Token: cfg.EInvoiceToken, Client: &http.Client{Timeout: 30 * time.Second}},
		ZATCAAPIBase: cfg.ZATCAAPIBase,
		Secrets:      d.secrets, StripeAPIBase: cfg.StripeAPIBase, WhatsAppAPIBase: cfg.WhatsAppAPIBase, Metrics: workerMetrics}, worker.Options{})
	if err := w.Start(); err != nil {
		return nil, fmt.Errorf("start worker: %w", err)
	}
	if err := worker.EnsureSchedules(ctx, d.temporal, cfg.TaskQueue); err != nil {
		w.Stop()
		return nil, fmt.Errorf("create the abandonment schedule: %w", err)
	}
	dispatcher := &worker.Dispatcher{DB: d.db, Temporal: d.temporal, TaskQueue: cfg.TaskQueue, Schedule: cfg.WebhookRetrySchedule,
		Log: log.With("component", "dispatcher"), Tracing: d.tracing}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = dispatcher.Run(ctx)
	}()
	return func() {
		<-done
		w.Stop()
		printer.Close()
		_ = mailer.Close() // QUIT on the kept connections
	}, nil
}

func runAPI(ctx context.Context, cfg Config, log *slog.Logger, stdout io.Writer) error {
	if err := cfg.checkStorefrontDomain(); err != nil {
		return err
	}
	d, err := connect(ctx, cfg, log, "svc-api", nil)
	if err != nil {
		return err
	}
	defer d.Close()
	srv := api.NewServer(apiConfig(cfg, d.tracing, d.secrets), d.db, d.temporal, d.blob, log)
	go srv.SyncRateLimits(ctx, time.Second) // the replicas share their rate-limit counts
	defer serveDebug(ctx, cfg.DebugAddr, log, srv.MetricsHandler())()
	return serveHTTP(ctx, cfg.HTTPAddr, srv, log, stdout)
}

// newHTTPServer bounds every phase of a connection, so a client that sends
// or reads slowly (or holds an idle connection) cannot keep it forever. The
// write bound leaves room for the slowest answers: a 20 s wait for an
// upload's workflow, a 40 s resend, a streamed export.
//
// Requests must outlive the shutdown signal: they get a context that ctx's
// cancellation does not reach, and Shutdown waits for them.
func newHTTPServer(ctx context.Context, h http.Handler) *http.Server {
	return &http.Server{Handler: h,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       60 * time.Second, // a 5 MB upload on a slow line
		WriteTimeout:      2 * time.Minute,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		BaseContext:       func(net.Listener) context.Context { return context.WithoutCancel(ctx) }}
}

// serveHTTP serves until ctx ends, then lets in-flight requests finish.
func serveHTTP(ctx context.Context, addr string, h http.Handler, log *slog.Logger, stdout io.Writer) error {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", addr, err)
	}
	srv := newHTTPServer(ctx, h)
	if streams, ok := h.(interface{ EndStreams() }); ok {
		srv.RegisterOnShutdown(streams.EndStreams) // event streams would hold the drain
	}
	fmt.Fprintf(stdout, "API listening on http://%s\n", l.Addr())
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(l) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 20*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		log.Warn("http shutdown", slog.Any("error", err))
	}
	return nil
}

func runWorker(ctx context.Context, cfg Config, log *slog.Logger) error {
	workerMetrics := metrics.NewWorker()
	d, err := connect(ctx, cfg, log, "svc-worker", workerMetrics)
	if err != nil {
		return err
	}
	defer d.Close()
	wait, err := startWorker(ctx, cfg, d, log, workerMetrics)
	if err != nil {
		return err
	}
	defer serveDebug(ctx, cfg.DebugAddr, log, nil)()
	// The worker's own /metrics (Temporal SDK, deliveries, import rows), and
	// the API's probes over the worker's connections: /healthz (the process
	// is up) and /readyz (Postgres, Temporal and the object store answer).
	mux := http.NewServeMux()
	mux.Handle("/metrics", metrics.Handler(workerMetrics.Registry))
	probes := api.NewServer(apiConfig(cfg, nil, nil), d.db, d.temporal, d.blob, log)
	mux.Handle("/healthz", probes)
	mux.Handle("/readyz", probes)
	metricsDone := make(chan error, 1)
	go func() { metricsDone <- serveHTTP(ctx, cfg.MetricsAddr, mux, log, io.Discard) }()
	<-ctx.Done()
	wait()
	return <-metricsDone
}

func newMailer(cfg Config) (*activities.SMTPMailer, error) {
	if cfg.SMTPAddr == "" {
		return nil, errors.New("SVC_SMTP_ADDR is not set (the SMTP server for customer email)")
	}
	host, port, err := net.SplitHostPort(cfg.SMTPAddr)
	if err != nil {
		return nil, fmt.Errorf("SVC_SMTP_ADDR: %w", err)
	}
	p, err := strconv.Atoi(port)
	if err != nil {
		return nil, fmt.Errorf("SVC_SMTP_ADDR: %w", err)
	}
	return &activities.SMTPMailer{Host: host, Port: p, From: cfg.SMTPFrom, Username: cfg.SMTPUsername,
		Password: cfg.SMTPPassword, PlainText: cfg.SMTPNoTLS}, nil
}

func runMigrate(ctx context.Context, cfg Config, stdout io.Writer) error {
	if cfg.DatabaseURL == "" {
		return errors.New("SVC_DATABASE_URL is not set")
	}
	return migrate(ctx, cfg.DatabaseURL, stdout)
}

func migrate(ctx context.Context, url string, stdout io.Writer) error {
	sqlDB, err := sql.Open("pgx", url)
	if err != nil {
		return fmt.Errorf("open database: %w", err)
	}
	defer sqlDB.Close()
	if err := migrations.Up(ctx, sqlDB); err != nil {
		return err
	}
	version, err := migrations.Version(ctx, sqlDB)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "database at migration %d\n", version)
	return nil
}

// secretsSealer opens SVC_SECRETS_KEY (and, during a key rotation,
// SVC_SECRETS_KEY_PREVIOUS); unset, no gateway secret can be sealed or
// opened (no gateway connects, card checkout is not offered).
func secretsSealer(cfg Config) (*storage.Sealer, error) {
	if cfg.SecretsKey == "" {
		if cfg.SecretsKeyPrevious != "" {
			return nil, errors.New("SVC_SECRETS_KEY_PREVIOUS is set without SVC_SECRETS_KEY")
		}
		return nil, nil
	}
	sealer, err := storage.NewSealer(cfg.SecretsKey, cfg.SecretsKeyPrevious)
	if err != nil {
		return nil, fmt.Errorf("SVC_SECRETS_KEY: %w", err)
	}
	return sealer, nil
}

// runResealSecrets seals every stored secret again under SVC_SECRETS_KEY,
// opening what SVC_SECRETS_KEY_PREVIOUS sealed: the last step of a key
// rotation (docs/operations.md).
func runResealSecrets(ctx context.Context, cfg Config, stdout io.Writer) error {
	sealer, err := secretsSealer(cfg)
	if err != nil {
		return err
	}
	if sealer == nil {
		return errors.New("SVC_SECRETS_KEY is not set")
	}
	if cfg.DatabaseURL == "" {
		return errors.New("SVC_DATABASE_URL is not set")
	}
	db, err := storage.Open(ctx, cfg.DatabaseURL)
	if err != nil {
		return err
	}
	defer db.Close()
	n, err := db.ResealSecrets(ctx, sealer)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "sealed %d secrets again under the current key\n", n)
	return nil
}
