package pxe

import (
	"fmt"
	"net"
	"net/netip"
	"sync"
	"testing"
	"time"
)

// fakeListener hands out the connections sent on conns.
type fakeListener struct {
	conns chan net.Conn
	once  sync.Once
	done  chan struct{}
}

func (l *fakeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *fakeListener) Close() error   { l.once.Do(func() { close(l.done) }); return nil }
func (l *fakeListener) Addr() net.Addr { return &net.TCPAddr{IP: net.IPv6loopback, Port: 8090} }

// fromConn is one end of a pipe that says it comes from peer.
type fromConn struct {
	net.Conn
	peer netip.AddrPort
}

func (c fromConn) RemoteAddr() net.Addr { return net.TCPAddrFromAddrPort(c.peer) }

// TestConnectionsPerClientCountAnIPv6SourceByItsSlash64: connections
// from 1 000 addresses of one /64 share one client's places (3 here):
// the rest wait; another /64 and an IPv4 address have places of their
// own; an IPv4-mapped peer is its IPv4 address.
func TestConnectionsPerClientCountAnIPv6SourceByItsSlash64(t *testing.T) {
	inner := &fakeListener{conns: make(chan net.Conn), done: make(chan struct{})}
	ln := newClientLimitListener(inner, 3, 5*time.Second, nil)
	t.Cleanup(func() { ln.Close() })
	from := func(addr string) {
		a, b := net.Pipe()
		t.Cleanup(func() { a.Close(); b.Close() })
		inner.conns <- fromConn{Conn: a, peer: netip.AddrPortFrom(netip.MustParseAddr(addr), 40000)}
	}
	got := make(chan net.Conn, 2000)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			got <- c
		}
	}()
	accepted := func(want int, what string) {
		t.Helper()
		n := 0
		for {
			select {
			case <-got:
				n++
				continue
			case <-time.After(300 * time.Millisecond):
			}
			break
		}
		if n != want {
			t.Errorf("%s: %d accepted, want %d", what, n, want)
		}
	}
	for i := range 1000 {
		from(fmt.Sprintf("2001:db8:1:2::%x", i+1))
	}
	accepted(3, "1 000 addresses of one /64")
	for _, other := range []string{"2001:db8:1:3::1", "2001:db8:1:3::2", "192.0.2.7"} {
		from(other)
	}
	accepted(3, "two addresses of another /64 and an IPv4 address")
	for range 4 {
		from("::ffff:192.0.2.9")
	}
	from("192.0.2.9")
	accepted(3, "four connections of ::ffff:192.0.2.9 and one of 192.0.2.9")
}
