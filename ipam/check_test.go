package ipam

import (
	"errors"
	"net/netip"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestCheck(t *testing.T) {
	p, err := New(Config{
		Name: "x", CIDR: "10.0.0.0/16", Range: "10.0.0.0-10.0.9.255",
		Exclude: []string{"10.0.0.50-10.0.0.60"}, Gateway: "10.0.0.1", SkipEdges: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	v6, err := New(Config{CIDR: "fd00::/64", Gateway: "fd00::1"})
	if err != nil {
		t.Fatal(err)
	}
	used := NewUsed(addrs(t, "10.0.0.5", "fd00::5")...)
	tests := map[string]struct {
		pool    *Pool
		addr    string // empty: the zero Addr
		wantErr error
		wantMsg string
	}{
		"a free address passes":         {pool: p, addr: "10.0.0.2"},
		"a free IPv6 address passes":    {pool: v6, addr: "fd00::2"},
		"an IPv4-mapped address passes": {pool: p, addr: "::ffff:10.0.0.2"},
		"a used address is in use": {
			pool: p, addr: "10.0.0.5", wantErr: ErrInUse, wantMsg: "10.0.0.5 is already used",
		},
		"a used IPv6 address is in use": {
			pool: v6, addr: "fd00::5", wantErr: ErrInUse, wantMsg: "fd00::5 is already used",
		},
		"an address outside the CIDR": {
			pool: p, addr: "10.1.0.5", wantErr: ErrOutOfPool, wantMsg: "10.1.0.5 is outside 10.0.0.0/16 range 10.0.0.0-10.0.9.255",
		},
		"an address outside the range": {
			pool: p, addr: "10.0.10.5", wantErr: ErrOutOfPool, wantMsg: "10.0.10.5 is outside 10.0.0.0/16 range 10.0.0.0-10.0.9.255",
		},
		"an IPv6 address in an IPv4 pool": {
			pool: p, addr: "fd00::2", wantErr: ErrOutOfPool, wantMsg: "fd00::2 is outside 10.0.0.0/16 range 10.0.0.0-10.0.9.255",
		},
		"an address with a zone": {
			pool: v6, addr: "fd00::2%eth0", wantErr: ErrOutOfPool, wantMsg: "fd00::2%eth0 is outside fd00::/64",
		},
		"no address": {
			pool: v6, wantErr: ErrOutOfPool, wantMsg: "no address given; want one in fd00::/64",
		},
		"the network address": {
			pool: p, addr: "10.0.0.0", wantErr: ErrReserved, wantMsg: "10.0.0.0 is the network address of 10.0.0.0/16",
		},
		"the IPv6 subnet-router anycast address": {
			pool: v6, addr: "fd00::", wantErr: ErrReserved, wantMsg: "fd00:: is the network address of fd00::/64",
		},
		"the gateway": {
			pool: p, addr: "10.0.0.1", wantErr: ErrReserved, wantMsg: "10.0.0.1 is the gateway of 10.0.0.0/16",
		},
		"an excluded address": {
			pool: p, addr: "10.0.0.55", wantErr: ErrReserved, wantMsg: `10.0.0.55 is excluded from 10.0.0.0/16 by "10.0.0.50-10.0.0.60"`,
		},
		"a .255 address with SkipEdges": {
			pool: p, addr: "10.0.3.255", wantErr: ErrReserved, wantMsg: "10.0.3.255 ends in .255, which 10.0.0.0/16 never hands out",
		},
		"a .0 address with SkipEdges": {
			pool: p, addr: "10.0.4.0", wantErr: ErrReserved, wantMsg: "10.0.4.0 ends in .0, which 10.0.0.0/16 never hands out",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var a netip.Addr
			if tc.addr != "" {
				a = netip.MustParseAddr(tc.addr)
			}
			err := tc.pool.Check(a, used)
			if tc.wantErr == nil {
				if err != nil {
					t.Fatalf("Check(%s): %v", a, err)
				}
				return
			}
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("Check(%s) = %v, want %v", a, err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.wantMsg, err.Error()); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDefaultBroadcastIsReserved(t *testing.T) {
	p, err := Default("")
	if err != nil {
		t.Fatal(err)
	}
	err = p.Check(netip.MustParseAddr("192.168.255.255"), nil)
	if !errors.Is(err, ErrReserved) {
		t.Fatalf("Check(broadcast) = %v, want ErrReserved", err)
	}
	if diff := cmp.Diff("192.168.255.255 is the broadcast address of 192.168.0.0/16", err.Error()); diff != "" {
		t.Errorf("error (-want +got):\n%s", diff)
	}
}

func TestContains(t *testing.T) {
	p, err := New(Config{CIDR: "10.0.0.0/24", Range: "10.0.0.10-10.0.0.20", Gateway: "10.0.0.15"})
	if err != nil {
		t.Fatal(err)
	}
	tests := map[string]struct {
		addr netip.Addr
		want bool
	}{
		"the first address of the range": {netip.MustParseAddr("10.0.0.10"), true},
		"the last address of the range":  {netip.MustParseAddr("10.0.0.20"), true},
		"the gateway is in the span":     {netip.MustParseAddr("10.0.0.15"), true},
		"below the range":                {netip.MustParseAddr("10.0.0.9"), false},
		"above the range":                {netip.MustParseAddr("10.0.0.21"), false},
		"another family":                 {netip.MustParseAddr("::a00:a"), false},
		"the zero address":               {netip.Addr{}, false},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := p.Contains(tc.addr); got != tc.want {
				t.Errorf("Contains(%s) = %v, want %v", tc.addr, got, tc.want)
			}
		})
	}
}

func TestUsed(t *testing.T) {
	u := NewUsed(addrs(t, "10.0.0.3", "10.0.0.1", "10.0.0.3", "::ffff:10.0.0.2", "fe80::1%eth0")...)
	u.Add(netip.Addr{})
	if got := u.Len(); got != 4 {
		t.Errorf("Len() = %d, want 4 (duplicates and invalid addresses dropped)", got)
	}
	for _, s := range []string{"10.0.0.1", "10.0.0.2", "10.0.0.3", "fe80::1", "fe80::1%eth1"} {
		if !u.Has(netip.MustParseAddr(s)) {
			t.Errorf("Has(%s) = false, want true", s)
		}
	}
	if u.Has(netip.MustParseAddr("10.0.0.4")) || u.Has(netip.Addr{}) {
		t.Error("Has reports an address never added")
	}
	var nilUsed *Used
	if nilUsed.Has(netip.MustParseAddr("10.0.0.1")) || nilUsed.Len() != 0 {
		t.Error("a nil *Used is not empty")
	}
	var zero Used
	zero.Add(netip.MustParseAddr("10.0.0.9"))
	if !zero.Has(netip.MustParseAddr("10.0.0.9")) {
		t.Error("the zero Used does not record Add")
	}
}
