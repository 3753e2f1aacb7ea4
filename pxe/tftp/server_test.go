package tftp

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"io/fs"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	pintftp "github.com/pin/tftp/v3"

	"github.com/plasmactl/plasma-node/pxe/events"
	"github.com/plasmactl/plasma-node/pxe/internal/pxetest"
)

// tftpFixture is a TFTP root with a few files and symlinks, and a secret
// beside it that no request may reach.
type tftpFixture struct {
	root    string
	payload []byte
	secret  string
}

func newTFTPFixture(t *testing.T) *tftpFixture {
	t.Helper()
	dir := t.TempDir()
	fx := &tftpFixture{root: filepath.Join(dir, "tftp"), secret: filepath.Join(dir, "secret")}
	// 100 000 bytes: not a multiple of 1468 or 512, so the last block is short.
	fx.payload = make([]byte, 100000)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range fx.payload {
		fx.payload[i] = byte(r.Uint32())
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(fx.root, "sub"), 0o755))
	must(os.WriteFile(filepath.Join(fx.root, "ipxe.efi"), fx.payload, 0o644))
	must(os.WriteFile(filepath.Join(fx.root, "sub", "a.txt"), []byte("in a folder\n"), 0o644))
	must(os.WriteFile(filepath.Join(fx.root, "empty"), nil, 0o644))
	must(os.WriteFile(fx.secret, []byte("SECRET"), 0o600))
	must(os.Symlink("ipxe.efi", filepath.Join(fx.root, "link-inside")))
	must(os.Symlink(fx.secret, filepath.Join(fx.root, "link-absolute")))
	must(os.Symlink("../secret", filepath.Join(fx.root, "link-relative")))
	must(os.Symlink("..", filepath.Join(fx.root, "link-parent")))
	return fx
}

// startTFTP serves fx on an ephemeral loopback port.
func startTFTP(t *testing.T, fx *tftpFixture, log *eventLog) (*net.UDPAddr, context.CancelFunc, chan error) {
	t.Helper()
	conn, err := Listen(context.Background(), "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{Root: fx.root, Conn: conn}
	if log != nil {
		s.OnEvent = log.add
	}
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- s.Serve(ctx) }()
	t.Cleanup(func() {
		cancel()
		<-errc
	})
	return conn.LocalAddr().(*net.UDPAddr), cancel, errc
}

// eventLog collects a server's events.
type eventLog struct {
	mu     sync.Mutex
	events []Event
}

func (l *eventLog) add(e Event) { l.mu.Lock(); l.events = append(l.events, e); l.mu.Unlock() }
func (l *eventLog) len() int    { l.mu.Lock(); defer l.mu.Unlock(); return len(l.events) }

// parseOACK reads "name\0value\0" pairs.
func parseOACK(body []byte) map[string]string {
	f := strings.Split(strings.TrimSuffix(string(body), "\x00"), "\x00")
	m := map[string]string{}
	for i := 0; i+1 < len(f); i += 2 {
		m[f[i]] = f[i+1]
	}
	return m
}

// tftpError is an ERROR packet's code and message.
type tftpError struct {
	Code    uint16
	Message string
}

