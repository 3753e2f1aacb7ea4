package source

import (
	"net"
	"net/netip"
)

// IPv6Bits is the length of the prefix an IPv6 client counts as: a /64,
// the least a site gives one link (SLAAC needs it) and the usual
// delegation to one customer. Every address in it is one source, so that
// rotating addresses within it (privacy addresses, a host routed a /64 of
// its own) does not escape a per-source bound.
const IPv6Bits = 64

// Of returns the source the address a counts as: an IPv4 address (or an
// IPv4-mapped IPv6 one, ::ffff:10.0.0.1) is itself, a /32; an IPv6
// address is its /64, without its zone. An invalid a gives the zero
// Prefix.
func Of(a netip.Addr) netip.Prefix {
	if !a.IsValid() {
		return netip.Prefix{}
	}
	a = a.Unmap().WithZone("")
	if a.Is4() {
		return netip.PrefixFrom(a, 32)
	}
	p, _ := a.Prefix(IPv6Bits)
	return p
}

// OfRemote returns the source of a peer's address as
// [net/http.Request.RemoteAddr] and [net.Conn.RemoteAddr] write it
// ("10.0.0.1:5000", "[2001:db8::1]:5000") or a bare address. It returns
// the zero Prefix and false when addr holds no IP address (a Unix
// socket, a test's "pipe"): a bound keyed by the result counts all such
// peers as one source. It does not allocate.
func OfRemote(addr string) (netip.Prefix, bool) {
	a := AddrOfRemote(addr)
	if !a.IsValid() {
		return netip.Prefix{}, false
	}
	return Of(a), true
}

// AddrOfRemote returns the address of a peer as [OfRemote] reads it,
// unmapped and without its zone, for a two-level bound ([Levels]); the
// zero Addr when addr holds no IP address. It does not allocate.
func AddrOfRemote(addr string) netip.Addr {
	host := addr
	if h, _, err := net.SplitHostPort(addr); err == nil {
		host = h
	}
	a, err := netip.ParseAddr(host)
	if err != nil {
		return netip.Addr{}
	}
	return a.Unmap().WithZone("")
}
