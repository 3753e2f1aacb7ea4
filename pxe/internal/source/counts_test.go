package source

import (
	"fmt"
	"net/netip"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestCountsBoundEachAddressInsideItsSlash64: with a bound of 2, an IPv6
// address is full at 2 while another address of its /64 is not (one
// segment's machines do not share one client's budget); the /64 as a
// whole is full at 2×PrefixShare, so rotating addresses within it is
// still bounded, and another /64 is not; an IPv4 address is full at 2.
// Counts taken back leave nothing behind.
func TestCountsBoundEachAddressInsideItsSlash64(t *testing.T) {
	const bound = 2
	addr := func(s string) netip.Addr { return netip.MustParseAddr(s) }
	var c Counts
	a := addr("2001:db8:1:2::1")
	c.Add(a, 1)
	if c.Full(a, bound) {
		t.Errorf("an IPv6 address holding 1 of %d is full", bound)
	}
	c.Add(a, 1)
	if !c.Full(a, bound) {
		t.Errorf("an IPv6 address holding %d of %d is not full", bound, bound)
	}
	if c.Full(addr("2001:db8:1:2::2"), bound) {
		t.Errorf("another address of the /64 is full while one address holds its bound")
	}
	var rotated []netip.Addr
	for i := 0; i < bound*PrefixShare-bound; i++ {
		r := addr(fmt.Sprintf("2001:db8:1:2::1:%x", i))
		rotated = append(rotated, r)
		if c.Full(r, bound) {
			t.Fatalf("the /64 is full after %d of %d", bound+i, bound*PrefixShare)
		}
		c.Add(r, 1)
	}
	if fresh := addr("2001:db8:1:2::ffff"); !c.Full(fresh, bound) {
		t.Errorf("a fresh address of a /64 holding %d is not full: rotating addresses escapes the bound", bound*PrefixShare)
	}
	if c.Full(addr("2001:db8:1:3::1"), bound) {
		t.Errorf("another /64 is full")
	}
	c.Add(rotated[0], -1)
	if c.Full(addr("2001:db8:1:2::ffff"), bound) {
		t.Errorf("a fresh address of the /64 is full after one place was given back")
	}
	v4 := addr("192.0.2.7")
	c.Add(v4, 2)
	if !c.Full(v4, bound) || !c.Full(addr("::ffff:192.0.2.7"), bound) || c.Full(addr("192.0.2.8"), bound) {
		t.Errorf("IPv4: want 192.0.2.7 (also IPv4-mapped) full at %d, 192.0.2.8 not", bound)
	}
	c.Add(v4, -2)
	c.Add(a, -2)
	for _, r := range rotated[1:] {
		c.Add(r, -1)
	}
	if n := c.Len(); n != 0 {
		t.Errorf("%d keys left after every count was taken back", n)
	}
}

func TestAddrOf(t *testing.T) {
	for in, want := range map[string]string{
		"192.0.2.7":        "192.0.2.7/32",
		"::ffff:192.0.2.7": "192.0.2.7/32",
		"2001:db8::7":      "2001:db8::7/128",
		"fe80::7%eth0":     "fe80::7/128",
	} {
		if got := AddrOf(netip.MustParseAddr(in)).String(); got != want {
			t.Errorf("AddrOf(%s) = %s, want %s", in, got, want)
		}
	}
}

// TestLevels: an IPv6 address is counted at itself under the bound and
// at its /64 under PrefixShare times it; an IPv4 address (also
// IPv4-mapped) at itself alone; an invalid one (no IP peer) at the zero
// Prefix. No allocation.
func TestLevels(t *testing.T) {
	tests := map[string]struct {
		addr string
		want []Level
	}{
		"an IPv6 address and its /64": {"2001:db8:1:2::7", []Level{
			{netip.MustParsePrefix("2001:db8:1:2::7/128"), 3}, {netip.MustParsePrefix("2001:db8:1:2::/64"), 3 * PrefixShare}}},
		"an IPv4 address is one level":          {"192.0.2.7", []Level{{netip.MustParsePrefix("192.0.2.7/32"), 3}}},
		"an IPv4-mapped one is the IPv4":        {"::ffff:192.0.2.7", []Level{{netip.MustParsePrefix("192.0.2.7/32"), 3}}},
		"a zone is dropped at each level":       {"fe80::7%eth0", []Level{{netip.MustParsePrefix("fe80::7/128"), 3}, {netip.MustParsePrefix("fe80::/64"), 3 * PrefixShare}}},
		"an invalid address is the zero Prefix": {"", []Level{{netip.Prefix{}, 3}}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var a netip.Addr
			if tc.addr != "" {
				a = netip.MustParseAddr(tc.addr)
			}
			ls, n := Levels(a, 3)
			var got []Level
			if n > 0 {
				got = ls[:n]
			}
			if diff := cmp.Diff(tc.want, got, cmp.Comparer(func(a, b netip.Prefix) bool { return a == b })); diff != "" {
				t.Errorf("Levels(%s) (-want +got):\n%s", tc.addr, diff)
			}
		})
	}
	if n := testing.AllocsPerRun(100, func() { Levels(netip.MustParseAddr("2001:db8::7"), 3) }); n != 0 {
		t.Errorf("Levels allocates %v times, want 0: it runs for every connection and answer request", n)
	}
}

// TestPruneKeepsA64sCountOverItsAddresses: a full table forgets the
// expired counts, then IPv6 addresses' own counts, and a /64's or an
// IPv4 address's only when nothing else makes room.
func TestPruneKeepsA64sCountOverItsAddresses(t *testing.T) {
	p := netip.MustParsePrefix
	table := func() map[netip.Prefix]int {
		return map[netip.Prefix]int{p("2001:db8:1:2::/64"): 1, p("2001:db8:1:2::1/128"): 1, p("2001:db8:1:2::2/128"): 1,
			p("192.0.2.7/32"): 1, p("2001:db8:1:3::/64"): 0}
	}
	expired := func(n int) bool { return n == 0 }
	m := table()
	Prune(m, 3, expired)
	want := map[netip.Prefix]int{p("2001:db8:1:2::/64"): 1, p("192.0.2.7/32"): 1}
	if diff := cmp.Diff(want, m, cmp.Comparer(func(a, b netip.Prefix) bool { return a == b })); diff != "" {
		t.Errorf("pruned to under 3 (-want +got):\n%s", diff)
	}
	m = table()
	Prune(m, 2, expired)
	if len(m) != 1 {
		t.Errorf("pruned to under 2: %v, want one left", m)
	}
}
