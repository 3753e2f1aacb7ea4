package ipam

import (
	"fmt"
	"net/netip"
	"strings"
)

// ParseCIDR parses s, a network in CIDR notation (192.168.0.0/16,
// fd00::/64), the one rule for every CIDR plasma-node takes: a flag, a
// pool of platform.yaml, networking.private_network. Host bits are
// refused, not dropped: "10.0.0.1/8" is an error that names its network,
// 10.0.0.0/8, so a typo is not stored as another network. An IPv4-mapped
// IPv6 prefix and a zone are refused too. Space around s is ignored.
//
// The error wraps [ErrInvalidCIDR] and completes a sentence that starts
// with the field's name: `cidr "10.0.0.1/8" has host bits set; ...`.
func ParseCIDR(s string) (netip.Prefix, error) {
	t := strings.TrimSpace(s)
	bad := func(msg string) error { return newError(ErrInvalidCIDR, fmt.Sprintf("cidr %q %s", s, msg)) }
	if t == "" {
		return netip.Prefix{}, newError(ErrInvalidCIDR, "cidr is required; want a network such as 192.168.0.0/16 or fd00::/64")
	}
	prefix, err := netip.ParsePrefix(t)
	if err != nil {
		return netip.Prefix{}, bad("is not a CIDR; want a network such as 192.168.0.0/16 or fd00::/64")
	}
	if prefix.Addr().Is4In6() {
		return netip.Prefix{}, bad("is an IPv4-mapped IPv6 prefix; want it written as IPv4")
	}
	if m := prefix.Masked(); m != prefix {
		return netip.Prefix{}, bad(fmt.Sprintf("has host bits set; want its network, %s (or a longer prefix length)", m))
	}
	return prefix, nil
}

// ParseAddr parses s, one IP address (192.168.1.10, fd00::10), the one
// rule for every address plasma-node takes: a flag, a node file's
// public_ip and private_ip, a pool's gateway. It does no DNS lookup: a
// name or a malformed literal ("999.0.0.1") is an error. A zone
// ("fe80::1%eth0") is refused; an IPv4-mapped IPv6 address is returned
// as IPv4. Space around s is ignored.
//
// The error wraps [ErrInvalidAddress] and says what would be valid; it
// does not repeat s: the caller names the field and the value.
func ParseAddr(s string) (netip.Addr, error) {
	a, err := netip.ParseAddr(strings.TrimSpace(s))
	if err != nil || a.Zone() != "" {
		return netip.Addr{}, newError(ErrInvalidAddress, "not an IP address; want an IPv4 or IPv6 address such as 192.168.1.10 (no host name, no zone)")
	}
	return a.Unmap(), nil
}