func TestTFTPDownloadWithBlksizeAndTsize(t *testing.T) {
	fx := newTFTPFixture(t)
	var got eventLog
	addr, _, _ := startTFTP(t, fx, &got)

	t.Run("a raw client sees blksize 1468 and tsize negotiated", func(t *testing.T) {
		c := pxetest.NewTFTPClient(t)
		c.Request(pxetest.OpRRQ, addr, "ipxe.efi", "blksize", "1468", "tsize", "0")
		op, body, tid := c.Recv(2 * time.Second)
		if op != pxetest.OpOACK {
			t.Fatalf("first reply op %d %q, want OACK", op, body)
		}
		want := map[string]string{"blksize": "1468", "tsize": strconv.Itoa(len(fx.payload))}
		if diff := cmp.Diff(want, parseOACK(body)); diff != "" {
			t.Fatalf("OACK options (-want +got):\n%s", diff)
		}
		c.Ack(tid, 0)
		var got []byte
		for block := uint16(1); ; block++ {
			op, body, _ := c.Recv(2 * time.Second)
			if op != pxetest.OpDATA || binary.BigEndian.Uint16(body) != block {
				t.Fatalf("got op %d, want DATA block %d", op, block)
			}
			data := body[2:]
			if len(data) > 1468 {
				t.Fatalf("block %d is %d bytes, over the negotiated 1468", block, len(data))
			}
			got = append(got, data...)
			c.Ack(tid, block)
			if len(data) < 1468 {
				break
			}
		}
		if !bytes.Equal(got, fx.payload) {
			t.Fatalf("downloaded %d bytes that differ from the %d served", len(got), len(fx.payload))
		}
	})

	t.Run("the pin/tftp client downloads the same bytes", func(t *testing.T) {
		for _, name := range []string{"ipxe.efi", "/ipxe.efi", "link-inside"} {
			cl, err := pintftp.NewClient(addr.String())
			if err != nil {
				t.Fatal(err)
			}
			cl.SetBlockSize(1468)
			cl.RequestTSize(true)
			cl.SetTimeout(time.Second)
			wt, err := cl.Receive(name, "octet")
			if err != nil {
				t.Fatalf("receive %s: %v", name, err)
			}
			if n, ok := wt.(pintftp.IncomingTransfer).Size(); !ok || n != int64(len(fx.payload)) {
				t.Errorf("%s: tsize %d (sent %v), want %d", name, n, ok, len(fx.payload))
			}
			var buf bytes.Buffer
			if _, err := wt.WriteTo(&buf); err != nil {
				t.Fatalf("download %s: %v", name, err)
			}
			if !bytes.Equal(buf.Bytes(), fx.payload) {
				t.Errorf("%s: downloaded bytes differ", name)
			}
		}
	})

	t.Run("a file in a folder and an empty file download", func(t *testing.T) {
		for name, want := range map[string]string{"sub/a.txt": "in a folder\n", "empty": ""} {
			cl, _ := pintftp.NewClient(addr.String())
			cl.SetTimeout(time.Second)
			wt, err := cl.Receive(name, "octet")
			if err != nil {
				t.Fatalf("receive %s: %v", name, err)
			}
			var buf bytes.Buffer
			if _, err := wt.WriteTo(&buf); err != nil || buf.String() != want {
				t.Errorf("%s: got %q, %v; want %q", name, buf.String(), err, want)
			}
		}
	})

	// Events are raised after the last ACK; give the last one a moment.
	deadline := time.Now().Add(2 * time.Second)
	for got.len() < 6 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	got.mu.Lock()
	defer got.mu.Unlock()
	sent := 0
	for _, e := range got.events {
		if e.Kind == events.TFTP && e.File == "ipxe.efi" && e.Bytes == int64(len(fx.payload)) && e.Peer.Addr().String() == "127.0.0.1" {
			sent++
		}
	}
	if sent != 3 {
		t.Errorf("%d tftp-sent events for ipxe.efi with its size and peer, want 3 (raw, plain, leading slash): %v", sent, got.events)
	}
}

