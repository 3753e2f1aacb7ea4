package pxe

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// smallBuffers shrinks each accepted connection's send buffer, so that a
// client that stops reading stalls the server's writes at once.
type smallBuffers struct{ net.Listener }

func (l smallBuffers) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if tc, ok := c.(*net.TCPConn); ok {
		tc.SetWriteBuffer(32 << 10)
	}
	return c, err
}

// startLimited serves routes with limits on a listener with small send
// buffers; it returns the server's address.
func startLimited(t *testing.T, limits HTTPLimits, routes map[string]http.Handler) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(Config{Listener: smallBuffers{ln}, HTTPLimits: limits, Routes: routes})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { s.Serve(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	<-s.Ready()
	return s.Addr().String()
}

// dial connects from local (an address of 127/8) with a small receive
// buffer.
func dial(t *testing.T, local, addr string) net.Conn {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(local)}, Control: func(_, _ string, rc syscall.RawConn) error {
		return rc.Control(func(fd uintptr) { syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 16<<10) })
	}}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// servedMeanwhile checks that another client gets /ok while one stalls.
func servedMeanwhile(t *testing.T, addr string) {
	t.Helper()
	c := dial(t, "127.0.0.3", addr)
	fmt.Fprintf(c, "GET /ok HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("another client was not served while one stalled: %v %v", resp, err)
	}
}

// cutWithin waits for the server to close c, failing when it is still
// open after limit; it returns what was read.
func cutWithin(t *testing.T, c net.Conn, limit time.Duration) int64 {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(limit))
	n, err := io.Copy(io.Discard, c)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("the connection was still open after %v (%d bytes read)", limit, n)
	}
	return n
}

var okRoute = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok") })

func TestAnIdleKeepAliveConnectionIsClosed(t *testing.T) {
	addr := startLimited(t, HTTPLimits{IdleTimeout: 300 * time.Millisecond}, map[string]http.Handler{"/ok": okRoute})
	c := dial(t, "127.0.0.1", addr)
	fmt.Fprintf(c, "GET /ok HTTP/1.1\r\nHost: x\r\n\r\n")
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	start := time.Now()
	servedMeanwhile(t, addr)
	c.SetReadDeadline(time.Now().Add(3 * time.Second))
	if _, err := br.ReadByte(); !errors.Is(err, io.EOF) {
		t.Fatalf("idle connection: %v, want EOF within 3s", err)
	}
	if d := time.Since(start); d < 250*time.Millisecond {
		t.Errorf("closed after %v, before its idle time", d)
	}
}

func TestAPostThatStopsSendingIsCut(t *testing.T) {
	got := make(chan error, 1)
	post := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, err := io.ReadAll(r.Body)
		got <- err
	})
	addr := startLimited(t, HTTPLimits{BodyTimeout: 300 * time.Millisecond}, map[string]http.Handler{"/ok": okRoute, "POST /answer": post})
	c := dial(t, "127.0.0.1", addr)
	fmt.Fprintf(c, "POST /answer HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n0123456789")
	servedMeanwhile(t, addr)
	select {
	case err := <-got:
		if err == nil {
			t.Error("the handler read a body that was never sent")
		}
	case <-time.After(3 * time.Second):
		t.Fatal("the handler still waits for the body after 3s")
	}
	cutWithin(t, c, 3*time.Second)
}

// bigFile is a file of size bytes for ServeContent.
func bigFile(t *testing.T, size int) http.Handler {
	p := filepath.Join(t.TempDir(), "big")
	if err := os.WriteFile(p, []byte(strings.Repeat("x", size)), 0o644); err != nil {
		t.Fatal(err)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f, err := os.Open(p)
		if err != nil {
			t.Error(err)
			return
		}
		defer f.Close()
		fi, _ := f.Stat()
		http.ServeContent(w, r, "big", fi.ModTime(), f)
	})
}

