package ipam

import (
	"errors"
	"math/rand/v2"
	"net/netip"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// addrs parses addresses for test tables.
func addrs(t testing.TB, ss ...string) []netip.Addr {
	t.Helper()
	out := make([]netip.Addr, 0, len(ss))
	for _, s := range ss {
		out = append(out, netip.MustParseAddr(s))
	}
	return out
}

// seq returns n consecutive addresses from first.
func seq(first string, n int) []netip.Addr {
	a := netip.MustParseAddr(first)
	out := make([]netip.Addr, 0, n)
	for range n {
		out = append(out, a)
		a = a.Next()
	}
	return out
}

var addrCmp = cmp.Comparer(func(a, b netip.Addr) bool { return a == b })

// anchorAllocateN does what plasmactl-node's IPAllocator.AllocateN does
// (anchors A.5): for each address, walk every IPv4 address of the network
// in ascending order and take the first one that is not the network or
// broadcast address, does not end in .0 or .255 and is not used; mark it
// used. It walks the whole network, so only use it on small ones.
func anchorAllocateN(t *testing.T, cidr string, used []netip.Addr, n int) ([]netip.Addr, bool) {
	t.Helper()
	prefix := netip.MustParsePrefix(cidr).Masked()
	inUse := map[netip.Addr]bool{}
	for _, u := range used {
		inUse[u] = true
	}
	network, broadcast := prefix.Addr(), lastAddr(prefix)
	var out []netip.Addr
	for range n {
		found := false
		for a := network; a.IsValid() && prefix.Contains(a); a = a.Next() {
			last := a.As4()[3]
			if a == network || a == broadcast || last == 0 || last == 255 || inUse[a] {
				continue
			}
			inUse[a] = true
			out = append(out, a)
			found = true
			break
		}
		if !found {
			return nil, false
		}
	}
	return out, true
}

func TestDefaultMatchesTheAnchorAllocator(t *testing.T) {
	tests := map[string]struct {
		cidr    string
		used    []netip.Addr
		n       int
		want    []netip.Addr
		wantErr string
	}{
		"the first addresses of the default network": {
			cidr: "", n: 3, want: addrs(t, "192.168.0.1", "192.168.0.2", "192.168.0.3"),
		},
		"after .254 comes the next subnet's .1": {
			cidr: DefaultPrivateNetwork, n: 256,
			want: append(seq("192.168.0.1", 254), addrs(t, "192.168.1.1", "192.168.1.2")...),
		},
		"used addresses are skipped, lowest free first": {
			cidr: DefaultPrivateNetwork, used: addrs(t, "192.168.0.1", "192.168.0.2", "192.168.0.4"), n: 2,
			want: addrs(t, "192.168.0.3", "192.168.0.5"),
		},
		"a full first subnet moves to the second": {
			cidr: DefaultPrivateNetwork, used: seq("192.168.0.1", 254), n: 1,
			want: addrs(t, "192.168.1.1"),
		},
		"the README node's address is skipped": {
			cidr: DefaultPrivateNetwork, used: addrs(t, "192.168.1.10"), n: 1,
			want: addrs(t, "192.168.0.1"),
		},
		"used addresses outside the network are ignored": {
			cidr: DefaultPrivateNetwork, used: addrs(t, "10.0.0.1", "192.167.255.254", "fd00::1"), n: 1,
			want: addrs(t, "192.168.0.1"),
		},
		"a sub-/24 network skips its own network and broadcast": {
			cidr: "10.0.0.64/26", n: 62, want: seq("10.0.0.65", 62),
		},
		"a /30 has two addresses": {
			cidr: "10.0.0.0/30", n: 2, want: addrs(t, "10.0.0.1", "10.0.0.2"),
		},
		"a /30 cannot give three": {
			cidr: "10.0.0.0/30", n: 3, wantErr: "no available IPs in pool 10.0.0.0/30: wanted 3, only 2 free",
		},
		"a full /24 is exhausted": {
			cidr: "10.1.2.0/24", used: seq("10.1.2.1", 254), n: 1, wantErr: "no available IPs in pool 10.1.2.0/24",
		},
		"a /31 has no address, like the anchor": {
			cidr: "10.0.0.0/31", n: 1, wantErr: "no available IPs in pool 10.0.0.0/31",
		},
		"a /32 has no address, like the anchor": {
			cidr: "10.0.0.7/32", n: 1, wantErr: "no available IPs in pool 10.0.0.7/32",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			p, err := Default(tc.cidr)
			if err != nil {
				t.Fatal(err)
			}
			got, err := p.Allocate(NewUsed(tc.used...), tc.n)
			cidr := tc.cidr
			if cidr == "" {
				cidr = DefaultPrivateNetwork
			}
			anchor, anchorOK := anchorAllocateN(t, cidr, tc.used, tc.n)
			if tc.wantErr != "" {
				if !errors.Is(err, ErrExhausted) {
					t.Fatalf("Allocate error = %v, want ErrExhausted", err)
				}
				if diff := cmp.Diff(tc.wantErr, err.Error()); diff != "" {
					t.Errorf("error (-want +got):\n%s", diff)
				}
				if got != nil {
					t.Errorf("Allocate on exhaustion returned %v, want nothing", got)
				}
				if anchorOK {
					t.Errorf("the anchor allocator succeeded with %v", anchor)
				}
				return
			}
			if err != nil {
				t.Fatalf("Allocate: %v", err)
			}
			if diff := cmp.Diff(tc.want, got, addrCmp); diff != "" {
				t.Errorf("Allocate (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(anchor, got, addrCmp); diff != "" {
				t.Errorf("differs from the anchor allocator (-anchor +got):\n%s", diff)
			}
		})
	}
}

func TestDefaultMatchesTheAnchorOnRandomUsedSets(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, cidr := range []string{"10.0.0.0/22", "172.16.4.0/23", "192.168.0.0/24", "10.9.8.0/25"} {
		prefix := netip.MustParsePrefix(cidr)
		size := 1 << (32 - prefix.Bits())
		for round := range 20 {
			var used []netip.Addr
			for range r.IntN(size) {
				used = append(used, seq(prefix.Addr().String(), size)[r.IntN(size)])
			}
			n := 1 + r.IntN(size/2)
			p, err := Default(cidr)
			if err != nil {
				t.Fatal(err)
			}
			got, err := p.Allocate(NewUsed(used...), n)
			want, ok := anchorAllocateN(t, cidr, used, n)
			if ok != (err == nil) {
				t.Fatalf("%s round %d: Allocate error %v, anchor ok %v", cidr, round, err, ok)
			}
			if diff := cmp.Diff(want, got, addrCmp); diff != "" {
				t.Fatalf("%s round %d (-anchor +got):\n%s", cidr, round, diff)
			}
		}
	}
}

func TestNew(t *testing.T) {
	tests := map[string]struct {
		c       Config
		want    string // Pool.String()
		wantErr string
	}{
		"a plain IPv4 pool":                {c: Config{CIDR: "10.0.0.0/24"}, want: "pool 10.0.0.0/24"},
		"a plain IPv6 pool":                {c: Config{CIDR: "fd00::/64"}, want: "pool fd00::/64"},
		"space around the CIDR is ignored": {c: Config{CIDR: " 10.0.0.0/24 "}, want: "pool 10.0.0.0/24"},
		"every field": {
			c:    Config{Name: "x", CIDR: "10.0.0.0/24", Range: "10.0.0.10-10.0.0.200", Exclude: []string{"10.0.0.50", "10.0.0.60-10.0.0.70"}, Gateway: "10.0.0.1", SkipEdges: true},
			want: `pool "x" 10.0.0.0/24 range 10.0.0.10-10.0.0.200 gateway 10.0.0.1 exclude 10.0.0.50,10.0.0.60-10.0.0.70 skip-edges`,
		},
		"a single-address range":            {c: Config{CIDR: "10.0.0.0/24", Range: "10.0.0.9"}, want: "pool 10.0.0.0/24 range 10.0.0.9-10.0.0.9"},
		"SkipEdges has no effect on IPv6":   {c: Config{CIDR: "fd00::/64", SkipEdges: true}, want: "pool fd00::/64"},
		"a missing CIDR":                    {c: Config{Name: "x"}, wantErr: `pool "x": cidr is required; want a network such as 192.168.0.0/16 or fd00::/64`},
		"a missing CIDR in an unnamed pool": {c: Config{}, wantErr: `pool: cidr is required; want a network such as 192.168.0.0/16 or fd00::/64`},
		"a bad CIDR":                        {c: Config{Name: "x", CIDR: "10.0.0.0"}, wantErr: `pool "x": cidr "10.0.0.0" is not a CIDR; want a network such as 192.168.0.0/16 or fd00::/64`},
		"host bits set in the CIDR": {
			c:       Config{Name: "x", CIDR: "192.168.7.9/16"},
			wantErr: `pool "x": cidr "192.168.7.9/16" has host bits set; want its network, 192.168.0.0/16 (or a longer prefix length)`,
		},
		"an IPv4-mapped CIDR": {
			c:       Config{Name: "x", CIDR: "::ffff:10.0.0.0/120"},
			wantErr: `pool "x": cidr "::ffff:10.0.0.0/120" is an IPv4-mapped IPv6 prefix; want it written as IPv4`,
		},
		"a range outside the CIDR": {
			c:       Config{Name: "x", CIDR: "10.0.0.0/24", Range: "10.0.1.1-10.0.1.9"},
			wantErr: `pool "x": range "10.0.1.1-10.0.1.9" is outside 10.0.0.0/24`,
		},
		"a range ending outside the CIDR": {
			c:       Config{Name: "x", CIDR: "10.0.0.0/24", Range: "10.0.0.1-10.0.1.9"},
			wantErr: `pool "x": range "10.0.0.1-10.0.1.9" is outside 10.0.0.0/24`,
		},
		"a reversed range": {
			c:       Config{Name: "x", CIDR: "10.0.0.0/24", Range: "10.0.0.9-10.0.0.1"},
			wantErr: `pool "x": range "10.0.0.9-10.0.0.1" has its first address after its last; want first-last, e.g. 10.0.0.1-10.0.0.10`,
		},
		"a malformed range": {
			c:       Config{Name: "x", CIDR: "10.0.0.0/24", Range: "10.0.0.1..10.0.0.9"},
			wantErr: `pool "x": range "10.0.0.1..10.0.0.9" is not an address or first-last range; want one such as 10.0.0.1-10.0.0.10`,
		},
		"an IPv6 range in an IPv4 pool": {
			c:       Config{Name: "x", CIDR: "10.0.0.0/24", Range: "fd00::1-fd00::9"},
			wantErr: `pool "x": range "fd00::1-fd00::9" is outside 10.0.0.0/24`,
		},
		"a bad exclude": {
			c:       Config{Name: "x", CIDR: "fd00::/64", Exclude: []string{"fd00::5", "nope"}},
			wantErr: `pool "x": exclude "nope" is not an address or first-last range; want one such as fd00::1-fd00::a`,
		},
		"an exclude outside the CIDR": {
			c:       Config{Name: "x", CIDR: "10.0.0.0/24", Exclude: []string{"10.0.1.5"}},
			wantErr: `pool "x": exclude "10.0.1.5" is outside 10.0.0.0/24`,
		},
		"a gateway outside the CIDR": {
			c:       Config{Name: "x", CIDR: "10.0.0.0/24", Gateway: "10.0.1.1"},
			wantErr: `pool "x": gateway "10.0.1.1" is outside 10.0.0.0/24`,
		},
		"a gateway with an IPv6 zone": {
			c:       Config{Name: "x", CIDR: "fe80::/64", Gateway: "fe80::1%eth0"},
			wantErr: `pool "x": gateway "fe80::1%eth0" is not an IP address; want one inside fe80::/64 such as fe80::1`,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			p, err := New(tc.c)
			if tc.wantErr != "" {
				if !errors.Is(err, ErrInvalidPool) {
					t.Fatalf("New error = %v, want ErrInvalidPool", err)
				}
				if diff := cmp.Diff(tc.wantErr, err.Error()); diff != "" {
					t.Errorf("error (-want +got):\n%s", diff)
				}
				return
			}
			if err != nil {
				t.Fatalf("New: %v", err)
			}
			if diff := cmp.Diff(tc.want, p.String()); diff != "" {
				t.Errorf("String (-want +got):\n%s", diff)
			}
		})
	}
}

