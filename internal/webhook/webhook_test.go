package webhook

import (
	"net/netip"
	"testing"

	"github.com/stretchr/testify/require"
)

// Deliveries reach public addresses only: every private, local, tunnelled
// or translated range is refused, IPv4-mapped forms included.
func TestPublicAddress(t *testing.T) {
	for addr, public := range map[string]bool{
		"93.184.216.34":       true,
		"2606:2800:220:1::1":  true,
		"10.1.2.3":            false,
		"127.0.0.1":           false,
		"169.254.169.254":     false,
		"::ffff:10.1.2.3":     false,
		"::1":                 false,
		"fd00::1":             false,
		"fe80::1":             false,
		"64:ff9b::a01:203":    false,
		"64:ff9b:1::a01:203":  false, // local-use NAT64
		"2001:0:4136:e378::1": false, // Teredo
		"2002:a01:203::1":     false, // 6to4 of 10.1.2.3
		"fec0::1":             false, // site-local
		"ff02::1":             false,
		"0.0.0.0":             false,
		"100.64.0.1":          false,
		"2001:db8::1":         true, // documentation range, not a tunnel
	} {
		require.Equal(t, public, PublicAddress(netip.MustParseAddr(addr)), addr)
	}
}