func TestTFTPRefusals(t *testing.T) {
	fx := newTFTPFixture(t)
	var got eventLog
	addr, _, _ := startTFTP(t, fx, &got)
	notFound := tftpError{1, "file not found"}
	leaves := tftpError{1, "access violation: name leaves the TFTP root or is not a clean relative path"}
	unreadable := tftpError{1, "access violation: file cannot be read from the TFTP root"}
	tests := map[string]struct {
		op   uint16
		name string
		want tftpError
	}{
		"a missing file is not found":                       {pxetest.OpRRQ, "nothing.efi", notFound},
		"dot-dot is refused":                                {pxetest.OpRRQ, "../secret", leaves},
		"dot-dot inside a path is refused":                  {pxetest.OpRRQ, "sub/../../secret", leaves},
		"a leading slash is the root, not the machine's /":  {pxetest.OpRRQ, "/etc/passwd", notFound},
		"a double leading slash is refused as absolute":     {pxetest.OpRRQ, "//etc/passwd", leaves},
		"an absolute path to the secret stays in the root":  {pxetest.OpRRQ, fx.secret, notFound},
		"a symlink to an absolute outside path is refused":  {pxetest.OpRRQ, "link-absolute", unreadable},
		"a symlink climbing out of the root is refused":     {pxetest.OpRRQ, "link-relative", unreadable},
		"a file behind a symlink to the parent is refused":  {pxetest.OpRRQ, "link-parent/secret", unreadable},
		"a folder is not a file":                            {pxetest.OpRRQ, "sub", tftpError{1, "access violation: not a regular file"}},
		"a control character is refused":                    {pxetest.OpRRQ, "ipxe\x01.efi", tftpError{1, "access violation: control character or NUL in name"}},
		"a backslash is refused":                            {pxetest.OpRRQ, `..\secret`, tftpError{1, `access violation: backslash in name, want '/' separators`}},
		"an over-long name is refused":                      {pxetest.OpRRQ, strings.Repeat("a", maxName+1), tftpError{1, "access violation: name longer than 255 bytes"}},
		"an empty name is refused":                          {pxetest.OpRRQ, "", leaves},
		"a write request is refused":                        {pxetest.OpWRQ, "new.efi", tftpError{1, "access violation: this TFTP server is read-only"}},
		"a write request over an existing file is refused":  {pxetest.OpWRQ, "ipxe.efi", tftpError{1, "access violation: this TFTP server is read-only"}},
		"a write request climbing out is refused read-only": {pxetest.OpWRQ, "../secret", tftpError{1, "access violation: this TFTP server is read-only"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			c := pxetest.NewTFTPClient(t)
			c.Request(tc.op, addr, tc.name, "tsize", "0")
			op, body, _ := c.Recv(2 * time.Second)
			if op != pxetest.OpERROR || len(body) < 3 {
				t.Fatalf("got op %d %q, want an ERROR packet", op, body)
			}
			got := tftpError{binary.BigEndian.Uint16(body), strings.TrimSuffix(string(body[2:]), "\x00")}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("error packet (-want +got):\n%s", diff)
			}
		})
	}
	if b, err := os.ReadFile(fx.secret); err != nil || string(b) != "SECRET" {
		t.Errorf("the secret changed: %q, %v", b, err)
	}
	if _, err := os.Stat(filepath.Join(fx.root, "new.efi")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a write request created a file: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(fx.root, "ipxe.efi")); !bytes.Equal(b, fx.payload) {
		t.Error("a write request changed ipxe.efi")
	}
	got.mu.Lock()
	defer got.mu.Unlock()
	if len(got.events) != len(tests) {
		t.Errorf("%d events, want one tftp-failed per refused request (%d)", len(got.events), len(tests))
	}
	for _, e := range got.events {
		if e.Kind != events.TFTPFailed || e.Reason == "" {
			t.Errorf("event %+v, want tftp-failed with a reason", e)
		}
	}
}

// A NUL ends the name on the wire (RFC 1350), so what follows it is the
// mode: it cannot smuggle a path, and never reaches the secret.
func TestTFTPNULEndsTheName(t *testing.T) {
	fx := newTFTPFixture(t)
	addr, _, _ := startTFTP(t, fx, nil)
	c := pxetest.NewTFTPClient(t)
	c.Request(pxetest.OpRRQ, addr, "sub/a.txt\x00../../secret")
	op, body, tid := c.Recv(2 * time.Second)
	if op == pxetest.OpDATA {
		c.Ack(tid, 1)
	}
	if bytes.Contains(body, []byte("SECRET")) {
		t.Fatal("a NUL-smuggled name reached the secret")
	}
	if op != pxetest.OpDATA || !bytes.HasSuffix(body, []byte("in a folder\n")) {
		t.Fatalf("got op %d %q, want the file named before the NUL", op, body)
	}
}

