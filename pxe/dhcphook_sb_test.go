package pxe

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/plasmactl/plasma-node/pxe/bootassets"
	"github.com/plasmactl/plasma-node/pxe/dhcpserver"
	"github.com/plasmactl/plasma-node/pxe/proxydhcp"
	"github.com/plasmactl/plasma-node/pxe/tftp"
	"github.com/plasmactl/plasma-node/pxe/window"
)

// stageChain puts a (fake) Secure Boot chain into release rel of state,
// where prepare stages it.
func stageChain(t *testing.T, state, rel string) {
	t.Helper()
	dir := filepath.Join(state, bootassets.AssetsDir, rel)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{proxydhcp.ShimBinary, proxydhcp.GrubBinary} {
		if err := os.WriteFile(filepath.Join(dir, n), []byte("MZ "+n), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestDHCPHookGetsTheWindowsBootFile: the DHCP hook, for sites whose own
// DHCP server names the boot file, is told the window's server IP as
// PXE_NEXT_SERVER and, for a Secure Boot window, shim as PXE_BOOT_FILE
// (iPXE's binary otherwise), on enable and again on disable; the window's
// record says whether it is Secure Boot.
func TestDHCPHookGetsTheWindowsBootFile(t *testing.T) {
	tests := map[string]struct {
		secureBoot bool
		bootFile   string
		want       string
	}{
		"secure boot window offers shim":  {secureBoot: true, want: proxydhcp.ShimBinary},
		"plain window offers snponly":     {want: proxydhcp.SNPOnlyBinary},
		"plain window with ipxe.efi":      {bootFile: proxydhcp.UEFIBinary, want: proxydhcp.UEFIBinary},
		"secure boot beats the boot file": {secureBoot: true, bootFile: proxydhcp.UEFIBinary, want: proxydhcp.ShimBinary},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
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
			hookLog := filepath.Join(t.TempDir(), "hook.log")
			opened := make(chan *window.Record, 1)
			s, err := New(Config{OnOpen: func(w *window.Record) { opened <- w },
				StateDir: state, Backend: allowFunc(allowOnly(testMAC)), Listener: ln, TTL: time.Minute,
				IPXEDir: newTFTPFixture(t).root, Release: "9.0-1", SecureBoot: tc.secureBoot, BootFile: tc.bootFile,
				DHCPInterface: "lo", ServerIP: testServerIP, DHCPConn: dc, PXEConn: pc, TFTPConn: tconn,
				DHCPHook: `echo "$PXE_ACTION $PXE_NEXT_SERVER $PXE_BOOT_FILE $PXE_SCRIPT_URL" >> ` + hookLog,
			})
			if err != nil {
				t.Fatal(err)
			}
			s.tweakDHCP = func(d *dhcpserver.Server) { d.Interface = "" }
			ctx, cancel := context.WithCancel(context.Background())
			errc := make(chan error, 1)
			go func() { errc <- s.Serve(ctx) }()
			select {
			case w := <-opened:
				if w.SecureBoot != tc.secureBoot {
					t.Errorf("OnOpen window: secure boot %v, want %v", w.SecureBoot, tc.secureBoot)
				}
			case err := <-errc:
				t.Fatalf("Serve: %v", err)
			}
			rec, err := window.Read(state)
			if err != nil || rec.SecureBoot != tc.secureBoot {
				t.Errorf("window record: %+v %v; want secure_boot %v", rec, err, tc.secureBoot)
			}
			cancel()
			if err := <-errc; err != nil && !errors.Is(err, context.Canceled) {
				t.Fatalf("Serve: %v", err)
			}
			data, err := os.ReadFile(hookLog)
			if err != nil {
				t.Fatal(err)
			}
			script := "http://" + testServerIP.String() + ":" + portOf(t, ln.Addr()) + "/boot.ipxe"
			want := []string{
				"enable " + testServerIP.String() + " " + tc.want + " " + script,
				"disable " + testServerIP.String() + " " + tc.want + " " + script,
			}
			if diff := cmp.Diff(want, strings.Split(strings.TrimSpace(string(data)), "\n")); diff != "" {
				t.Errorf("hook calls (-want +got):\n%s", diff)
			}
		})
	}
}

func portOf(t *testing.T, a net.Addr) string {
	t.Helper()
	_, p, err := net.SplitHostPort(a.String())
	if err != nil {
		t.Fatal(err)
	}
	return p
}
