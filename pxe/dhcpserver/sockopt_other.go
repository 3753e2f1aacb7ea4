//go:build !linux

package dhcpserver

import (
	"errors"
	"net"
)

// setReadBuffer asks for a receive buffer of n bytes on c, as far as the
// system allows.
func setReadBuffer(c net.PacketConn, n int) error {
	if u, ok := c.(interface{ SetReadBuffer(int) error }); ok {
		return u.SetReadBuffer(n)
	}
	return errors.New("not a socket")
}
