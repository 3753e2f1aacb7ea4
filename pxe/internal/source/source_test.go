package source

import (
	"net/netip"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestOf(t *testing.T) {
	tests := map[string]struct {
		addr, want string
	}{
		"an IPv4 address is itself":                    {"192.0.2.7", "192.0.2.7/32"},
		"an IPv4-mapped IPv6 address is the IPv4 one":  {"::ffff:192.0.2.7", "192.0.2.7/32"},
		"an IPv6 address is its /64":                   {"2001:db8:1:2:a:b:c:d", "2001:db8:1:2::/64"},
		"another address of that /64 is the same":      {"2001:db8:1:2:ffff:ffff:ffff:ffff", "2001:db8:1:2::/64"},
		"the next /64 is another source":               {"2001:db8:1:3::1", "2001:db8:1:3::/64"},
		"a link-local address loses its zone":          {"fe80::1%eth0", "fe80::/64"},
		"the IPv6 loopback is its /64":                 {"::1", "::/64"},
		"the IPv4 loopback is itself, not 127.0.0.0/8": {"127.0.0.1", "127.0.0.1/32"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, Of(netip.MustParseAddr(tc.addr)).String()); diff != "" {
				t.Errorf("Of(%s) (-want +got):\n%s", tc.addr, diff)
			}
		})
	}
	if p := Of(netip.Addr{}); p.IsValid() {
		t.Errorf("Of(zero) = %v, want the zero Prefix", p)
	}
}

func TestOfRemote(t *testing.T) {
	tests := map[string]struct {
		remote, want string
	}{
		"an IPv4 peer":                         {"192.0.2.7:5000", "192.0.2.7/32"},
		"an IPv6 peer":                         {"[2001:db8::7]:5000", "2001:db8::/64"},
		"an IPv6 peer with a zone":             {"[fe80::7%eth0]:5000", "fe80::/64"},
		"a bare IPv6 address":                  {"2001:db8::7", "2001:db8::/64"},
		"an IPv4-mapped peer":                  {"[::ffff:192.0.2.7]:5000", "192.0.2.7/32"},
		"a peer that is no IP address is none": {"pipe", "invalid Prefix"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			p, ok := OfRemote(tc.remote)
			if diff := cmp.Diff(tc.want, p.String()); diff != "" || ok != p.IsValid() {
				t.Errorf("OfRemote(%s) = %v, %v (-want +got):\n%s", tc.remote, p, ok, diff)
			}
		})
	}
}

func TestOfRemoteDoesNotAllocate(t *testing.T) {
	if n := testing.AllocsPerRun(100, func() { OfRemote("[2001:db8::7]:5000") }); n != 0 {
		t.Errorf("OfRemote allocates %v times, want 0: it runs for every answer request", n)
	}
}
