package main

import (
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strings"
	"time"

	"github.com/kelseyhightower/envconfig"
	"go.temporal.io/sdk/client"
	"golang.org/x/net/publicsuffix"
)

// Config is every SVC_ setting of the service, and only this package reads
// them. Outside cmd/ the environment is read for switches that are not the
// service's settings: SVC_TEMPORAL_LOG by internal/devenv's embedded
// Temporal server (a debugging switch for make dev, make test and the
// benchmarks, which start it without a Config), GOGC by internal/gcpace, and
// the test harness's SVC_TEST_* by internal/testenv.
type Config struct {
	HTTPAddr string `envconfig:"HTTP_ADDR" default:"127.0.0.1:8080"`
	// MetricsAddr is where `svc worker` serves /metrics (`svc api` serves
	// it on DebugAddr).
	MetricsAddr string `envconfig:"METRICS_ADDR" default:"127.0.0.1:9091"`
	// DebugAddr, when set, serves Go's profiles (/debug/pprof) on an
	// address of its own, and `svc api`'s /metrics; keep it off the public
	// network.
	DebugAddr string `envconfig:"DEBUG_ADDR"`
	// MetricsToken, when set, also lets a scraper read `svc api`'s /metrics
	// on HTTPAddr with "Authorization: Bearer <token>" (404 there unset).
	MetricsToken      string `envconfig:"METRICS_TOKEN"`
	DatabaseURL       string `envconfig:"DATABASE_URL"`
	TemporalAddress   string `envconfig:"TEMPORAL_ADDRESS" default:"127.0.0.1:7233"`
	TemporalNamespace string `envconfig:"TEMPORAL_NAMESPACE" default:"default"`
	// TemporalCompression is the gRPC compression of the requests to
	// Temporal: gzip, none, or auto (none when TemporalAddress is a
	// loopback address, where compressing only costs CPU; gzip otherwise).
	TemporalCompression string `envconfig:"TEMPORAL_GRPC_COMPRESSION" default:"auto"`
	TaskQueue           string `envconfig:"TASK_QUEUE" default:"svc"`
	S3Endpoint          string `envconfig:"S3_ENDPOINT"`
	S3AccessKey         string `envconfig:"S3_ACCESS_KEY"`
	S3SecretKey         string `envconfig:"S3_SECRET_KEY"`
	S3Bucket            string `envconfig:"S3_BUCKET" default:"svc"`
	S3UseTLS            bool   `envconfig:"S3_USE_TLS" default:"false"`
	// ChromiumPath is the headless Chromium that prints waybills.
	ChromiumPath string `envconfig:"CHROMIUM_PATH" default:"chromium"`
	BaseURL      string `envconfig:"BASE_URL"`
	MerchantURL  string `envconfig:"MERCHANT_URL"`
	// StorefrontURL is the buyer-facing shop with {subdomain} in it, for the
	// links of recovery emails.
	StorefrontURL string `envconfig:"STOREFRONT_URL"`
	// StorefrontDomain, when set, is where each store's rendered website
	// answers, {subdomain}.{domain} (decisions §23); it must be another site
	// (registrable domain) than the merchant application and the API.
	StorefrontDomain   string `envconfig:"STOREFRONT_DOMAIN"`
	RateLimitPerMinute int    `envconfig:"RATE_LIMIT_PER_MINUTE" default:"300"`
	// SessionRateLimitPerMinute limits each signed-in user's API requests.
	SessionRateLimitPerMinute int `envconfig:"SESSION_RATE_LIMIT_PER_MINUTE" default:"300"`
	// ExportRateLimitPerMinute limits expensive reads (CSV exports, the
	// waybill print run) per token or signed-in user.
	ExportRateLimitPerMinute int `envconfig:"EXPORT_RATE_LIMIT_PER_MINUTE" default:"10"`
	// StorefrontRateLimitPerMinute limits the public storefront per client address.
	StorefrontRateLimitPerMinute int `envconfig:"STOREFRONT_RATE_LIMIT_PER_MINUTE" default:"120"`
	// Storefront orders per hour per store, by phone and by client network.
	StorefrontOrdersPerPhone   int `envconfig:"STOREFRONT_ORDERS_PER_PHONE" default:"5"`
	StorefrontOrdersPerNetwork int `envconfig:"STOREFRONT_ORDERS_PER_NETWORK" default:"10"`
	// Failed sign-ins per 15 minutes, per account and per client network.
	LoginFailuresPerAccount int    `envconfig:"LOGIN_FAILURES_PER_ACCOUNT" default:"10"`
	LoginFailuresPerNetwork int    `envconfig:"LOGIN_FAILURES_PER_NETWORK" default:"50"`
	SecureCookies           bool   `envconfig:"SECURE_COOKIES" default:"true"`
	LogLevel                string `envconfig:"LOG_LEVEL" default:"info"`

	// Customer email over SMTP (the dev command runs a local sink instead).
	SMTPAddr     string `envconfig:"SMTP_ADDR"`
	SMTPFrom     string `envconfig:"SMTP_FROM" default:"orders@localhost"`
	SMTPUsername string `envconfig:"SMTP_USERNAME"`
	SMTPPassword string `envconfig:"SMTP_PASSWORD"`
	SMTPNoTLS    bool   `envconfig:"SMTP_NO_TLS" default:"false"`

	// Chat app provider (WhatsApp-Cloud-style); unset: messages are only logged.
	ChatBaseURL string `envconfig:"CHAT_BASE_URL"`
	ChatToken   string `envconfig:"CHAT_TOKEN"`
	// ChatWebhookSecret verifies the provider's status and reply callbacks.
	ChatWebhookSecret string `envconfig:"CHAT_WEBHOOK_SECRET"`

	// Tax-authority e-invoicing (for stores that turn e_invoicing on); unset,
	// their invoices are kept as failed with the reason.
	EInvoiceURL   string `envconfig:"EINVOICE_URL"`
	EInvoiceToken string `envconfig:"EINVOICE_TOKEN"`
	// ZATCAAPIBase is ZATCA's reporting and clearance API for stores of the
	// zatca regime (decisions §27); `svc dev` runs a local double when unset.
	ZATCAAPIBase string `envconfig:"ZATCA_API_BASE"`

	// Card gateways (decisions §18): the key that seals stores' gateway
	// secrets (32 bytes, base64; required once a store connects a gateway)
	// and Stripe's API address (empty: api.stripe.com; stripe-mock in dev).
	SecretsKey    string `envconfig:"SECRETS_KEY"`
	StripeAPIBase string `envconfig:"STRIPE_API_BASE"`
	// WhatsAppAPIBase is the WhatsApp Cloud API's versioned Graph address
	// stores' channels are reached at (decisions §25; empty: Meta's,
	// https://graph.facebook.com/v21.0; the local double in dev and tests).
	WhatsAppAPIBase string `envconfig:"WHATSAPP_API_BASE"`
	// SecretsKeyPrevious is the key being rotated out: secrets it sealed
	// still open until `svc reseal-secrets` seals them under SecretsKey.
	SecretsKeyPrevious string `envconfig:"SECRETS_KEY_PREVIOUS"`

	// Webhooks (decisions §7). The first two are for dev and tests only.
	WebhookAllowPrivate  bool         `envconfig:"WEBHOOK_ALLOW_PRIVATE" default:"false"`
	WebhookCAFile        string       `envconfig:"WEBHOOK_CA_FILE"`
	WebhookRetrySchedule durationList `envconfig:"WEBHOOK_RETRY_SCHEDULE" default:"10s,30s,2m,10m,30m"`

	// TrustedProxies are the CIDRs of the load balancers in front of the API
	// (comma-separated); only from them is X-Forwarded-For believed, for the
	// storefront's per-address rate limit. Empty: the connection's address.
	TrustedProxies prefixList `envconfig:"TRUSTED_PROXIES"`

	// OtelEndpoint is the OTLP/HTTP collector that receives traces (for
	// example http://otel-collector:4318); unset, tracing is off.
	OtelEndpoint string `envconfig:"OTEL_ENDPOINT"`
	// OtelSampleRatio is the share of new traces kept; callers' traceparent
	// decisions are followed.
	OtelSampleRatio float64 `envconfig:"OTEL_SAMPLE_RATIO" default:"1"`

	// Local development (`svc dev`, `svc testenv`) only.
	DevDir            string `envconfig:"DEV_DIR" default:".dev"`
	DevPostgresPort   int    `envconfig:"DEV_POSTGRES_PORT" default:"54329"`
	DevMinIOPort      int    `envconfig:"DEV_MINIO_PORT" default:"9100"`
	DevTemporalUI     string `envconfig:"DEV_TEMPORAL_UI_ADDR" default:"127.0.0.1:8233"`
	MinIOBin          string `envconfig:"MINIO_BIN" default:".bin/minio-v0.0.0-20260212201848-7aac2a2c5b7c/minio"` // keep in step with the Makefile
	StripeMockBin     string `envconfig:"STRIPE_MOCK_BIN" default:".bin/stripe-mock-v0.203.0/stripe-mock"`         // keep in step with the Makefile
	DevStripeMockPort int    `envconfig:"DEV_STRIPE_MOCK_PORT" default:"12111"`
}

