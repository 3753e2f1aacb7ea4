package ipam

import (
	"errors"
	"net/netip"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseCIDR(t *testing.T) {
	tests := map[string]struct {
		in      string
		want    netip.Prefix
		wantErr string
	}{
		"an IPv4 network":            {in: "10.0.0.0/8", want: netip.MustParsePrefix("10.0.0.0/8")},
		"an IPv6 network":            {in: "fd00::/64", want: netip.MustParsePrefix("fd00::/64")},
		"a host route":               {in: "10.0.0.7/32", want: netip.MustParsePrefix("10.0.0.7/32")},
		"space around it is ignored": {in: " 10.0.0.0/24 ", want: netip.MustParsePrefix("10.0.0.0/24")},
		"host bits are refused":      {in: "10.0.0.1/8", wantErr: `cidr "10.0.0.1/8" has host bits set; want its network, 10.0.0.0/8 (or a longer prefix length)`},
		"IPv6 host bits are refused": {in: "fd00::1/64", wantErr: `cidr "fd00::1/64" has host bits set; want its network, fd00::/64 (or a longer prefix length)`},
		"an address is not a CIDR":   {in: "10.0.0.0", wantErr: `cidr "10.0.0.0" is not a CIDR; want a network such as 192.168.0.0/16 or fd00::/64`},
		"a bad octet is not a CIDR":  {in: "999.0.0.0/8", wantErr: `cidr "999.0.0.0/8" is not a CIDR; want a network such as 192.168.0.0/16 or fd00::/64`},
		"an IPv4-mapped prefix":      {in: "::ffff:10.0.0.0/120", wantErr: `cidr "::ffff:10.0.0.0/120" is an IPv4-mapped IPv6 prefix; want it written as IPv4`},
		"empty is refused":           {in: "", wantErr: `cidr is required; want a network such as 192.168.0.0/16 or fd00::/64`},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := ParseCIDR(tc.in)
			if tc.wantErr != "" {
				if !errors.Is(err, ErrInvalidCIDR) {
					t.Fatalf("ParseCIDR(%q) = %v, %v; want ErrInvalidCIDR", tc.in, got, err)
				}
				if diff := cmp.Diff(tc.wantErr, err.Error()); diff != "" {
					t.Errorf("error (-want +got):\n%s", diff)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Errorf("ParseCIDR(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
			}
		})
	}
}
