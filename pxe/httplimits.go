package pxe

import (
	"errors"
	"io"
	"net"
	"net/http"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/plasmactl/plasma-node/pxe/internal/source"
)

// Limits on the window's HTTP connections, the defaults of [HTTPLimits].
// nginx, the usual front of such servers, closes the same connections
// within 60 to 75 seconds (keepalive_timeout 75 s, client_body_timeout
// and send_timeout 60 s); the window's clients are iPXE and the
// installer on a LAN, which never pause that long, so its limits are
// shorter.
const (
	// DefaultIdleTimeout closes a keep-alive connection that has sent no
	// new request for 60 seconds. iPXE and the installer reuse theirs
	// within a second or two.
	DefaultIdleTimeout = 60 * time.Second
	// DefaultBodyTimeout ends a request whose body has sent nothing for
	// 30 seconds (a POST that stops sending); a slow body that keeps
	// sending is not cut, each read gets the whole time.
	DefaultBodyTimeout = 30 * time.Second
	// DefaultWriteTimeout ends a response when one write of it, at most
	// writeChunk bytes, cannot be handed to the client's connection
	// for 30 seconds (a client that stops reading a 64 MiB asset). A
	// slow client that keeps reading is not cut: any client reading
	// writeChunk bytes in 30 seconds (about 2 KiB/s) gets everything.
	DefaultWriteTimeout = 30 * time.Second
	// DefaultMaxConnsPerClient is how many connections one client
	// address may hold at once: 64 (the addresses of one IPv6 /64
	// together 8 times that, 512). iPXE and the installer use one, a
	// browser six; an address may front several (a NAT, a jump host, a
	// load test such as wrk -c20), while a client hoarding idle
	// connections holds no more than 64 descriptors. A further
	// connection waits for a place (see [DefaultQueueWait]).
	DefaultMaxConnsPerClient = 64
	// DefaultQueueWait is how long a connection over its client's cap
	// waits for a place: 10 seconds, as long as a client may take to
	// send its request's header. A burst of short requests (500 at once)
	// is served in turn, while a client hoarding idle connections gets
	// no more than its cap served; the rest are closed unserved.
	DefaultQueueWait = 10 * time.Second
	// clientQueue is how many connections of one client may wait
	// for a place beyond its cap; further ones are closed at once.
	clientQueue = 1024
	// writeChunk is the most a response write sends under one write
	// deadline: larger writes, such as an asset sent by sendfile, are
	// cut into chunks of this size, each with its own deadline.
	writeChunk = 64 << 10
)

// HTTPLimits bound the window's HTTP connections. Zero fields are the
// defaults; a negative duration or count turns that limit off.
type HTTPLimits struct {
	// IdleTimeout closes an idle keep-alive connection. Default:
	// [DefaultIdleTimeout].
	IdleTimeout time.Duration
	// BodyTimeout ends a request whose body sends nothing for this long
	// between two reads. Default: [DefaultBodyTimeout].
	BodyTimeout time.Duration
	// WriteTimeout ends a response when one write of at most
	// writeChunk bytes takes this long. Default: [DefaultWriteTimeout].
	WriteTimeout time.Duration
	// MaxConnsPerClient caps the connections of one client address;
	// the addresses of one IPv6 /64 (a site's IPv6 segment is one) hold
	// at most 8 times it together. Default:
	// [DefaultMaxConnsPerClient].
	MaxConnsPerClient int
	// QueueWait is how long a connection over its client's cap waits
	// for a place. Default: [DefaultQueueWait].
	QueueWait time.Duration
}

// withDefaults fills in the zero fields.
func (l HTTPLimits) withDefaults() HTTPLimits {
	if l.IdleTimeout == 0 {
		l.IdleTimeout = DefaultIdleTimeout
	}
	if l.BodyTimeout == 0 {
		l.BodyTimeout = DefaultBodyTimeout
	}
	if l.WriteTimeout == 0 {
		l.WriteTimeout = DefaultWriteTimeout
	}
	if l.QueueWait <= 0 {
		l.QueueWait = DefaultQueueWait
	}
	if l.MaxConnsPerClient == 0 {
		l.MaxConnsPerClient = DefaultMaxConnsPerClient
	}
	return l
}

// bound wraps a request's writer and body with the per-write and
// per-read deadlines of l.
func (l HTTPLimits) bound(w http.ResponseWriter, r *http.Request) (http.ResponseWriter, *http.Request) {
	rc := http.NewResponseController(w)
	if l.BodyTimeout > 0 && r.Body != nil && r.Body != http.NoBody {
		r.Body = &deadlineBody{ReadCloser: r.Body, rc: rc, d: l.BodyTimeout}
	}
	if l.WriteTimeout > 0 {
		w = &deadlineWriter{ResponseWriter: w, rc: rc, d: l.WriteTimeout}
	}
	return w, r
}

// deadlineBody gives each read of a request body its own deadline, and
// clears it once the body is read (a body that timed out keeps it, so
// that the server's discarding the rest is cut too), so that the connection's background
// read (which notices a client going away) is not cut.
type deadlineBody struct {
	io.ReadCloser
	rc *http.ResponseController
	d  time.Duration
}