func TestServerStopsWithItsContext(t *testing.T) {
	fx := newTFTPFixture(t)
	addr, cancel, errc := startTFTP(t, fx, nil)
	cancel()
	select {
	case err := <-errc:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Serve = %v, want context.Canceled", err)
		}
		errc <- err // for the cleanup
	case <-time.After(5 * time.Second):
		t.Fatal("Serve did not stop with its context")
	}
	c := pxetest.NewTFTPClient(t)
	c.Request(pxetest.OpRRQ, addr, "ipxe.efi")
	if op, _, _ := c.Recv(300 * time.Millisecond); op != 0 {
		t.Fatalf("a stopped server answered with op %d", op)
	}
}

func TestServerEndsRunningTransfersOnStop(t *testing.T) {
	fx := newTFTPFixture(t)
	addr, cancel, errc := startTFTP(t, fx, nil)
	c := pxetest.NewTFTPClient(t)
	c.Request(pxetest.OpRRQ, addr, "ipxe.efi")
	op, _, tid := c.Recv(2 * time.Second)
	if op != pxetest.OpDATA {
		t.Fatalf("got op %d, want DATA block 1", op)
	}
	cancel()
	// Block 1 unacknowledged is resent until the ACK, then the next read
	// sees the context and the transfer ends with an error.
	var stopped sync.WaitGroup
	stopped.Go(func() {
		select {
		case err := <-errc:
			errc <- err
		case <-time.After(10 * time.Second):
			t.Error("Serve did not return after its transfer ended")
		}
	})
	c.Ack(tid, 1)
	for {
		op, body, _ := c.Recv(3 * time.Second)
		if op == pxetest.OpERROR {
			if !strings.Contains(string(body), errShutdown.Error()) {
				t.Errorf("error %q, want %q", body[2:], errShutdown)
			}
			break
		}
		if op == 0 {
			t.Fatal("the transfer neither ended nor went on")
		}
	}
	stopped.Wait()
}

func TestServerNeedsItsRoot(t *testing.T) {
	tests := map[string]struct {
		root string
		want error
	}{
		"a missing root is not found": {root: filepath.Join(t.TempDir(), "nope"), want: fs.ErrNotExist},
		"an empty root is invalid":    {root: "", want: ErrInvalidConfig},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			s := &Server{Root: tc.root, Addr: "127.0.0.1:0"}
			if err := s.Serve(context.Background()); !errors.Is(err, tc.want) {
				t.Fatalf("Serve = %v, want %v", err, tc.want)
			}
		})
	}
}

func TestServerListensOnAddr(t *testing.T) {
	fx := newTFTPFixture(t)
	port := pxetest.FreeUDPPort(t)
	s := &Server{Root: fx.root, Addr: "127.0.0.1:" + strconv.Itoa(port)}
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- s.Serve(ctx) }()
	defer func() { cancel(); <-errc }()
	c := pxetest.NewTFTPClient(t)
	for i := 0; i < 20; i++ {
		c.Request(pxetest.OpRRQ, &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: port}, "sub/a.txt")
		if op, body, tid := c.Recv(100 * time.Millisecond); op == pxetest.OpDATA {
			c.Ack(tid, 1)
			if !bytes.HasSuffix(body, []byte("in a folder\n")) {
				t.Fatalf("got %q", body)
			}
			return
		}
	}
	t.Fatal("no DATA from the server listening on its Addr")
}

