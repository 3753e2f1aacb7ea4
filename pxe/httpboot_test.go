package pxe

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/plasmactl/plasma-node/pxe/dhcpserver"
	"github.com/plasmactl/plasma-node/pxe/proxydhcp"
	"github.com/plasmactl/plasma-node/pxe/tftp"
	"github.com/plasmactl/plasma-node/pxe/window"
)

// TestShimsHTTPBootFetchIsServed: shim, loaded by UEFI HTTP boot from
// <base>/ipxe/shimx64.efi, asks for grub at <base>/ipxe//grubx64.efi
// (the offered URL's folder joined to "\grubx64.efi"). It follows no
// redirect, so the window serves that path at once, 200 with a
// Content-Length (shim sizes its buffer by it); a doubled slash that
// would leave the boot files' folder is not served.
func TestShimsHTTPBootFetchIsServed(t *testing.T) {
	state := t.TempDir()
	stageChain(t, state, "9.0-1")
	dc, _ := loopbackConn(t)
	pc, _ := loopbackConn(t)
	tconn, err := tftp.Listen(context.Background(), "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	opened := make(chan *window.Record, 1)
	s, err := New(Config{OnOpen: func(w *window.Record) { opened <- w },
		StateDir: state, Backend: allowFunc(allowOnly(testMAC)), Listener: ln, TTL: time.Minute,
		IPXEDir: newTFTPFixture(t).root, Release: "9.0-1", SecureBoot: true,
		DHCPInterface: "lo", ServerIP: testServerIP, DHCPConn: dc, PXEConn: pc, TFTPConn: tconn,
	})
	if err != nil {
		t.Fatal(err)
	}
	s.tweakDHCP = func(d *dhcpserver.Server) { d.Interface = "" }
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- s.Serve(ctx) }()
	defer func() {
		cancel()
		if err := <-errc; err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("Serve: %v", err)
		}
	}()
	select {
	case <-opened:
	case err := <-errc:
		t.Fatalf("Serve: %v", err)
	}
	client := &http.Client{Timeout: 10 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	type got struct {
		Status        int
		Body          string
		ContentLength string
	}
	grub, shim := "MZ "+proxydhcp.GrubBinary, "MZ "+proxydhcp.ShimBinary
	tests := map[string]struct {
		path string
		want got
	}{
		"shim as offered":        {"/ipxe/shimx64.efi", got{200, shim, strconv.Itoa(len(shim))}},
		"grub as shim asks":      {"/ipxe//grubx64.efi", got{200, grub, strconv.Itoa(len(grub))}},
		"grub by its clean path": {"/ipxe/grubx64.efi", got{200, grub, strconv.Itoa(len(grub))}},
		"tripled slashes":        {"/ipxe///grubx64.efi", got{200, grub, strconv.Itoa(len(grub))}},
		// Redirected to its clean path as the mux does for any unclean
		// path (the 3xx code is the mux's; 300 stands for any).
		"out of the folder": {"/ipxe//../status", got{Status: 300}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			resp, err := client.Get("http://" + ln.Addr().String() + tc.path)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
			g := got{Status: resp.StatusCode}
			if g.Status >= 300 && g.Status < 400 {
				g.Status = 300
			}
			if resp.StatusCode == http.StatusOK {
				g.Body, g.ContentLength = string(b), resp.Header.Get("Content-Length")
			}
			if diff := cmp.Diff(tc.want, g); diff != "" {
				t.Errorf("GET %s (-want +got):\n%s", tc.path, diff)
			}
		})
	}
}