// durationList is a comma-separated list of durations ("10s,30s,2m"); set
// but empty, it is an empty list. envconfig decodes it once, at start.
type durationList []time.Duration

// Decode implements envconfig.Decoder.
func (l *durationList) Decode(value string) error {
	list := durationList{}
	for _, part := range strings.Split(value, ",") {
		if part = strings.TrimSpace(part); part == "" {
			continue
		}
		d, err := time.ParseDuration(part)
		if err != nil || d < 0 {
			return fmt.Errorf("%q is not a duration", part)
		}
		list = append(list, d)
	}
	*l = list
	return nil
}

// prefixList is a comma-separated list of CIDRs or addresses ("10.0.0.0/8,
// 192.168.1.7"); an address is its own /32 or /128.
type prefixList []netip.Prefix

// Decode implements envconfig.Decoder.
func (l *prefixList) Decode(value string) error {
	var list prefixList
	for _, part := range strings.Split(value, ",") {
		if part = strings.TrimSpace(part); part == "" {
			continue
		}
		prefix, err := netip.ParsePrefix(part)
		if err != nil {
			addr, addrErr := netip.ParseAddr(part)
			if addrErr != nil {
				return fmt.Errorf("%q is neither a CIDR nor an address", part)
			}
			prefix = netip.PrefixFrom(addr, addr.BitLen())
		}
		list = append(list, prefix.Masked())
	}
	*l = list
	return nil
}

