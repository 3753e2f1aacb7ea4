package pxe

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
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

// limitRig is a client-limited listener over a fake one: from opens a
// connection from a peer address, accepted collects what it passed on.
type limitRig struct {
	t     *testing.T
	inner *fakeListener
	ln    *clientLimitListener
	got   chan net.Conn
	far   map[net.Conn]net.Conn // the client's end of each connection
}

func newLimitRig(t *testing.T, max int) *limitRig {
	r := &limitRig{t: t, inner: &fakeListener{conns: make(chan net.Conn), done: make(chan struct{})},
		got: make(chan net.Conn, 4000), far: map[net.Conn]net.Conn{}}
	r.ln = newClientLimitListener(r.inner, max, 5*time.Second, nil).(*clientLimitListener)
	t.Cleanup(func() { r.ln.Close() })
	go func() {
		for {
			c, err := r.ln.Accept()
			if err != nil {
				return
			}
			r.got <- c
		}
	}()
	return r
}

func (r *limitRig) from(addr string) {
	a, b := net.Pipe()
	r.t.Cleanup(func() { a.Close(); b.Close() })
	r.far[a] = b
	r.inner.conns <- fromConn{Conn: a, peer: netip.AddrPortFrom(netip.MustParseAddr(addr), 40000)}
}

// accepted returns the connections passed on until none comes for 300 ms.
func (r *limitRig) accepted() []net.Conn {
	var cs []net.Conn
	for {
		select {
		case c := <-r.got:
			cs = append(cs, c)
			continue
		case <-time.After(300 * time.Millisecond):
		}
		return cs
	}
}

func (r *limitRig) wantAccepted(want int, what string) []net.Conn {
	r.t.Helper()
	cs := r.accepted()
	if len(cs) != want {
		r.t.Errorf("%s: %d accepted, want %d", what, len(cs), want)
	}
	return cs
}

// closed reports whether the client's end of the accepted connection c
// sees it closed.
func (r *limitRig) closed(c net.Conn) bool {
	c = r.far[countedOf(c).Conn.(fromConn).Conn]
	c.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
	_, err := c.Read(make([]byte, 1))
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrClosedPipe)
}

// TestConnectionsPerClientAreTwoLevelInAnIPv6Slash64: each address of
// a /64 has a client's places (3 here), and the /64 as a whole
// source.PrefixShare times that (24): 20 machines of one segment are
// each served, one address is still held at its own 3, and 1 000
// addresses of the /64 get no more than the /64's 24 (the rest wait
// until one closes). Another /64 and an IPv4 address have places of
// their own; an IPv4-mapped peer is its IPv4 address.
func TestConnectionsPerClientAreTwoLevelInAnIPv6Slash64(t *testing.T) {
	r := newLimitRig(t, 3)
	for i := range 20 {
		r.from(fmt.Sprintf("2001:db8:1:2::%x", i+1))
	}
	first := r.wantAccepted(20, "20 addresses of one /64, one connection each")
	for range 5 {
		r.from("2001:db8:1:2::1")
	}
	r.wantAccepted(2, "five more of one address that holds one")
	for i := range 1000 {
		r.from(fmt.Sprintf("2001:db8:1:2::1:%x", i+1))
	}
	r.wantAccepted(24-22, "1 000 addresses of a /64 holding 22 of its 24")
	for _, other := range []string{"2001:db8:1:3::1", "2001:db8:1:3::2", "192.0.2.7"} {
		r.from(other)
	}
	r.wantAccepted(3, "two addresses of another /64 and an IPv4 address")
	for range 4 {
		r.from("::ffff:192.0.2.9")
	}
	r.from("192.0.2.9")
	r.wantAccepted(3, "four connections of ::ffff:192.0.2.9 and one of 192.0.2.9")
	if len(first) > 4 {
		first[4].Close()
		got := r.wantAccepted(1, "a place of the full /64 given back")
		if len(got) == 1 && got[0].RemoteAddr().(*net.TCPAddr).IP.String() == "2001:db8:1:2::1" {
			t.Errorf("the place went to 2001:db8:1:2::1, which holds its own 3")
		}
	}
}

// TestIdleConnectionsMakeWayAtEachLevel: at a full /64, a fresh
// address's connection closes the /64's connection idle longest and is
// served at once; at a full address, a connection of that address closes
// the address's own idle one, not an older idle one of another address
// of its /64.
func TestIdleConnectionsMakeWayAtEachLevel(t *testing.T) {
	r := newLimitRig(t, 2) // an address 2, a /64 16
	idle := func(cs []net.Conn) {
		for _, c := range cs {
			r.ln.ConnState(c, http.StateIdle)
			time.Sleep(2 * time.Millisecond)
		}
	}
	for i := range 16 {
		r.from(fmt.Sprintf("2001:db8:1:2::%x", i+1))
	}
	held := r.wantAccepted(16, "16 addresses of one /64")
	idle(held)
	r.from("2001:db8:1:2::ffff")
	r.wantAccepted(1, "a fresh address of the full /64 beside 16 idle connections")
	if len(held) == 16 {
		if !r.closed(held[0]) {
			t.Errorf("the /64's connection idle longest (%s) is still open", held[0].RemoteAddr())
		}
		for _, c := range held[1:] {
			if r.closed(c) {
				t.Errorf("%s, not idle longest, was closed", c.RemoteAddr())
			}
		}
	}

	r.from("2001:db8:1:3::1")
	other := r.wantAccepted(1, "one connection of another /64")
	idle(other)
	b := "2001:db8:1:3::2"
	r.from(b)
	r.from(b)
	own := r.wantAccepted(2, "an address's two places")
	idle(own)
	r.from(b)
	r.wantAccepted(1, "a third connection of an address holding two idle ones")
	if len(own) == 2 && len(other) == 1 {
		if !r.closed(own[0]) || r.closed(own[1]) {
			t.Errorf("the address's own connection idle longest is not the one closed")
		}
		if r.closed(other[0]) {
			t.Errorf("another address's connection, idle longer, was closed for an address at its own bound")
		}
	}
}
