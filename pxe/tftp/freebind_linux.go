package tftp

import "syscall"

// ipv6Freebind is Linux's IPV6_FREEBIND socket option (linux/in6.h).
const ipv6Freebind = 78

// freebind lets a socket bind an address the interface does not yet
// answer on: an IPv6 address is "tentative" for the seconds duplicate
// address detection takes after it appears (a SLAAC address just taken
// from a router advertisement), and binding it before then fails with
// "cannot assign requested address", which would fail the whole window.
func freebind(network, _ string, c syscall.RawConn) error {
	var serr error
	err := c.Control(func(fd uintptr) {
		if network == "udp6" {
			serr = syscall.SetsockoptInt(int(fd), syscall.IPPROTO_IPV6, ipv6Freebind, 1)
		} else {
			serr = syscall.SetsockoptInt(int(fd), syscall.IPPROTO_IP, syscall.IP_FREEBIND, 1)
		}
	})
	if err != nil {
		return err
	}
	return serr
}
