package tftp

import (
	"fmt"
	"net/netip"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/plasmactl/plasma-node/pxe/internal/source"
)

// TestTransfersPerClientCountAnIPv6SourceByItsSlash64: the bound is
// two-level. Read requests from 1 000 addresses of one /64 (rotating
// addresses) are bounded by the /64's share: 4×PrefixShare start, the
// rest wait; one address of another /64 starts 4 and waits for the
// fifth while a second address of that /64 (another machine of the
// segment) starts its own; another /64 and an IPv4 address start
// theirs; an IPv4-mapped peer is its IPv4 address.
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
	share := 4 * source.PrefixShare
	if diff := cmp.Diff(map[outcome]int{started: share, queued: 1000 - share}, count(flood...)); diff != "" {
		t.Errorf("1 000 addresses of one /64 (-want +got):\n%s", diff)
	}
	one := "2001:db8:1:4::1"
	if diff := cmp.Diff(map[outcome]int{started: 4, queued: 1}, count(one, one, one, one, one)); diff != "" {
		t.Errorf("one address of a /64 (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[outcome]int{started: 1}, count("2001:db8:1:4::2")); diff != "" {
		t.Errorf("another address of that /64 (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[outcome]int{started: 3}, count("2001:db8:1:3::1", "2001:db8:1:3::2", "192.0.2.7")); diff != "" {
		t.Errorf("another /64 and an IPv4 address (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[outcome]int{started: 4, queued: 1}, count("::ffff:192.0.2.9", "::ffff:192.0.2.9", "192.0.2.9", "192.0.2.9", "192.0.2.9")); diff != "" {
		t.Errorf("192.0.2.9, mapped and not (-want +got):\n%s", diff)
	}
}
