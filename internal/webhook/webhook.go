// Package webhook sends signed webhook deliveries safely: it refuses
// addresses inside the network (at validation and again at the address
// actually dialled, so DNS rebinding cannot reach the inside), never follows
// redirects, and signs each attempt the way Stripe does.
package webhook

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Timeout is how long a receiver has to answer (spec §6.2).
const Timeout = 10 * time.Second

// maxLoggedBody is how much of a response body is kept in the log.
const maxLoggedBody = 1024

// ErrForbiddenAddress refuses a destination inside the network.
var ErrForbiddenAddress = errors.New("destination address is not public")

// blocked are the ranges no delivery may reach.
var blocked = func() []netip.Prefix {
	var ps []netip.Prefix
	for _, s := range []string{
		"0.0.0.0/8",      // "this network", unspecified
		"10.0.0.0/8",     // private
		"100.64.0.0/10",  // carrier-grade NAT
		"127.0.0.0/8",    // loopback
		"169.254.0.0/16", // link-local (cloud metadata lives here)
		"172.16.0.0/12",  // private
		"192.0.0.0/24",   // IETF protocol assignments
		"192.168.0.0/16", // private
		"198.18.0.0/15",  // benchmarking
		"224.0.0.0/4",    // multicast
		"240.0.0.0/4",    // reserved, broadcast
		"::/128",         // unspecified
		"::1/128",        // loopback
		"64:ff9b::/96",   // NAT64 (embeds IPv4)
		"64:ff9b:1::/48", // local-use NAT64 (RFC 8215)
		"2001::/32",      // Teredo (embeds an IPv4 address)
		"2002::/16",      // 6to4 (embeds an IPv4 address)
		"fec0::/10",      // site-local (deprecated, still routed on some networks)
		"fc00::/7",       // unique local
		"fe80::/10",      // link-local
		"ff00::/8",       // multicast
	} {
		ps = append(ps, netip.MustParsePrefix(s))
	}
	return ps
}()

// PublicAddress reports whether ip may be dialled; IPv4-mapped IPv6
// addresses are judged by the IPv4 address they carry.
func PublicAddress(ip netip.Addr) bool {
	ip = ip.Unmap()
	if !ip.IsValid() {
		return false
	}
	for _, p := range blocked {
		if p.Contains(ip) {
			return false
		}
	}
	return true
}

// Guard holds the address rule and trust settings.
type Guard struct {
	// AllowPrivate lifts the address rule (SVC_WEBHOOK_ALLOW_PRIVATE, dev and tests only).
	AllowPrivate bool
	// Resolver looks hosts up; nil uses the system resolver.
	Resolver *net.Resolver
}

// URLError says why a subscription URL is refused.
type URLError struct{ Reason string }

func (e *URLError) Error() string { return e.Reason }

// CheckURL refuses anything but an https URL whose host resolves only to
// public addresses.
func (g Guard) CheckURL(ctx context.Context, raw string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return &URLError{"must be an absolute URL"}
	}
	if u.Scheme != "https" {
		return &URLError{"must use https"}
	}
	if u.User != nil {
		return &URLError{"must not carry credentials"}
	}
	if g.AllowPrivate {
		return nil
	}
	host := u.Hostname()
	if ip, err := netip.ParseAddr(host); err == nil {
		if !PublicAddress(ip) {
			return &URLError{"must not point to a loopback, private, link-local or otherwise internal address"}
		}
		return nil
	}
	resolver := g.Resolver
	if resolver == nil {
		resolver = net.DefaultResolver
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	addrs, err := resolver.LookupNetIP(ctx, "ip", host)
	if err != nil || len(addrs) == 0 {
		return &URLError{"host does not resolve"}
	}
	for _, ip := range addrs {
		if !PublicAddress(ip) {
			return &URLError{"host resolves to a loopback, private, link-local or otherwise internal address"}
		}
	}
	return nil
}

// NewClient returns the HTTP client for deliveries: it checks every address
// it actually connects to, does not follow redirects, and times out after 10 s.
// caFile, when set, adds a trusted CA (SVC_WEBHOOK_CA_FILE).
func (g Guard) NewClient(caFile string) (*http.Client, error) {
	dialer := &net.Dialer{Timeout: 5 * time.Second, Resolver: g.Resolver}
	if !g.AllowPrivate {
		dialer.Control = func(network, address string, _ syscall.RawConn) error {
			host, _, err := net.SplitHostPort(address)
			if err != nil {
				return err
			}
			ip, err := netip.ParseAddr(host)
			if err != nil || !PublicAddress(ip) {
				return fmt.Errorf("%w: %s", ErrForbiddenAddress, host)
			}
			return nil
		}
	}
	tlsConfig := &tls.Config{MinVersion: tls.VersionTLS12}
	if caFile != "" {
		pem, err := os.ReadFile(caFile)
		if err != nil {
			return nil, fmt.Errorf("read webhook CA file: %w", err)
		}
		pool, err := x509.SystemCertPool()
		if err != nil {
			pool = x509.NewCertPool()
		}
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("webhook CA file %s holds no certificate", caFile)
		}
		tlsConfig.RootCAs = pool
	}
	transport := &http.Transport{
		DialContext:         dialer.DialContext,
		TLSClientConfig:     tlsConfig,
		TLSHandshakeTimeout: 5 * time.Second,
		MaxIdleConns:        256,
		MaxIdleConnsPerHost: 64,
		IdleConnTimeout:     90 * time.Second,
		ForceAttemptHTTP2:   true,
	}
	return &http.Client{
		Transport:     transport,
		Timeout:       Timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}, nil
}