func (b *deadlineBody) Read(p []byte) (int, error) {
	b.rc.SetReadDeadline(time.Now().Add(b.d))
	n, err := b.ReadCloser.Read(p)
	if errors.Is(err, io.EOF) {
		b.rc.SetReadDeadline(time.Time{})
	}
	return n, err
}

// deadlineWriter gives each write of a response, in chunks of at most
// writeChunk bytes, its own deadline.
type deadlineWriter struct {
	http.ResponseWriter
	rc *http.ResponseController
	d  time.Duration
}

func (w *deadlineWriter) Write(p []byte) (n int, err error) {
	for len(p) > 0 {
		chunk := p[:min(len(p), writeChunk)]
		w.rc.SetWriteDeadline(time.Now().Add(w.d))
		m, err := w.ResponseWriter.Write(chunk)
		n += m
		if err != nil {
			return n, err
		}
		p = p[m:]
	}
	return n, nil
}

// ReadFrom keeps the writer's own ReadFrom (sendfile for a file on a
// plain TCP connection), a chunk at a time, each with its own deadline.
// A chunk starts at writeChunk bytes and doubles, up to maxSendChunk,
// while the last one took under a 256th of the deadline (a client
// reading fast, on a LAN): sendfile of 64 KiB at a time cost a system
// call and a deadline per 64 KiB, 16 384 for each GiB, where nginx sends
// up to 2 MiB a call. A chunk that took over an eighth of the deadline
// halves the next one, so a client that slows down is not cut for a
// chunk sized when it was fast; one that stops is cut after the
// deadline, as before.
func (w *deadlineWriter) ReadFrom(src io.Reader) (n int64, err error) {
	rf, ok := w.ResponseWriter.(io.ReaderFrom)
	if !ok {
		return io.CopyBuffer(writerOnly{w}, src, make([]byte, 32<<10))
	}
	// sendfile takes a file, or a file under one io.LimitedReader, as
	// http.ServeContent gives.
	lr, ok := src.(*io.LimitedReader)
	if !ok {
		lr = &io.LimitedReader{R: src, N: 1<<63 - 1}
	}
	size := int64(writeChunk)
	chunk := &io.LimitedReader{R: lr.R}
	for lr.N > 0 {
		began := time.Now()
		w.rc.SetWriteDeadline(began.Add(w.d))
		chunk.N = min(lr.N, size)
		want := chunk.N
		m, err := rf.ReadFrom(chunk)
		n += m
		lr.N -= m
		if err != nil {
			return n, err
		}
		if m == 0 || m < want {
			return n, nil // src ended
		}
		switch took := time.Since(began); {
		case took < w.d/256 && size < maxSendChunk:
			size *= 2
		case took > w.d/8 && size > writeChunk:
			size /= 2
		}
	}
	return n, nil
}

// maxSendChunk is the largest chunk ReadFrom sends under one deadline.
const maxSendChunk = 4 << 20

