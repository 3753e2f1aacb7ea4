package tftp

import (
	"fmt"
	"net/netip"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestTransfersPerClientCountAnIPv6SourceByItsSlash64: read requests
// from 1 000 addresses of one /64 are one client's: 4 start, the rest
// wait; another /64 and an IPv4 address start theirs; an IPv4-mapped
// peer is its IPv4 address.
func TestTransfersPerClientCountAnIPv6SourceByItsSlash64(t *testing.T) {
	ts := newTransfers(50, 4)
	now := time.Now()
	port := uint16(1000)
	count := func(peers ...string) map[outcome]int {
		got := map[outcome]int{}
		for _, p := range peers {
			port++
			o, _ := ts.request(netip.AddrPortFrom(netip.MustParseAddr(p), port), now, func(*transfer) {})
			got[o]++
		}
		return got
	}
	var flood []string
	for i := range 1000 {
		flood = append(flood, fmt.Sprintf("2001:db8:1:2::%x", i+1))
	}
	if diff := cmp.Diff(map[outcome]int{started: 4, queued: 996}, count(flood...)); diff != "" {
		t.Errorf("1 000 addresses of one /64 (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[outcome]int{started: 3}, count("2001:db8:1:3::1", "2001:db8:1:3::2", "192.0.2.7")); diff != "" {
		t.Errorf("another /64 and an IPv4 address (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[outcome]int{started: 4, queued: 1}, count("::ffff:192.0.2.9", "::ffff:192.0.2.9", "192.0.2.9", "192.0.2.9", "192.0.2.9")); diff != "" {
		t.Errorf("192.0.2.9, mapped and not (-want +got):\n%s", diff)
	}
}
