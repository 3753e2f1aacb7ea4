package dhcpserver

import (
	"errors"
	"net"
	"syscall"
)

// setReadBuffer asks for a receive buffer of n bytes on c: past the
// system's limit (net.core.rmem_max) when the process may
// (SO_RCVBUFFORCE needs CAP_NET_ADMIN), else up to that limit.
func setReadBuffer(c net.PacketConn, n int) error {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return errors.New("not a socket")
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	if err := raw.Control(func(fd uintptr) {
		serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUFFORCE, n)
		if serr != nil {
			serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, n)
		}
	}); err != nil {
		return err
	}
	return serr
}
