package main

import (
	"context"
	"io"
	"net/http"
	"net/netip"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
)

// The list settings are parsed once, by envconfig, into typed fields; a bad
// entry stops the process at start with the setting's name.
func TestListSettings(t *testing.T) {
	for _, tc := range []struct {
		name, value string
		want        prefixList
		err         bool
	}{
		{"empty", "", nil, false},
		{"a CIDR", "10.0.0.0/8", prefixList{netip.MustParsePrefix("10.0.0.0/8")}, false},
		{"a CIDR masked and an address", " 10.1.2.3/8 , 192.168.1.7", prefixList{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("192.168.1.7/32")}, false},
		{"IPv6", "fd00::/8", prefixList{netip.MustParsePrefix("fd00::/8")}, false},
		{"a name", "10.0.0.0/8,ingress", nil, true},
		{"a bad prefix length", "10.0.0.0/33", nil, true},
	} {
		t.Run("SVC_TRUSTED_PROXIES "+tc.name, func(t *testing.T) {
			t.Setenv("SVC_TRUSTED_PROXIES", tc.value)
			cfg, err := loadConfig()
			if tc.err {
				require.ErrorContains(t, err, "SVC_TRUSTED_PROXIES")
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, cfg.TrustedProxies)
		})
	}
	for _, tc := range []struct {
		name  string
		value *string
		want  durationList
		err   bool
	}{
		{"unset: the default ladder", nil, durationList{10 * time.Second, 30 * time.Second, 2 * time.Minute, 10 * time.Minute, 30 * time.Minute}, false},
		{"set but empty: no retries", new(""), durationList{}, false},
		{"a short ladder", new("1s, 2s"), durationList{time.Second, 2 * time.Second}, false},
		{"not a duration", new("10s,soon"), nil, true},
		{"negative", new("-1s"), nil, true},
	} {
		t.Run("SVC_WEBHOOK_RETRY_SCHEDULE "+tc.name, func(t *testing.T) {
			if tc.value != nil {
				t.Setenv("SVC_WEBHOOK_RETRY_SCHEDULE", *tc.value)
			}
			cfg, err := loadConfig()
			if tc.err {
				require.ErrorContains(t, err, "SVC_WEBHOOK_RETRY_SCHEDULE")
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, cfg.WebhookRetrySchedule)
		})
	}
}

// The API's server bounds every phase of a connection (slow or idle clients
// cannot hold it) and keeps room for the slowest answers.
func TestHTTPServerTimeouts(t *testing.T) {
	srv := newHTTPServer(t.Context(), http.NotFoundHandler())
	require.Equal(t, 10*time.Second, srv.ReadHeaderTimeout)
	require.Equal(t, time.Minute, srv.ReadTimeout)
	require.Equal(t, 2*time.Minute, srv.WriteTimeout, "above the 40 s resend and the 20 s upload waits")
	require.Equal(t, 2*time.Minute, srv.IdleTimeout)
	require.Equal(t, 64<<10, srv.MaxHeaderBytes)
}

// Requests to a Temporal on this machine are not compressed unless asked;
// to any other address they are gzipped, as the SDK does by default.
func TestTemporalCompression(t *testing.T) {
	for _, tc := range []struct {
		setting, address string
		want             client.GrpcCompression
		err              bool
	}{
		{"", "127.0.0.1:7233", &client.GrpcCompressionNone{}, false},
		{"auto", "localhost:7233", &client.GrpcCompressionNone{}, false},
		{"auto", "[::1]:7233", &client.GrpcCompressionNone{}, false},
		{"auto", "temporal-frontend.temporal.svc:7233", &client.GrpcCompressionGzip{}, false},
		{"auto", "10.0.3.7:7233", &client.GrpcCompressionGzip{}, false},
		{"gzip", "127.0.0.1:7233", &client.GrpcCompressionGzip{}, false},
		{"none", "10.0.3.7:7233", &client.GrpcCompressionNone{}, false},
		{"brotli", "127.0.0.1:7233", nil, true},
	} {
		t.Run(tc.setting+" "+tc.address, func(t *testing.T) {
			t.Setenv("SVC_TEMPORAL_ADDRESS", tc.address)
			t.Setenv("SVC_TEMPORAL_GRPC_COMPRESSION", tc.setting)
			cfg, err := loadConfig()
			if tc.err {
				require.ErrorContains(t, err, "SVC_TEMPORAL_GRPC_COMPRESSION")
				return
			}
			require.NoError(t, err)
			got, err := cfg.temporalCompression()
			require.NoError(t, err)
			require.IsType(t, tc.want, got)
		})
	}
}

// svc api refuses a storefront domain on the merchant application's or the
// API's site (decisions §23): by registrable domain, as browsers decide
// same-site, so a public suffix such as github.io keeps two of its sites apart.
func TestStorefrontDomainIsAnotherSite(t *testing.T) {
	for _, tc := range []struct {
		domain, merchant, base string
		err                    string
	}{
		{"", "https://app.example.com", "https://api.example.com", ""},
		{"myshops.example", "https://app.example.com", "https://api.example.com", ""},
		{"shops.example.net", "https://example.com", "https://api.example.com", ""},
		{"shop.github.io", "https://merchant.github.io", "https://api.example.com", ""},
		{"shops.example.com", "https://app.example.com", "https://api.other.com", "shares the site \"example.com\" with SVC_MERCHANT_URL"},
		{"example.com", "https://example.com", "https://api.other.com", "SVC_MERCHANT_URL"},
		{"s.example.co.uk", "https://other.net", "https://api.example.co.uk", "shares the site \"example.co.uk\" with SVC_BASE_URL"},
		{"shops.localhost", "http://127.0.0.1:8080", "http://127.0.0.1:8080", ""},
		{"co.uk", "https://a.example.com", "https://api.example.com", "public suffix"},
		{"https://shops.example", "https://a.example.com", "https://api.example.com", "host name"},
		{"Shops.Example", "https://a.example.com", "https://api.example.com", "host name"},
		{"shops.example:443", "https://a.example.com", "https://api.example.com", "host name"},
	} {
		t.Run(tc.domain, func(t *testing.T) {
			cfg := Config{StorefrontDomain: tc.domain, MerchantURL: tc.merchant, BaseURL: tc.base}
			err := cfg.checkStorefrontDomain()
			if tc.err == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorContains(t, err, tc.err)
		})
	}
}

// The refusal stops svc api before it connects to anything.
func TestAPIRefusesAStorefrontDomainOnTheMerchantSite(t *testing.T) {
	cfg := Config{StorefrontDomain: "shops.example.com", MerchantURL: "https://app.example.com", BaseURL: "https://api.example.com",
		DatabaseURL: "postgres://unreachable.invalid/x"}
	err := run(context.Background(), cfg, []string{"api"}, io.Discard, io.Discard)
	require.ErrorContains(t, err, "SVC_STOREFRONT_DOMAIN")
}
