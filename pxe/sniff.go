package pxe

import (
	"crypto/tls"
	"io"
	"net"
	"time"
)

// sniffTimeout bounds how long a new connection may take to send its
// first byte, which tells TLS from plain HTTP.
const sniffTimeout = 10 * time.Second

// tlsRecordHandshake is the first byte of every TLS connection (a
// handshake record carrying the ClientHello).
const tlsRecordHandshake = 0x16

// sniffListener serves TLS and plain HTTP on one port: a connection that
// opens with a TLS handshake record is wrapped with [tls.Server], any other
// is passed on as it is. [http.Server] tells them apart by type (a
// *tls.Conn) and sets Request.TLS only for the first kind, which is what
// [Server.ServeHTTP] checks against the plain-HTTP paths of a TLS window
// (see [Config].TLS).
//
// The first byte is read in a goroutine per connection, so a client that
// sends nothing holds up no other, and only for [sniffTimeout].
type sniffListener struct {
	handoff
	cfg *tls.Config
}

func newSniffListener(inner net.Listener, cfg *tls.Config) *sniffListener {
	l := &sniffListener{handoff: newHandoff(inner), cfg: cfg}
	go l.acceptLoop(func(c net.Conn) { go l.sniff(c) })
	return l
}

func (l *sniffListener) sniff(c net.Conn) {
	first := make([]byte, 1)
	c.SetReadDeadline(time.Now().Add(sniffTimeout))
	if _, err := io.ReadFull(c, first); err != nil {
		c.Close()
		return
	}
	c.SetReadDeadline(time.Time{})
	var out net.Conn = &peekedConn{Conn: c, first: first}
	if first[0] == tlsRecordHandshake {
		out = tls.Server(out, l.cfg)
	}
	l.deliver(out)
}

// peekedConn gives back the byte the sniffer read before the rest.
type peekedConn struct {
	net.Conn
	first []byte
}

func (c *peekedConn) Read(p []byte) (int, error) {
	if len(c.first) > 0 {
		n := copy(p, c.first)
		c.first = c.first[n:]
		return n, nil
	}
	return c.Conn.Read(p)
}

// ReadFrom keeps the connection's own ReadFrom (sendfile for a TCP
// connection) for plain responses such as the installer's kernel and
// initrd.
func (c *peekedConn) ReadFrom(r io.Reader) (int64, error) {
	if rf, ok := c.Conn.(io.ReaderFrom); ok {
		return rf.ReadFrom(r)
	}
	return io.Copy(c.Conn, r)
}