func loadConfig() (Config, error) {
	var cfg Config
	if err := envconfig.Process("svc", &cfg); err != nil {
		return Config{}, fmt.Errorf("read SVC_ settings: %w", err)
	}
	if _, err := cfg.temporalCompression(); err != nil {
		return Config{}, err
	}
	if cfg.BaseURL == "" {
		cfg.BaseURL = "http://" + cfg.HTTPAddr
	}
	if cfg.MerchantURL == "" {
		cfg.MerchantURL = cfg.BaseURL
	}
	return cfg, nil
}

// temporalCompression says whether requests to Temporal are gzipped.
func (cfg Config) temporalCompression() (client.GrpcCompression, error) {
	switch cfg.TemporalCompression {
	case "gzip":
		return &client.GrpcCompressionGzip{}, nil
	case "none":
		return &client.GrpcCompressionNone{}, nil
	case "auto", "":
		if loopback(cfg.TemporalAddress) {
			return &client.GrpcCompressionNone{}, nil
		}
		return &client.GrpcCompressionGzip{}, nil
	}
	return nil, fmt.Errorf("SVC_TEMPORAL_GRPC_COMPRESSION is %q: want gzip, none or auto", cfg.TemporalCompression)
}

// loopback reports whether a host:port names this machine.
func loopback(hostPort string) bool {
	host, _, err := net.SplitHostPort(hostPort)
	if err != nil {
		host = hostPort
	}
	if host == "localhost" {
		return true
	}
	addr, err := netip.ParseAddr(host)
	return err == nil && addr.IsLoopback()
}

// checkStorefrontDomain refuses a SVC_STOREFRONT_DOMAIN that is not a bare
// host name, is a public suffix itself, or shares its registrable domain
// (eTLD+1, by the public suffix list) with the merchant application or the
// API: a storefront on the same site would be same-site with a merchant's
// session, which SameSite cookies then no longer keep apart (decisions §23).
func (cfg Config) checkStorefrontDomain() error {
	domain := cfg.StorefrontDomain
	if domain == "" {
		return nil
	}
	if domain != strings.ToLower(domain) || strings.ContainsAny(domain, "/:@?#* ") || strings.Trim(domain, ".") != domain {
		return fmt.Errorf("SVC_STOREFRONT_DOMAIN is %q: want a lower-case host name such as shops.example.com, without scheme, port or path", domain)
	}
	site, err := publicsuffix.EffectiveTLDPlusOne(domain)
	if err != nil {
		return fmt.Errorf("SVC_STOREFRONT_DOMAIN is %q: %w (a public suffix cannot hold the stores)", domain, err)
	}
	for _, other := range []struct{ name, url string }{{"SVC_MERCHANT_URL", cfg.MerchantURL}, {"SVC_BASE_URL", cfg.BaseURL}} {
		u, err := url.Parse(other.url)
		if err != nil {
			return fmt.Errorf("%s is %q: %w", other.name, other.url, err)
		}
		host := strings.ToLower(u.Hostname())
		otherSite, err := publicsuffix.EffectiveTLDPlusOne(host)
		if err != nil {
			otherSite = host // an address or a single label is its own site
		}
		if otherSite == site {
			return fmt.Errorf("SVC_STOREFRONT_DOMAIN %q shares the site %q with %s (%s): serve the storefronts from another registrable domain, so nothing a store serves is same-site with the merchant application", domain, site, other.name, other.url)
		}
	}
	return nil
}