// Sign returns the two signature headers for body at t: the V1 header
// `t=<unix>,v1=<hex HMAC-SHA256(secret, "<t>.<body>")>` (Stripe's layout) and
// the older `sha256=<hex HMAC-SHA256(secret, body)>`.
func Sign(secret string, body []byte, t time.Time) (v1, legacy string) {
	ts := strconv.FormatInt(t.Unix(), 10)
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(ts))
	mac.Write([]byte("."))
	mac.Write(body)
	v1 = "t=" + ts + ",v1=" + hex.EncodeToString(mac.Sum(nil))
	mac = hmac.New(sha256.New, []byte(secret))
	mac.Write(body)
	return v1, "sha256=" + hex.EncodeToString(mac.Sum(nil))
}

// Verify checks a V1 header against the raw body in constant time and
// refuses timestamps further than tolerance from now. Receivers in Go can use
// it as it is; docs/webhooks.md shows the same in other languages.
func Verify(secret string, body []byte, header string, tolerance time.Duration, now time.Time) error {
	var (
		ts  int64
		sig []string
	)
	for _, part := range strings.Split(header, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(part), "=")
		switch k {
		case "t":
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return errors.New("bad timestamp")
			}
			ts = n
		case "v1":
			sig = append(sig, v)
		}
	}
	if ts == 0 || len(sig) == 0 {
		return errors.New("header lacks t or v1")
	}
	if d := now.Sub(time.Unix(ts, 0)); d > tolerance || d < -tolerance {
		return errors.New("timestamp outside tolerance")
	}
	v1, _ := Sign(secret, body, time.Unix(ts, 0))
	want := []byte(strings.TrimPrefix(v1, "t="+strconv.FormatInt(ts, 10)+",v1="))
	for _, s := range sig {
		if hmac.Equal([]byte(s), want) {
			return nil
		}
	}
	return errors.New("signature mismatch")
}

// Request is one attempt to send.
type Request struct {
	URL        string
	Secret     string
	DeliveryID string
	Event      string
	Body       []byte
}

// Result is what the receiver did.
type Result struct {
	StatusCode int // 0 when no response arrived
	Body       string
	Err        string
	Duration   time.Duration
}

// OK reports a 2xx answer.
func (r Result) OK() bool { return r.StatusCode >= 200 && r.StatusCode < 300 }

// Gone reports a 410, which stops delivery at once.
func (r Result) Gone() bool { return r.StatusCode == http.StatusGone }

// Send makes one attempt, signing with the secret at the time of sending.
func Send(ctx context.Context, client *http.Client, req Request, now time.Time) Result {
	start := time.Now()
	httpReq, err := http.NewRequestWithContext(ctx, http.MethodPost, req.URL, bytes.NewReader(req.Body))
	if err != nil {
		return Result{Err: "bad url: " + err.Error()}
	}
	v1, legacy := Sign(req.Secret, req.Body, now)
	httpReq.Header.Set("Content-Type", "application/json")
	httpReq.Header.Set("User-Agent", "svc-webhooks/1")
	httpReq.Header.Set("X-SVC-Delivery", req.DeliveryID)
	httpReq.Header.Set("X-SVC-Event", req.Event)
	httpReq.Header.Set("X-SVC-Signature-V1", v1)
	httpReq.Header.Set("X-SVC-Signature", legacy)
	resp, err := client.Do(httpReq)
	if err != nil {
		return Result{Err: describe(err), Duration: time.Since(start)}
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, maxLoggedBody))
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20)) // let the connection be reused
	return Result{StatusCode: resp.StatusCode, Body: strings.ToValidUTF8(string(body), "?"), Duration: time.Since(start)}
}

// describe turns a transport error into a short log line without the URL's
// query string (which may carry the receiver's own secrets).
func describe(err error) string {
	var urlErr *url.Error
	if errors.As(err, &urlErr) {
		err = urlErr.Err
	}
	switch {
	case errors.Is(err, ErrForbiddenAddress):
		return "refused: " + err.Error()
	case errors.Is(err, context.DeadlineExceeded) || os.IsTimeout(err):
		return "timeout after " + Timeout.String()
	default:
		return err.Error()
	}
}