// Unwrap lets [http.ResponseController] reach the underlying writer.
func (w *deadlineWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// writerOnly hides a writer's ReadFrom from io.Copy.
type writerOnly struct{ io.Writer }

// clientLimitListener holds a client to max connections at once: a
// further one waits up to wait for one of them to close (a burst of
// short requests is served in turn), at most maxWaiting of them; the
// rest, and those that waited too long, are closed unserved. It is
// two-level ([source.Levels]): a client is an address, and the addresses
// of one IPv6 /64 hold at most [source.PrefixShare]×max together, so the
// machines of one segment each get their places while rotating addresses
// within a /64 gains at most that share. A connection takes a place of
// each level, its address's first.
type clientLimitListener struct {
	handoff
	max, maxWaiting int
	wait            time.Duration
	refused         func(netip.Addr) // called for each connection closed unserved; may be nil
	placesMu        sync.Mutex
	places          map[netip.Prefix]*clientPlaces
}

// clientPlaces are the places of one level (an address or a /64): a
// semaphore of its bound, refs, the connections holding or waiting for
// one, and conns, those holding one.
type clientPlaces struct {
	key   netip.Prefix
	slots chan struct{}
	refs  int
	conns map[*countedConn]struct{}
}

// placesOf are a connection's places, n of them: its address's, then
// its /64's.
type placesOf struct {
	p [2]*clientPlaces
	n int
}

func newClientLimitListener(ln net.Listener, max int, wait time.Duration, refused func(netip.Addr)) net.Listener {
	if max <= 0 {
		return ln
	}
	l := &clientLimitListener{handoff: newHandoff(ln), max: max, maxWaiting: clientQueue, wait: wait, refused: refused,
		places: map[netip.Prefix]*clientPlaces{}}
	go l.acceptLoop(l.vet)
	return l
}

// vet passes c on when it is no IP connection, refuses it when a level
// of its source has all its places taken and its queue full, else admits
// it.
func (l *clientLimitListener) vet(c net.Conn) {
	ap, perr := netip.ParseAddrPort(c.RemoteAddr().String())
	if perr != nil {
		l.deliver(c) // not an IP connection: not counted
		return
	}
	addr := ap.Addr().Unmap()
	ls, n := source.Levels(addr, l.max)
	var ps placesOf
	l.placesMu.Lock()
	full := false
	for _, lv := range ls[:n] {
		if p := l.places[lv.Key]; p != nil && p.refs >= lv.Bound+l.maxWaiting {
			full = true
		}
	}
	if !full {
		for i, lv := range ls[:n] {
			p := l.places[lv.Key]
			if p == nil {
				p = &clientPlaces{key: lv.Key, slots: make(chan struct{}, lv.Bound), conns: map[*countedConn]struct{}{}}
				l.places[lv.Key] = p
			}
			p.refs++
			ps.p[i] = p
		}
		ps.n = n
	}
	l.placesMu.Unlock()
	if full {
		l.refuse(c, addr)
		return
	}
	go l.admit(c, addr, ps)
}

// admit waits for a place of each of ps, then passes c on. At a level's
// bound, the level's connection idle longest (a keep-alive connection
// between requests) is closed to make way: behind a NAT, many machines
// share an address, and idle connections must not keep the next machine
// waiting. The wait for all levels together is at most l.wait.
func (l *clientLimitListener) admit(c net.Conn, addr netip.Addr, ps placesOf) {
	var t *time.Timer
	for i, p := range ps.p[:ps.n] {
		select {
		case p.slots <- struct{}{}:
			continue
		default:
			l.closeIdle(p)
		}
		if t == nil {
			t = time.NewTimer(l.wait)
			defer t.Stop()
		}
		select {
		case p.slots <- struct{}{}:
		case <-t.C:
			l.giveBack(ps, i)
			l.refuse(c, addr)
			return
		case <-l.done:
			l.giveBack(ps, i)
			c.Close()
			return
		}
	}
	l.deliver(l.counted(c, ps))
}

// counted is c holding a place of each of ps.
func (l *clientLimitListener) counted(c net.Conn, ps placesOf) *countedConn {
	cc := &countedConn{Conn: c}
	cc.release = func() {
		l.placesMu.Lock()
		for _, p := range ps.p[:ps.n] {
			delete(p.conns, cc)
		}
		l.placesMu.Unlock()
		l.giveBack(ps, ps.n)
	}
	l.placesMu.Lock()
	for _, p := range ps.p[:ps.n] {
		p.conns[cc] = struct{}{}
	}
	l.placesMu.Unlock()
	return cc
}

// giveBack gives back the places of the first taken levels of ps, and
// the references of all of them.
func (l *clientLimitListener) giveBack(ps placesOf, taken int) {
	for _, p := range ps.p[:taken] {
		<-p.slots
	}
	l.placesMu.Lock()
	defer l.placesMu.Unlock()
	for _, p := range ps.p[:ps.n] {
		if p.refs--; p.refs == 0 {
			delete(l.places, p.key)
		}
	}
}

// closeIdle closes p's connection idle longest, if one is idle.
func (l *clientLimitListener) closeIdle(p *clientPlaces) {
	l.placesMu.Lock()
	var oldest *countedConn
	for c := range p.conns {
		if since := c.idleSince.Load(); since != 0 && (oldest == nil || since < oldest.idleSince.Load()) {
			oldest = c
		}
	}
	l.placesMu.Unlock()
	if oldest != nil {
		oldest.Close()
	}
}

// ConnState is the window's [http.Server.ConnState]: it marks the
// connections idle between requests, for closeIdle.
func (l *clientLimitListener) ConnState(c net.Conn, st http.ConnState) {
	cc := countedOf(c)
	if cc == nil {
		return
	}
	switch st {
	case http.StateIdle:
		cc.idleSince.Store(time.Now().UnixNano())
	default:
		cc.idleSince.Store(0)
	}
}

// countedOf finds the countedConn under the wrappers of the sniffing
// listener and TLS, or nil.
func countedOf(c net.Conn) *countedConn {
	for range 4 {
		switch v := c.(type) {
		case *countedConn:
			return v
		case *peekedConn:
			c = v.Conn
		case interface{ NetConn() net.Conn }:
			c = v.NetConn()
		default:
			return nil
		}
	}
	return nil
}

func (l *clientLimitListener) refuse(c net.Conn, addr netip.Addr) {
	c.Close()
	if l.refused != nil {
		l.refused(addr)
	}
}

// countedConn gives its client's place back when it closes.
type countedConn struct {
	net.Conn
	once    sync.Once
	release func()
	// idleSince is when the connection went idle between two requests
	// (UnixNano), 0 while it is new or serving one.
	idleSince atomic.Int64
}

func (c *countedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}

// ReadFrom keeps the connection's own ReadFrom (sendfile for TCP).
func (c *countedConn) ReadFrom(r io.Reader) (int64, error) {
	return io.Copy(c.Conn, r)
}

// CloseWrite half-closes a TCP connection, as http.Server does before
// closing one it refused.
func (c *countedConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return errors.ErrUnsupported
}