func TestNewKeepsItsOwnCopyOfExclude(t *testing.T) {
	ex := []string{"10.0.0.1"}
	p, err := New(Config{CIDR: "10.0.0.0/24", Exclude: ex})
	if err != nil {
		t.Fatal(err)
	}
	ex[0] = "10.0.0.2"
	if diff := cmp.Diff([]string{"10.0.0.1"}, p.Config().Exclude); diff != "" {
		t.Errorf("Config().Exclude after changing the caller's slice (-want +got):\n%s", diff)
	}
	got, err := p.Allocate(nil, 1)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(addrs(t, "10.0.0.2"), got, addrCmp); diff != "" {
		t.Errorf("Allocate (-want +got):\n%s", diff)
	}
}

func TestAllocate(t *testing.T) {
	tests := map[string]struct {
		c       Config
		used    []netip.Addr
		n       int
		want    []netip.Addr
		wantErr string
	}{
		"a range starts at its first address": {
			c: Config{CIDR: "10.0.0.0/24", Range: "10.0.0.10-10.0.0.20"}, n: 2,
			want: addrs(t, "10.0.0.10", "10.0.0.11"),
		},
		"a range ends at its last address": {
			c: Config{CIDR: "10.0.0.0/24", Range: "10.0.0.10-10.0.0.12"}, n: 4,
			wantErr: "no available IPs in pool 10.0.0.0/24 range 10.0.0.10-10.0.0.12: wanted 4, only 3 free",
		},
		"the gateway is never handed out": {
			c: Config{CIDR: "10.0.0.0/24", Gateway: "10.0.0.1"}, n: 2,
			want: addrs(t, "10.0.0.2", "10.0.0.3"),
		},
		"excluded addresses and ranges are skipped": {
			c: Config{CIDR: "10.0.0.0/24", Exclude: []string{"10.0.0.2", "10.0.0.4-10.0.0.6", "10.0.0.5-10.0.0.8"}}, n: 3,
			want: addrs(t, "10.0.0.1", "10.0.0.3", "10.0.0.9"),
		},
		"used, excluded and gateway combine": {
			c:    Config{CIDR: "10.0.0.0/24", Gateway: "10.0.0.1", Exclude: []string{"10.0.0.3-10.0.0.9"}},
			used: addrs(t, "10.0.0.2", "10.0.0.10", "10.0.0.12"), n: 2,
			want: addrs(t, "10.0.0.11", "10.0.0.13"),
		},
		"a range including the network address still skips it": {
			c: Config{CIDR: "10.0.0.0/24", Range: "10.0.0.0-10.0.0.2"}, n: 2,
			want: addrs(t, "10.0.0.1", "10.0.0.2"),
		},
		"without SkipEdges .0 and .255 inside a /16 are handed out": {
			c: Config{CIDR: "10.0.0.0/16", Range: "10.0.0.254-10.0.1.1"}, n: 4,
			want: addrs(t, "10.0.0.254", "10.0.0.255", "10.0.1.0", "10.0.1.1"),
		},
		"with SkipEdges .0 and .255 are skipped": {
			c: Config{CIDR: "10.0.0.0/16", Range: "10.0.0.254-10.0.1.2", SkipEdges: true}, n: 3,
			want: addrs(t, "10.0.0.254", "10.0.1.1", "10.0.1.2"),
		},
		"IPv6 skips the subnet-router anycast address": {
			c: Config{CIDR: "fd00::/64"}, n: 2,
			want: addrs(t, "fd00::1", "fd00::2"),
		},
		"IPv6 has no broadcast address": {
			c: Config{CIDR: "fd00::/126"}, n: 3,
			want: addrs(t, "fd00::1", "fd00::2", "fd00::3"),
		},
		"IPv6 crosses 64-bit boundaries": {
			c:    Config{CIDR: "fd00::/56", Range: "fd00:0:0:1:ffff:ffff:ffff:fffe-fd00:0:0:2::1"},
			used: addrs(t, "fd00:0:0:1:ffff:ffff:ffff:ffff"), n: 2,
			want: addrs(t, "fd00:0:0:1:ffff:ffff:ffff:fffe", "fd00:0:0:2::"),
		},
		"the top of the IPv6 space does not wrap around": {
			c: Config{CIDR: "ffff:ffff:ffff:ffff:ffff:ffff:ffff:fffc/126"}, used: addrs(t, "ffff:ffff:ffff:ffff:ffff:ffff:ffff:fffe"), n: 3,
			wantErr: "no available IPs in pool ffff:ffff:ffff:ffff:ffff:ffff:ffff:fffc/126: wanted 3, only 2 free",
		},
		"an exclusion at the top of the IPv6 space ends the walk": {
			c: Config{CIDR: "ffff:ffff:ffff:ffff:ffff:ffff:ffff:fffc/126", Exclude: []string{"ffff:ffff:ffff:ffff:ffff:ffff:ffff:fffe-ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"}}, n: 2,
			wantErr: "no available IPs in pool ffff:ffff:ffff:ffff:ffff:ffff:ffff:fffc/126: wanted 2, only 1 free",
		},
		"the top of the IPv4 space is its broadcast address": {
			c: Config{CIDR: "255.255.255.252/30"}, n: 3,
			wantErr: "no available IPs in pool 255.255.255.252/30: wanted 3, only 2 free",
		},
		"IPv4-mapped used addresses count as IPv4": {
			c: Config{CIDR: "10.0.0.0/24"}, used: addrs(t, "::ffff:10.0.0.1"), n: 1,
			want: addrs(t, "10.0.0.2"),
		},
		"zero addresses is nothing": {
			c: Config{CIDR: "10.0.0.0/24"}, n: 0,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			p, err := New(tc.c)
			if err != nil {
				t.Fatal(err)
			}
			got, err := p.Allocate(NewUsed(tc.used...), tc.n)
			if tc.wantErr != "" {
				if !errors.Is(err, ErrExhausted) {
					t.Fatalf("Allocate error = %v, want ErrExhausted", err)
				}
				if diff := cmp.Diff(tc.wantErr, err.Error()); diff != "" {
					t.Errorf("error (-want +got):\n%s", diff)
				}
				if got != nil {
					t.Errorf("Allocate on exhaustion returned %v, want nothing", got)
				}
				return
			}
			if err != nil {
				t.Fatalf("Allocate: %v", err)
			}
			if diff := cmp.Diff(tc.want, got, addrCmp); diff != "" {
				t.Errorf("Allocate (-want +got):\n%s", diff)
			}
		})
	}
}

