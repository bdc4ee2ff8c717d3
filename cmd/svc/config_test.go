package main

import (
	"net/netip"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestTrustedProxies(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []netip.Prefix
		err  bool
	}{
		{"", nil, false},
		{"10.0.0.0/8", []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}, false},
		{" 10.1.2.3/8 , 192.168.1.7", []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("192.168.1.7/32")}, false},
		{"fd00::/8", []netip.Prefix{netip.MustParsePrefix("fd00::/8")}, false},
		{"10.0.0.0/8,ingress", nil, true},
		{"10.0.0.0/33", nil, true},
	} {
		got, err := Config{TrustedProxies: tc.in}.trustedProxies()
		if tc.err {
			require.ErrorContains(t, err, "SVC_TRUSTED_PROXIES", tc.in)
			continue
		}
		require.NoError(t, err, tc.in)
		require.Equal(t, tc.want, got, tc.in)
	}
}
