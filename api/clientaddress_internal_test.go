package api

import (
	"net/http"
	"net/netip"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestClientAddress(t *testing.T) {
	balancers := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("192.168.1.7/32")}
	for _, tc := range []struct {
		name, remote string
		forwarded    []string
		trusted      []netip.Prefix
		want         string
	}{
		{"no proxies trusted: the connection", "10.0.0.2:4000", []string{"203.0.113.7"}, nil, "10.0.0.2"},
		{"an untrusted peer's header is ignored", "203.0.113.9:4000", []string{"198.51.100.1"}, balancers, "203.0.113.9"},
		{"a trusted balancer names the client", "10.0.0.2:4000", []string{"203.0.113.7"}, balancers, "203.0.113.7"},
		{"two balancers in a row", "10.0.0.2:4000", []string{"203.0.113.7, 192.168.1.7"}, balancers, "203.0.113.7"},
		{"entries left of the client are its own say", "10.0.0.2:4000", []string{"1.1.1.1, 203.0.113.7"}, balancers, "203.0.113.7"},
		{"several header lines read as one list", "10.0.0.2:4000", []string{"1.1.1.1", "203.0.113.7, 10.9.9.9"}, balancers, "203.0.113.7"},
		{"no header from a balancer: the balancer", "10.0.0.2:4000", nil, balancers, "10.0.0.2"},
		{"only balancers in the chain", "10.0.0.2:4000", []string{"10.1.1.1"}, balancers, "10.0.0.2"},
		{"garbage where the client should be", "10.0.0.2:4000", []string{"not-an-ip"}, balancers, "10.0.0.2"},
		{"IPv6 client", "10.0.0.2:4000", []string{"2001:db8::1"}, balancers, "2001:db8::1"},
		{"IPv4-mapped balancer", "[::ffff:10.0.0.2]:4000", []string{"203.0.113.7"}, balancers, "203.0.113.7"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, _ := http.NewRequest(http.MethodGet, "/", nil)
			r.RemoteAddr = tc.remote
			for _, v := range tc.forwarded {
				r.Header.Add("X-Forwarded-For", v)
			}
			require.Equal(t, tc.want, clientAddress(r, tc.trusted))
		})
	}
}

// The per-client limits count an IPv6 client by its /64, so rotating
// through one subscriber's addresses does not reset them.
func TestClientNetwork(t *testing.T) {
	trusted := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}
	for _, tc := range []struct{ remote, forwarded, want string }{
		{"203.0.113.9:4000", "", "203.0.113.9"},
		{"[2001:db8:1:2:aaaa::1]:4000", "", "2001:db8:1:2::/64"},
		{"[2001:db8:1:2:ffff:ffff:ffff:ffff]:4000", "", "2001:db8:1:2::/64"},
		{"[2001:db8:1:3::1]:4000", "", "2001:db8:1:3::/64"},
		{"[::ffff:203.0.113.9]:4000", "", "203.0.113.9"},
		{"10.0.0.2:4000", "2001:db8:9:9:1::7", "2001:db8:9:9::/64"},
	} {
		r, _ := http.NewRequest(http.MethodGet, "/", nil)
		r.RemoteAddr = tc.remote
		if tc.forwarded != "" {
			r.Header.Set("X-Forwarded-For", tc.forwarded)
		}
		require.Equal(t, tc.want, clientNetwork(r, trusted), tc.remote)
	}
}
