package main

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/merchantsvc/svc/api"
	"github.com/merchantsvc/svc/internal/devenv"
	"github.com/merchantsvc/svc/internal/mailsink"
	"github.com/merchantsvc/svc/internal/whatsappcloud"
	"github.com/merchantsvc/svc/internal/zatcadouble"
	"github.com/merchantsvc/svc/workflows"
)

// Credentials of the local MinIO; they never leave the machine.
const (
	devS3AccessKey = "svcdev"
	devS3SecretKey = "svcdev-secret"
)

// runDev starts every part on this machine under cfg.DevDir, reusing its data
// on the next run, and stops them all when ctx ends.
func runDev(ctx context.Context, cfg Config, log *slog.Logger, stdout io.Writer) (err error) {
	dir, err := filepath.Abs(cfg.DevDir)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	logFile, err := os.OpenFile(filepath.Join(dir, "services.log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	defer logFile.Close()

	var stops []func() error
	defer func() {
		for i := len(stops) - 1; i >= 0; i-- {
			if stopErr := stops[i](); stopErr != nil {
				err = errors.Join(err, stopErr)
			}
		}
		fmt.Fprintln(stdout, "stopped")
	}()

	if cfg.DatabaseURL == "" {
		fmt.Fprintf(stdout, "starting Postgres (data in %s)\n", filepath.Join(dir, "postgres"))
		pg, err := devenv.StartPostgres(ctx, devenv.PostgresOptions{Dir: filepath.Join(dir, "postgres"), Port: cfg.DevPostgresPort, Log: logFile})
		if err != nil {
			return err
		}
		stops = append(stops, pg.Stop)
		if err := pg.EnsureDatabase(ctx, "svc"); err != nil {
			return err
		}
		cfg.DatabaseURL = pg.DatabaseURL("svc")
	}

	_, temporalPort, err := net.SplitHostPort(cfg.TemporalAddress)
	if err != nil {
		return fmt.Errorf("SVC_TEMPORAL_ADDRESS: %w", err)
	}
	port, _ := strconv.Atoi(temporalPort)
	_, uiPort, err := net.SplitHostPort(cfg.DevTemporalUI)
	if err != nil {
		return fmt.Errorf("SVC_DEV_TEMPORAL_UI_ADDR: %w", err)
	}
	ui, _ := strconv.Atoi(uiPort)
	fmt.Fprintln(stdout, "starting Temporal (SQLite)")
	tmp, err := devenv.StartTemporal(ctx, devenv.TemporalOptions{DBFile: filepath.Join(dir, "temporal", "temporal.db"),
		Port: port, UIPort: ui, Namespace: cfg.TemporalNamespace, SearchAttributes: workflows.SearchAttributeTypes})
	if err != nil {
		return err
	}
	stops = append(stops, tmp.Stop)

	if cfg.S3Endpoint == "" {
		fmt.Fprintln(stdout, "starting MinIO")
		bin, _ := filepath.Abs(cfg.MinIOBin)
		m, err := devenv.StartMinIO(ctx, devenv.MinIOOptions{Bin: bin, Dir: filepath.Join(dir, "minio"),
			Port: cfg.DevMinIOPort, AccessKey: devS3AccessKey, SecretKey: devS3SecretKey, Log: logFile})
		if err != nil {
			return err
		}
		stops = append(stops, m.Stop)
		cfg.S3Endpoint, cfg.S3AccessKey, cfg.S3SecretKey = m.Endpoint, m.AccessKey, m.SecretKey
	}

	if cfg.StripeAPIBase == "" {
		fmt.Fprintln(stdout, "starting stripe-mock")
		bin, _ := filepath.Abs(cfg.StripeMockBin)
		m, err := devenv.StartStripeMock(ctx, bin, cfg.DevStripeMockPort, logFile)
		if err != nil {
			return err
		}
		stops = append(stops, m.Stop)
		cfg.StripeAPIBase = m.URL
	}
	if cfg.WhatsAppAPIBase == "" {
		double, err := whatsappcloud.Start(filepath.Join(dir, "whatsapp"))
		if err != nil {
			return err
		}
		stops = append(stops, double.Stop)
		cfg.WhatsAppAPIBase = double.URL
	}
	if cfg.ZATCAAPIBase == "" {
		double, err := zatcadouble.Start("127.0.0.1:0")
		if err != nil {
			return err
		}
		stops = append(stops, double.Stop)
		cfg.ZATCAAPIBase = double.URL
	}
	if cfg.SecretsKey == "" {
		if cfg.SecretsKey, err = devSecretsKey(filepath.Join(dir, "secrets.key")); err != nil {
			return err
		}
	}

	if cfg.SMTPAddr == "" {
		sink, err := mailsink.Start(filepath.Join(dir, "mail"))
		if err != nil {
			return err
		}
		stops = append(stops, sink.Stop)
		cfg.SMTPAddr, cfg.SMTPNoTLS = sink.Addr, true
	}

	if err := migrate(ctx, cfg.DatabaseURL, stdout); err != nil {
		return err
	}
	d, err := connect(ctx, cfg, log, "svc-dev", nil)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.blob.EnsureBucket(ctx); err != nil {
		return err
	}
	workerCtx, stopWorker := context.WithCancel(ctx)
	wait, err := startWorker(workerCtx, cfg, d, log, nil)
	if err != nil {
		stopWorker()
		return err
	}
	defer func() { stopWorker(); wait() }()

	fmt.Fprintf(stdout, "\nAPI          %s/api/v1  (OpenAPI: %s/api/v1/openapi.json)\n", cfg.BaseURL, cfg.BaseURL)
	fmt.Fprintf(stdout, "Merchant     %s\n", cfg.MerchantURL)
	fmt.Fprintf(stdout, "Storefront   %s\n", storefrontAddress(cfg))
	fmt.Fprintf(stdout, "Temporal UI  %s\n", tmp.UIURL)
	fmt.Fprintf(stdout, "Postgres     %s\n", cfg.DatabaseURL)
	fmt.Fprintf(stdout, "Mail         %s (SMTP %s; one .eml file per message)\n", filepath.Join(dir, "mail"), cfg.SMTPAddr)
	fmt.Fprintf(stdout, "WhatsApp     %s (Cloud API double %s; one .json file per message)\n", filepath.Join(dir, "whatsapp"), cfg.WhatsAppAPIBase)
	fmt.Fprintf(stdout, "ZATCA        %s\n", cfg.ZATCAAPIBase)
	fmt.Fprintf(stdout, "Logs         %s (services), stderr (API and worker)\n\nCtrl-C stops everything.\n", logFile.Name())
	cfg.SecureCookies = false // plain http on loopback
	srv := api.NewServer(apiConfig(cfg, d.tracing, d.secrets), d.db, d.temporal, d.blob, log)
	go srv.SyncRateLimits(ctx, time.Second)
	return serveHTTP(ctx, cfg.HTTPAddr, srv, log, stdout)
}

// runTestEnv starts a throwaway Postgres cluster with a migrated template
// database and a MinIO server, runs the command with their coordinates in
// SVC_TEST_* variables, and tears everything down. Each test clones the
// template; see internal/testenv.
func runTestEnv(ctx context.Context, cfg Config, args []string, stdout, stderr io.Writer) (err error) {
	if len(args) > 0 && args[0] == "--" {
		args = args[1:]
	}
	if len(args) == 0 {
		return errors.New(usage)
	}
	dir, err := os.MkdirTemp("", "svc-test-")
	if err != nil {
		return err
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	logFile, err := os.Create(filepath.Join(dir, "services.log"))
	if err != nil {
		return err
	}
	defer logFile.Close()

	pgPort, err := devenv.FreePort()
	if err != nil {
		return err
	}
	pg, err := devenv.StartPostgres(ctx, devenv.PostgresOptions{Dir: filepath.Join(dir, "postgres"), Port: pgPort, Throwaway: true, Log: logFile})
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, pg.Stop()) }()
	const template = "svc_template"
	if err := pg.EnsureDatabase(ctx, template); err != nil {
		return err
	}
	if err := migrate(ctx, pg.DatabaseURL(template), io.Discard); err != nil {
		return err
	}

	minioPort, err := devenv.FreePort()
	if err != nil {
		return err
	}
	bin, _ := filepath.Abs(cfg.MinIOBin)
	m, err := devenv.StartMinIO(ctx, devenv.MinIOOptions{Bin: bin, Dir: filepath.Join(dir, "minio"), Port: minioPort,
		AccessKey: devS3AccessKey, SecretKey: devS3SecretKey, Log: logFile})
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, m.Stop()) }()

	stripePort, err := devenv.FreePort()
	if err != nil {
		return err
	}
	stripeBin, _ := filepath.Abs(cfg.StripeMockBin)
	stripeMock, err := devenv.StartStripeMock(ctx, stripeBin, stripePort, logFile)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, stripeMock.Stop()) }()
	zatcaDouble, err := zatcadouble.Start("127.0.0.1:0")
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, zatcaDouble.Stop()) }()

	whatsapp, err := whatsappcloud.Start(filepath.Join(dir, "whatsapp"))
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, whatsapp.Stop()) }()

	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	cmd.Stdout, cmd.Stderr, cmd.Stdin = stdout, stderr, nil
	cmd.Env = append(os.Environ(),
		"SVC_TEST_DATABASE_URL="+pg.URL,
		"SVC_TEST_TEMPLATE_DATABASE="+template,
		"SVC_TEST_S3_ENDPOINT="+m.Endpoint,
		"SVC_TEST_S3_ACCESS_KEY="+m.AccessKey,
		"SVC_TEST_S3_SECRET_KEY="+m.SecretKey,
		"SVC_TEST_STRIPE_API_BASE="+stripeMock.URL,
		"SVC_TEST_WHATSAPP_API_BASE="+whatsapp.URL,
		"SVC_TEST_WHATSAPP_DIR="+whatsapp.Dir,
		"SVC_TEST_ZATCA_API_BASE="+zatcaDouble.URL,
	)
	if runErr := cmd.Run(); runErr != nil {
		var exit *exec.ExitError
		if errors.As(runErr, &exit) {
			return exitCode(exit.ExitCode())
		}
		return runErr
	}
	return nil
}

// devSecretsKey is `svc dev`'s secrets key: made once in the data dir, so
// stores connected to stripe-mock keep working across restarts.
func devSecretsKey(path string) (string, error) {
	if b, err := os.ReadFile(path); err == nil {
		return strings.TrimSpace(string(b)), nil
	}
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return "", err
	}
	encoded := base64.StdEncoding.EncodeToString(key)
	if err := os.WriteFile(path, []byte(encoded+"\n"), 0o600); err != nil {
		return "", fmt.Errorf("write dev secrets key: %w", err)
	}
	return encoded, nil
}

// storefrontAddress is where the stores' websites are (decisions §23):
// {subdomain} stands for a store's subdomain.
func storefrontAddress(cfg Config) string {
	if cfg.StorefrontDomain != "" {
		return "https://{subdomain}." + cfg.StorefrontDomain
	}
	return cfg.BaseURL + "/s/{subdomain}"
}
