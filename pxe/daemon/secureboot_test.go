package daemon_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/netip"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/plasmactl/plasma-node/internal/regularfile"
	"github.com/plasmactl/plasma-node/pxe"
	"github.com/plasmactl/plasma-node/pxe/apitoken"
	"github.com/plasmactl/plasma-node/pxe/bootassets"
	"github.com/plasmactl/plasma-node/pxe/client"
	"github.com/plasmactl/plasma-node/pxe/dhcpserver"
	"github.com/plasmactl/plasma-node/pxe/proxydhcp"
	"github.com/plasmactl/plasma-node/pxe/tftp"
	"github.com/plasmactl/plasma-node/pxe/window"
)

// netbootWindow is the daemon's window settings with proxy-DHCP and TFTP
// on loopback sockets (fresh ones for each daemon start: a window closes
// them) and the release of state, which carries a (fake) Secure Boot
// chain where prepare stages it.
func netbootWindow(t *testing.T, state string) pxe.Config {
	t.Helper()
	const rel = "9.0-1"
	dir := filepath.Join(state, bootassets.AssetsDir, rel)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{proxydhcp.ShimBinary, proxydhcp.GrubBinary} {
		if err := os.WriteFile(filepath.Join(dir, n), []byte("MZ "+n), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ipxe := t.TempDir()
	if err := os.WriteFile(filepath.Join(ipxe, proxydhcp.SNPOnlyBinary), []byte("iPXE"), 0o644); err != nil {
		t.Fatal(err)
	}
	dc, err := dhcpserver.Listen("lo", 0)
	if err != nil {
		t.Skipf("cannot bind a UDP socket to lo (needs root): %v", err)
	}
	pc, err := dhcpserver.Listen("lo", 0)
	if err != nil {
		t.Fatal(err)
	}
	tc, err := tftp.Listen(context.Background(), "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return pxe.Config{HTTPAddr: "127.0.0.1:0", DHCPInterface: "lo", ServerIP: netip.MustParseAddr("127.0.0.1"), DHCPConn: dc, PXEConn: pc, TFTPConn: tc,
		IPXEDir: ipxe, Release: rel}
}

// TestSecureBootWindowThroughTheAPI: PUT /window with secure_boot opens
// a Secure Boot window (its chain staged into the TFTP root), GET /window
// reports it, the daemon's record keeps it and a restart reopens the
// window with Secure Boot again; a window opened without it is not
// Secure Boot, and a daemon that cannot offer the chain (no DHCP
// interface) refuses secure_boot with 400 and opens nothing.
func TestSecureBootWindowThroughTheAPI(t *testing.T) {
	state := t.TempDir()
	ctx := context.Background()
	r := startWith(t, state, netbootWindow(t, state))
	c := adminClient(t, state, r)
	w, err := c.OpenWindowWith(ctx, time.Minute, client.WindowOptions{SecureBoot: true})
	if err != nil || !w.Open || !w.Daemon || !w.SecureBoot {
		t.Fatalf("open with secure_boot: %+v %v", w, err)
	}
	if w, err := c.Window(ctx); err != nil || !w.Open || !w.SecureBoot {
		t.Errorf("GET window: %+v %v; want open with secure_boot", w, err)
	}
	shim := filepath.Join(state, pxe.TFTPDirName, proxydhcp.ShimBinary)
	if _, err := os.Stat(shim); err != nil {
		t.Errorf("the chain is not in the TFTP root: %v", err)
	}
	recPath := filepath.Join(state, apitoken.DirName, window.FileName)
	readRec := func() (rec struct {
		SecureBoot bool `json:"secure_boot"`
	}) {
		t.Helper()
		data, err := regularfile.Read(recPath, 64<<10)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(data, &rec); err != nil {
			t.Fatal(err)
		}
		return rec
	}
	if !readRec().SecureBoot {
		t.Errorf("the daemon's record lost secure_boot")
	}
	r.stop()
	os.Remove(shim) // the reopened window stages it again

	r = startWith(t, state, netbootWindow(t, state))
	c = adminClient(t, state, r)
	if w, err := c.Window(ctx); err != nil || !w.Open || !w.Daemon || !w.SecureBoot {
		t.Fatalf("after restart: %+v %v; want the daemon's Secure Boot window", w, err)
	}
	if _, err := os.Stat(shim); err != nil {
		t.Errorf("the reopened window did not stage the chain: %v", err)
	}
	if err := c.CloseWindow(ctx); err != nil {
		t.Fatal(err)
	}

	r.stop()

	// Opened without it, the window is plain (fresh sockets: a window
	// closes those it was given).
	r = startWith(t, state, netbootWindow(t, state))
	c = adminClient(t, state, r)
	w, err = c.OpenWindow(ctx, time.Minute)
	if err != nil || !w.Open || w.SecureBoot {
		t.Errorf("open without secure_boot: %+v %v; want a plain window", w, err)
	}
	if readRec().SecureBoot {
		t.Errorf("a plain window's record says secure_boot")
	}
	if err := c.CloseWindow(ctx); err != nil {
		t.Fatal(err)
	}
	r.stop()

	// A daemon without a DHCP interface cannot offer the chain.
	state = t.TempDir()
	r = start(t, state)
	c = adminClient(t, state, r)
	_, err = c.OpenWindowWith(ctx, time.Minute, client.WindowOptions{SecureBoot: true})
	var ae *client.Error
	if !errors.As(err, &ae) || ae.Status != 400 {
		t.Errorf("secure_boot without a DHCP interface: %v; want 400", err)
	}
	if w, err := c.Window(ctx); err != nil || w.Open {
		t.Errorf("after the refusal: %+v %v; want closed", w, err)
	}
	if _, err := os.Stat(filepath.Join(state, apitoken.DirName, window.FileName)); err == nil {
		t.Errorf("a refused open left a record")
	}
}
