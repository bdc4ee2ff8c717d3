package webhook

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"net/url"
	"testing"
)

// The URL guard never accepts what it must refuse: with no name resolving,
// every accepted URL is https without credentials on a public IP literal.
func FuzzCheckURL(f *testing.F) {
	for _, seed := range []string{"https://203.0.113.7/hooks", "https://127.0.0.1/", "https://[::1]/", "https://[64:ff9b:1::a00:1]/",
		"https://[2002:a00:1::]/", "https://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/", "https://[fec0::1]/", "http://8.8.8.8/",
		"https://user:pw@8.8.8.8/", "https://0x7f.1/", "https://[::ffff:10.0.0.1]/", "https://example.com/hooks", "https://%31%32%37.0.0.1/"} {
		f.Add(seed)
	}
	noDNS := &net.Resolver{PreferGo: true, Dial: func(context.Context, string, string) (net.Conn, error) {
		return nil, errors.New("no name service while fuzzing")
	}}
	guard := Guard{Resolver: noDNS}
	f.Fuzz(func(t *testing.T, raw string) {
		if err := guard.CheckURL(context.Background(), raw); err != nil {
			return
		}
		u, err := url.Parse(raw)
		if err != nil || u.Scheme != "https" || u.User != nil {
			t.Fatalf("accepted %q", raw)
		}
		ip, err := netip.ParseAddr(u.Hostname())
		if err != nil || !PublicAddress(ip) {
			t.Fatalf("accepted %q: host %q is not a public address", raw, u.Hostname())
		}
	})
}