func TestCheckName(t *testing.T) {
	tests := map[string]struct {
		in, want string
		ok       bool
	}{
		"a plain name is itself":              {"ipxe.efi", "ipxe.efi", true},
		"one leading slash is dropped":        {"/ipxe.efi", "ipxe.efi", true},
		"a folder path is kept":               {"efi/boot/bootx64.efi", "efi/boot/bootx64.efi", true},
		"two leading slashes are refused":     {"//ipxe.efi", "", false},
		"a dot is refused":                    {".", "", false},
		"a slash alone is refused":            {"/", "", false},
		"a trailing slash is refused":         {"sub/", "", false},
		"an empty element is refused":         {"sub//a.txt", "", false},
		"a dot element is refused":            {"./ipxe.efi", "", false},
		"a NUL is refused":                    {"ipxe\x00.efi", "", false},
		"DEL is refused":                      {"ipxe\x7f.efi", "", false},
		"255 bytes are accepted":              {strings.Repeat("a", 255), strings.Repeat("a", 255), true},
		"a non-ASCII name is a name like any": {"é.efi", "é.efi", true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := checkName(tc.in)
			if got != tc.want || (err == nil) != tc.ok {
				t.Errorf("checkName(%q) = %q, %v; want %q, ok %v", tc.in, got, err, tc.want, tc.ok)
			}
		})
	}
}

func ExampleServer() {
	root, _ := os.MkdirTemp("", "tftp-example")
	defer os.RemoveAll(root)
	os.WriteFile(filepath.Join(root, "undionly.kpxe"), []byte("iPXE"), 0o644)

	conn, _ := Listen(context.Background(), "127.0.0.1:0")
	ctx, stop := context.WithCancel(context.Background())
	s := &Server{Root: root, Conn: conn}
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx) }()

	cl, _ := pintftp.NewClient(conn.LocalAddr().String())
	wt, err := cl.Receive("undionly.kpxe", "octet")
	if err != nil {
		panic(err)
	}
	var buf bytes.Buffer
	wt.WriteTo(&buf)
	stop()
	io.WriteString(os.Stdout, buf.String()+"\n")
	_ = <-done
	// Output: iPXE
}

func FuzzTFTPName(f *testing.F) {
	for _, s := range []string{"ipxe.efi", "/ipxe.efi", "../x", "a/../../b", "//etc/passwd", `..\x`, "a\x00b", "", ".", "sub/", strings.Repeat("a", 300)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		rel, err := checkName(name)
		if err != nil {
			if rel != "" {
				t.Fatalf("refused %q but returned %q", name, rel)
			}
			return
		}
		if !filepath.IsLocal(rel) || !fs.ValidPath(rel) || hasDotDot(rel) || len(rel) > maxName {
			t.Fatalf("accepted %q as %q, which may leave the root", name, rel)
		}
		if strings.ContainsAny(rel, "\x00\\") {
			t.Fatalf("accepted %q with a NUL or backslash", name)
		}
	})
}

func hasDotDot(p string) bool {
	for _, e := range strings.Split(p, "/") {
		if e == ".." {
			return true
		}
	}
	return false
}

// TestAClientGoneEndsItsTransferAtOnce: a transfer's socket is connected
// to its client, so a client whose port closed (ICMP port unreachable)
// ends its transfer at the first block sent again, as "no
// acknowledgement from the client", not after all its retries (6 s).
func TestAClientGoneEndsItsTransferAtOnce(t *testing.T) {
	fx := newTFTPFixture(t)
	var got eventLog
	addr, _, _ := startTFTP(t, fx, &got)
	c := pxetest.NewTFTPClient(t)
	c.Request(pxetest.OpRRQ, addr, "ipxe.efi")
	if op, _, _ := c.Recv(2 * time.Second); op != pxetest.OpDATA {
		t.Fatalf("got op %d, want DATA block 1", op)
	}
	gone := time.Now()
	c.Close()
	for got.len() == 0 {
		if time.Since(gone) > time.Duration(Retries)*DefaultTimeout/2 {
			t.Fatal("no event for the transfer of a client gone")
		}
		time.Sleep(20 * time.Millisecond)
	}
	got.mu.Lock()
	defer got.mu.Unlock()
	if e := got.events[0]; e.Kind != events.TFTPFailed || !strings.Contains(e.Reason, errClientGone.Error()) {
		t.Errorf("event %s %q, want %s %q", e.Kind, e.Reason, events.TFTPFailed, errClientGone)
	}
}