func TestAllocateRefusesBadCounts(t *testing.T) {
	p, err := Default("")
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{-1, MaxAllocate + 1} {
		if got, err := p.Allocate(nil, n); err == nil || got != nil {
			t.Errorf("Allocate(nil, %d) = %v, %v; want an error", n, got, err)
		}
	}
}

func TestAllocateLeavesUsedAloneUntilAdded(t *testing.T) {
	p, err := Default("")
	if err != nil {
		t.Fatal(err)
	}
	used := NewUsed(netip.MustParseAddr("192.168.0.1"))
	first, err := p.Allocate(used, 2)
	if err != nil {
		t.Fatal(err)
	}
	again, err := p.Allocate(used, 2)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(first, again, addrCmp); diff != "" {
		t.Errorf("a second Allocate on the same set differs (-first +again):\n%s", diff)
	}
	if used.Len() != 1 {
		t.Errorf("used.Len() = %d after Allocate, want 1", used.Len())
	}
	used.Add(first...)
	next, err := p.Allocate(used, 2)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(addrs(t, "192.168.0.4", "192.168.0.5"), next, addrCmp); diff != "" {
		t.Errorf("Allocate after used.Add (-want +got):\n%s", diff)
	}
}

// largeUsed is 100 000 used addresses at the bottom of 10.0.0.0/8,
// 10.0.0.1 to 10.1.134.160: the worst case for a walk from the lowest
// address.
func largeUsed() *Used {
	return NewUsed(seq("10.0.0.1", 100_000)...)
}

