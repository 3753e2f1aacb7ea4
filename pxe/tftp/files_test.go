package tftp

import (
	"bytes"
	"context"
	"errors"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"sync"
	"testing"

	pintftp "github.com/pin/tftp/v3"
)

// TestServerFiles serves names the root lacks from Files: generated
// bytes, a file from elsewhere, a refusal in Files' words, and the root's
// own files for the names Files leaves alone.
func TestServerFiles(t *testing.T) {
	fx := newTFTPFixture(t)
	outside := filepath.Join(t.TempDir(), "kernel")
	os.WriteFile(outside, bytes.Repeat([]byte("k"), 5000), 0o644)
	conn, err := Listen(context.Background(), "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var peers []netip.AddrPort
	s := &Server{Root: fx.root, Conn: conn, Files: func(_ context.Context, name string, peer netip.AddrPort) ([]byte, *os.File, bool, error) {
		mu.Lock()
		peers = append(peers, peer)
		mu.Unlock()
		switch name {
		case "grub/machine/52:54:00:00:00:01.cfg":
			return []byte("set timeout=0\nexit\n"), nil, true, nil
		case "assets/r/linux26":
			f, err := os.Open(outside)
			return nil, f, true, err
		case "assets/r/refused":
			return nil, nil, true, errors.New("cannot decide the boot entry")
		}
		return nil, nil, false, nil
	}}
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- s.Serve(ctx) }()
	t.Cleanup(func() { cancel(); <-errc })
	addr := conn.LocalAddr().(*net.UDPAddr).String()
	get := func(name string) ([]byte, error) {
		c, err := pintftp.NewClient(addr)
		if err != nil {
			t.Fatal(err)
		}
		wt, err := c.Receive(name, "octet")
		if err != nil {
			return nil, err
		}
		var b bytes.Buffer
		_, err = wt.WriteTo(&b)
		return b.Bytes(), err
	}
	for name, want := range map[string][]byte{
		"grub/machine/52:54:00:00:00:01.cfg": []byte("set timeout=0\nexit\n"),
		"/assets/r/linux26":                  bytes.Repeat([]byte("k"), 5000),
		"ipxe.efi":                           fx.payload,
	} {
		got, err := get(name)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s: %d bytes, %v; want %d bytes", name, len(got), err, len(want))
		}
	}
	if _, err := get("assets/r/refused"); err == nil || !bytes.Contains([]byte(err.Error()), []byte("cannot decide the boot entry")) {
		t.Errorf("refused: %v; want Files' words", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(peers) == 0 || !peers[0].Addr().IsLoopback() {
		t.Errorf("Files saw peers %v; want the client's address", peers)
	}
}
