package dhcpserver

import (
	"errors"
	"net"
	"strings"
	"testing"
)

func TestInterfaceIPv4(t *testing.T) {
	if lo, err := net.InterfaceByName("lo"); err != nil || lo == nil {
		t.Skipf("no loopback interface called lo: %v", err)
	}
	ip, err := InterfaceIPv4("lo")
	if err != nil || ip.String() != "127.0.0.1" {
		t.Errorf("InterfaceIPv4(lo) = %v, %v; want 127.0.0.1", ip, err)
	}
	_, err = InterfaceIPv4("no-such-if0")
	if err == nil || errors.Is(err, ErrNoIPv4) || !strings.HasPrefix(err.Error(), "interface no-such-if0: ") {
		t.Errorf("a missing interface: %v, want an error naming it", err)
	}
	v6 := []net.Addr{&net.IPNet{IP: net.ParseIP("fe80::1"), Mask: net.CIDRMask(64, 128)}}
	_, err = firstIPv4("eth0", v6)
	if !errors.Is(err, ErrNoIPv4) || err.Error() != "interface eth0: no IPv4 address" {
		t.Errorf("an interface without IPv4: %v, want ErrNoIPv4", err)
	}
	v4 := append(v6, &net.IPNet{IP: net.IPv4(192, 0, 2, 10), Mask: net.CIDRMask(24, 32)})
	if ip, err := firstIPv4("eth0", v4); err != nil || ip.String() != "192.0.2.10" {
		t.Errorf("firstIPv4 = %v, %v; want 192.0.2.10", ip, err)
	}
}

func TestFirstIPv6(t *testing.T) {
	ipnet := func(s string, bits int) net.Addr {
		return &net.IPNet{IP: net.ParseIP(s), Mask: net.CIDRMask(bits, 8*len(net.ParseIP(s)))}
	}
	for name, tc := range map[string]struct {
		addrs []net.Addr
		want  string
	}{
		"a link-local and an IPv4 address are not offered": {[]net.Addr{ipnet("fe80::1", 64), ipnet("192.0.2.10", 24)}, ""},
		"the unique-local address after the link-local":    {[]net.Addr{ipnet("fe80::1", 64), ipnet("fd77::2", 64), ipnet("2001:db8::2", 64)}, "fd77::2"},
		"a global address": {[]net.Addr{ipnet("2001:db8::2", 64)}, "2001:db8::2"},
	} {
		got, err := firstIPv6("eth0", tc.addrs)
		if tc.want == "" {
			if !errors.Is(err, ErrNoIPv6) || err.Error() != "interface eth0: no global or unique-local IPv6 address" {
				t.Errorf("%s: %v %v; want ErrNoIPv6", name, got, err)
			}
		} else if err != nil || got.String() != tc.want {
			t.Errorf("%s: %v %v; want %s", name, got, err, tc.want)
		}
	}
}