func TestAllocateIsFastInALargePool(t *testing.T) {
	p, err := New(Config{CIDR: "10.0.0.0/8", SkipEdges: true})
	if err != nil {
		t.Fatal(err)
	}
	used := largeUsed()
	// The best of three runs, so a busy machine does not fail the test.
	var got []netip.Addr
	best := time.Hour
	for range 3 {
		start := time.Now()
		got, err = p.Allocate(used, 1000)
		best = min(best, time.Since(start))
		if err != nil {
			t.Fatal(err)
		}
	}
	if len(got) != 1000 {
		t.Fatalf("got %d addresses, want 1000", len(got))
	}
	if diff := cmp.Diff(netip.MustParseAddr("10.1.134.161"), got[0], addrCmp); diff != "" {
		t.Errorf("first address (-want +got):\n%s", diff)
	}
	for _, a := range got {
		if err := p.Check(a, used); err != nil {
			t.Fatalf("allocated %s: %v", a, err)
		}
	}
	if best > 100*time.Millisecond {
		t.Errorf("Allocate(1000) in a /8 with 100k used took %v, want under 100ms", best)
	}
}

func TestAllocateExhaustionIsFastInAHugePool(t *testing.T) {
	// Every address of a /64 but the last two is excluded: exhaustion must
	// be found by jumping, not walking 2^64 addresses.
	p, err := New(Config{CIDR: "fd00::/64", Exclude: []string{"fd00::1-fd00::ffff:ffff:ffff:fffd"}})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = p.Allocate(nil, 3)
	if !errors.Is(err, ErrExhausted) {
		t.Fatalf("Allocate = %v, want ErrExhausted", err)
	}
	if elapsed := time.Since(start); elapsed > 100*time.Millisecond {
		t.Errorf("exhaustion took %v", elapsed)
	}
}

func BenchmarkAllocate1000In8With100kUsed(b *testing.B) {
	p, err := New(Config{CIDR: "10.0.0.0/8", SkipEdges: true})
	if err != nil {
		b.Fatal(err)
	}
	used := largeUsed()
	for b.Loop() {
		if _, err := p.Allocate(used, 1000); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkNewUsed100k(b *testing.B) {
	for b.Loop() {
		largeUsed()
	}
}
