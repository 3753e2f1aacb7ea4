package ipam

import (
	"errors"
	"net/netip"
	"strings"
	"testing"
)

// FuzzNew builds pools from arbitrary configs (exclude and used are
// comma-separated) and checks that New never panics and that whatever
// Allocate hands out is ascending, unique, inside the pool and passes
// Check; on pools small enough it also compares with a brute-force walk.
func FuzzNew(f *testing.F) {
	f.Add("192.168.0.0/16", "", "", "", true, "192.168.0.1,192.168.0.3", uint16(5))
	f.Add("10.0.0.0/24", "10.0.0.10-10.0.0.20", "10.0.0.11,10.0.0.13-10.0.0.15", "10.0.0.10", false, "10.0.0.16", uint16(10))
	f.Add("10.0.0.0/30", "", "", "", false, "", uint16(3))
	f.Add("fd00::/120", "fd00::10-fd00::ff", "fd00::20-fd00::2f", "fd00::1", true, "fd00::11,::ffff:10.0.0.1", uint16(40))
	f.Add("ffff:ffff:ffff:ffff:ffff:ffff:ffff:fff0/124", "", "ffff:ffff:ffff:ffff:ffff:ffff:ffff:fffe-ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "", false, "", uint16(20))
	f.Add("0.0.0.0/0", "255.255.255.250-255.255.255.255", "", "", true, "", uint16(9))
	f.Add("bogus", "1-2", "x", "y", false, "z", uint16(1))
	f.Fuzz(func(t *testing.T, cidr, rng, exclude, gateway string, skip bool, used string, n uint16) {
		var ex []string
		if exclude != "" {
			ex = strings.Split(exclude, ",")
		}
		p, err := New(Config{Name: "fuzz", CIDR: cidr, Range: rng, Exclude: ex, Gateway: gateway, SkipEdges: skip})
		if err != nil {
			if !errors.Is(err, ErrInvalidPool) {
				t.Fatalf("New error %v does not wrap ErrInvalidPool", err)
			}
			return
		}
		_ = p.String()
		u := NewUsed()
		for _, s := range strings.Split(used, ",") {
			if a, err := netip.ParseAddr(s); err == nil {
				u.Add(a)
			}
		}
		want := int(n % 300)
		got, err := p.Allocate(u, want)
		if err != nil {
			if !errors.Is(err, ErrExhausted) || got != nil {
				t.Fatalf("Allocate(%d) = %v, %v; want nothing and ErrExhausted", want, got, err)
			}
		} else if len(got) != want {
			t.Fatalf("Allocate(%d) returned %d addresses", want, len(got))
		}
		for i, a := range got {
			if i > 0 && !got[i-1].Less(a) {
				t.Fatalf("Allocate result not strictly ascending: %v", got)
			}
			if !p.Contains(a) {
				t.Fatalf("allocated %s outside %s", a, p)
			}
			if err := p.Check(a, u); err != nil {
				t.Fatalf("allocated %s fails Check: %v", a, err)
			}
		}
		// Brute force on small spans: the lowest addresses passing Check.
		s := p.first
		for range 4096 {
			if s == p.last {
				break
			}
			s = s.Next()
		}
		if s != p.last {
			return // too large to walk
		}
		var brute []netip.Addr
		for a := p.first; a.IsValid() && a.Compare(p.last) <= 0 && len(brute) < want; a = a.Next() {
			if p.Check(a, u) == nil {
				brute = append(brute, a)
			}
		}
		if len(brute) < want {
			if err == nil {
				t.Fatalf("Allocate(%d) succeeded but only %d addresses pass Check", want, len(brute))
			}
			return
		}
		if err != nil {
			t.Fatalf("Allocate(%d) exhausted but %v pass Check", want, brute)
		}
		for i := range brute {
			if brute[i] != got[i] {
				t.Fatalf("Allocate = %v, brute force = %v", got, brute)
			}
		}
	})
}
