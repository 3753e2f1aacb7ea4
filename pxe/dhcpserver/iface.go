package dhcpserver

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
)

// ErrNoIPv4 is wrapped by the error of [InterfaceIPv4] for an interface
// that exists but has no IPv4 address; the server's address must then be
// given some other way.
var ErrNoIPv4 = errors.New("no IPv4 address")

// InterfaceIPv4 returns the first IPv4 address of the network interface
// called name: the address a proxy-DHCP server listening there offers as
// next-server ([proxydhcp.Config.ServerIP]). An interface that does not
// exist gives the system's error; one without an IPv4 address gives an
// error wrapping [ErrNoIPv4], such as "interface eth0: no IPv4 address".
func InterfaceIPv4(name string) (netip.Addr, error) {
	ifc, err := net.InterfaceByName(name)
	if err != nil {
		return netip.Addr{}, fmt.Errorf("interface %s: %w", name, err)
	}
	addrs, err := ifc.Addrs()
	if err != nil {
		return netip.Addr{}, fmt.Errorf("interface %s: %w", name, err)
	}
	return firstIPv4(name, addrs)
}

// firstIPv4 returns the first IPv4 address of the interface name's
// addresses.
func firstIPv4(name string, addrs []net.Addr) (netip.Addr, error) {
	for _, a := range addrs {
		if p, err := netip.ParsePrefix(a.String()); err == nil && p.Addr().Is4() {
			return p.Addr(), nil
		}
	}
	return netip.Addr{}, fmt.Errorf("interface %s: %w", name, ErrNoIPv4)
}

// ErrNoIPv6 is wrapped by the error of [InterfaceIPv6] for an interface
// that exists but has no global or unique-local IPv6 address.
var ErrNoIPv6 = errors.New("no global or unique-local IPv6 address")

// InterfaceIPv6 returns the first global or unique-local IPv6 address of
// the network interface called name (link-local ones are skipped: a URL
// naming one needs a zone no firmware takes), and the interface's MAC:
// what a DHCPv6 boot server listening there offers in its tftp:// URLs
// and identifies itself by ([proxydhcp.Config6]). An interface without
// one gives an error wrapping [ErrNoIPv6].
func InterfaceIPv6(name string) (netip.Addr, net.HardwareAddr, error) {
	ifc, err := net.InterfaceByName(name)
	if err != nil {
		return netip.Addr{}, nil, fmt.Errorf("interface %s: %w", name, err)
	}
	addrs, err := ifc.Addrs()
	if err != nil {
		return netip.Addr{}, nil, fmt.Errorf("interface %s: %w", name, err)
	}
	a, err := firstIPv6(name, addrs)
	return a, ifc.HardwareAddr, err
}

func firstIPv6(name string, addrs []net.Addr) (netip.Addr, error) {
	for _, a := range addrs {
		if p, err := netip.ParsePrefix(a.String()); err == nil && p.Addr().Is6() && !p.Addr().Is4In6() && p.Addr().IsGlobalUnicast() {
			return p.Addr(), nil
		}
	}
	return netip.Addr{}, fmt.Errorf("interface %s: %w", name, ErrNoIPv6)
}