func TestAClientThatStopsReadingIsCutAndASlowOneIsNot(t *testing.T) {
	const size = 4 << 20
	addr := startLimited(t, HTTPLimits{WriteTimeout: time.Second}, map[string]http.Handler{"/ok": okRoute, "/big": bigFile(t, size)})

	stalled := dial(t, "127.0.0.1", addr)
	fmt.Fprintf(stalled, "GET /big HTTP/1.1\r\nHost: x\r\n\r\n")
	slow := dial(t, "127.0.0.2", addr)
	fmt.Fprintf(slow, "GET /big HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
	servedMeanwhile(t, addr)

	// The slow client reads 32 KiB every 10 ms: all of it takes longer
	// than the write timeout, each chunk far less.
	start := time.Now()
	var n int64
	buf := make([]byte, 32<<10)
	slow.SetReadDeadline(time.Now().Add(30 * time.Second))
	for {
		m, err := slow.Read(buf)
		n += int64(m)
		if err != nil {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if n < size {
		t.Errorf("the slow client got %d bytes in %v, want the whole %d", n, time.Since(start), size)
	}
	if time.Since(start) < 2*time.Second {
		t.Logf("the slow client took only %v, less than twice the write timeout", time.Since(start))
	}

	time.Sleep(2 * time.Second) // the stalled client has not read for 2 write timeouts
	if n := cutWithin(t, stalled, 5*time.Second); n >= size {
		t.Errorf("the stalled client got all %d bytes after it resumed; want it cut", n)
	}
}

// get reads one response on c, within limit.
func get(c net.Conn, limit time.Duration) (*http.Response, error) {
	c.SetReadDeadline(time.Now().Add(limit))
	return http.ReadResponse(bufio.NewReader(c), nil)
}

func TestConnectionsPerClientAreCapped(t *testing.T) {
	release := make(chan struct{})
	hold := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
		io.WriteString(w, "held")
	})
	addr := startLimited(t, HTTPLimits{MaxConnsPerClient: 3, QueueWait: 2 * time.Second}, map[string]http.Handler{"/ok": okRoute, "/hold": hold})
	t.Cleanup(func() { close(release) })
	// Three connections busy with a request: none is idle.
	var held []net.Conn
	for range 3 {
		c := dial(t, "127.0.0.1", addr)
		fmt.Fprintf(c, "GET /hold HTTP/1.1\r\nHost: x\r\n\r\n")
		held = append(held, c)
	}
	time.Sleep(100 * time.Millisecond)
	// A fourth connection waits for a place, and gets one when a
	// connection of its client closes.
	waiting := dial(t, "127.0.0.1", addr)
	fmt.Fprintf(waiting, "GET /ok HTTP/1.1\r\nHost: x\r\n\r\n")
	if _, err := get(waiting, 300*time.Millisecond); err == nil {
		t.Fatal("a fourth connection of one client was served while three were busy")
	}
	servedMeanwhile(t, addr)
	held[0].Close()
	if resp, err := get(waiting, 5*time.Second); err != nil || resp.StatusCode != 200 {
		t.Fatalf("the waiting connection after a place came free: %v %v", resp, err)
	}
	fmt.Fprintf(waiting, "GET /hold HTTP/1.1\r\nHost: x\r\n\r\n") // busy again
	time.Sleep(100 * time.Millisecond)
	// One that finds no place within the wait is closed unserved.
	over := dial(t, "127.0.0.1", addr)
	fmt.Fprintf(over, "GET /ok HTTP/1.1\r\nHost: x\r\n\r\n")
	start := time.Now()
	if n := cutWithin(t, over, 5*time.Second); n != 0 {
		t.Errorf("a connection over the cap got %d bytes, want none", n)
	}
	if d := time.Since(start); d < 1500*time.Millisecond {
		t.Errorf("closed after %v, before its wait of 2s", d)
	}
}

// TestIdleConnectionsMakeWayAtTheBound (issue 27): idle keep-alive
// connections no longer keep a new connection of their address waiting
// (behind a NAT, more than 64 machines waited): at the bound, the one
// idle longest is closed and the new one served at once.
func TestIdleConnectionsMakeWayAtTheBound(t *testing.T) {
	addr := startLimited(t, HTTPLimits{MaxConnsPerClient: 3, QueueWait: 5 * time.Second}, map[string]http.Handler{"/ok": okRoute})
	var idle []net.Conn
	for range 3 {
		c := dial(t, "127.0.0.1", addr)
		fmt.Fprintf(c, "GET /ok HTTP/1.1\r\nHost: x\r\n\r\n")
		if _, err := get(c, 5*time.Second); err != nil {
			t.Fatal(err)
		}
		idle = append(idle, c)
		time.Sleep(20 * time.Millisecond)
	}
	next := dial(t, "127.0.0.1", addr)
	fmt.Fprintf(next, "GET /ok HTTP/1.1\r\nHost: x\r\n\r\n")
	start := time.Now()
	if resp, err := get(next, 5*time.Second); err != nil || resp.StatusCode != 200 {
		t.Fatalf("a fourth connection beside three idle ones: %v %v", resp, err)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("the fourth connection waited %v for a place three idle connections held", d)
	}
	// The first (idle longest) was closed; the others are still served.
	if n := cutWithin(t, idle[0], 2*time.Second); n != 0 {
		t.Errorf("the connection idle longest read %d bytes, want it closed", n)
	}
	for i, c := range idle[1:] {
		fmt.Fprintf(c, "GET /ok HTTP/1.1\r\nHost: x\r\n\r\n")
		if resp, err := get(c, 5*time.Second); err != nil || resp.StatusCode != 200 {
			t.Errorf("idle connection %d after the fourth came: %v %v", i+2, resp, err)
		}
	}
}

// chunkRecorder is a ResponseWriter whose ReadFrom records each call's
// size, as sendfile would be called.
type chunkRecorder struct {
	http.ResponseWriter
	sizes []int64
}

func (c *chunkRecorder) ReadFrom(r io.Reader) (int64, error) {
	n, err := io.Copy(io.Discard, r)
	c.sizes = append(c.sizes, n)
	return n, err
}

func (c *chunkRecorder) SetWriteDeadline(time.Time) error { return nil }

// TestSendfileChunksGrowForAFastClient: a response sent by ReadFrom
// (sendfile) to a client that takes each chunk at once goes in chunks
// that double from 64 KiB to 4 MiB, each under its own deadline, not in
// 64 KiB pieces (16 384 system calls and deadlines for each GiB).
func TestSendfileChunksGrowForAFastClient(t *testing.T) {
	rec := &chunkRecorder{ResponseWriter: httptest.NewRecorder()}
	w := &deadlineWriter{ResponseWriter: rec, rc: http.NewResponseController(rec), d: 30 * time.Second}
	const size = 64 << 20
	n, err := w.ReadFrom(io.LimitReader(zeros{}, size))
	if err != nil || n != size {
		t.Fatalf("ReadFrom = %d, %v; want %d", n, err, size)
	}
	want := []int64{64 << 10, 128 << 10, 256 << 10, 512 << 10, 1 << 20, 2 << 20}
	left := int64(size - (4<<20 - 64<<10))
	for ; left > 0; left -= 4 << 20 {
		want = append(want, min(left, 4<<20))
	}
	if diff := cmp.Diff(want, rec.sizes); diff != "" {
		t.Errorf("chunk sizes (-want +got):\n%s", diff)
	}
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) { clear(p); return len(p), nil }
