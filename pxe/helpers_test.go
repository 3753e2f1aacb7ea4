package pxe

import (
	"bytes"
	"context"
	"flag"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/insomniacslk/dhcp/dhcpv4"
	"github.com/insomniacslk/dhcp/iana"

	"github.com/plasmactl/plasma-node/pxe/backend/regbackend"
	"github.com/plasmactl/plasma-node/pxe/dhcpserver"
	"github.com/plasmactl/plasma-node/pxe/proxydhcp"
	"github.com/plasmactl/plasma-node/pxe/store"
)

// Test helpers for the window's proxy-DHCP and TFTP servers; packages
// proxydhcp, dhcpserver and tftp test them in depth.

var update = flag.Bool("update", false, "rewrite golden files")

// needTool returns the path of a command a test needs. It skips the test
// when the command is missing, or fails it under PLASMA_E2E=1.
func needTool(t testing.TB, name, pkg string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("PLASMA_E2E") == "1" {
			t.Fatalf("%s not found (Debian package %s); PLASMA_E2E=1 needs it", name, pkg)
		}
		t.Skipf("%s not found (Debian package %s)", name, pkg)
	}
	return p
}

func skipOrFail(t *testing.T, format string, args ...any) {
	t.Helper()
	if os.Getenv("PLASMA_E2E") == "1" {
		t.Fatalf(format, args...)
	}
	t.Skipf(format, args...)
}

var (
	testServerIP = netip.MustParseAddr("192.0.2.10")
	testMAC      = net.HardwareAddr{0x52, 0x54, 0x00, 0x12, 0x34, 0x56}
	uefiPXE      = []dhcpv4.Modifier{class("PXEClient:Arch:00007:UNDI:003016"), dhcpv4.WithOption(dhcpv4.OptClientArch(iana.EFI_X86_64))}
)

func testProxyConfig() proxydhcp.Config {
	return proxydhcp.Config{ServerIP: testServerIP, Boot: proxydhcp.BootConfig{
		HTTPBase:  "http://192.0.2.10:8090/ipxe/",
		ScriptURL: "http://192.0.2.10:8090/boot.ipxe",
	}}
}

func allowOnly(macs ...net.HardwareAddr) func(net.HardwareAddr) bool {
	return func(m net.HardwareAddr) bool {
		for _, a := range macs {
			if bytes.Equal(a, m) {
				return true
			}
		}
		return false
	}
}

func class(c string) dhcpv4.Modifier { return dhcpv4.WithOption(dhcpv4.OptClassIdentifier(c)) }

func join(groups ...[]dhcpv4.Modifier) []dhcpv4.Modifier {
	var all []dhcpv4.Modifier
	for _, g := range groups {
		all = append(all, g...)
	}
	return all
}

// withXID is a request from testMAC with the transaction id 0.0.0.xid, on
// the wire.
func withXID(t *testing.T, xid byte, typ dhcpv4.MessageType, mods ...dhcpv4.Modifier) ([]byte, dhcpv4.TransactionID) {
	t.Helper()
	id := dhcpv4.TransactionID{0, 0, 0, xid}
	all := append([]dhcpv4.Modifier{dhcpv4.WithHwAddr(testMAC), dhcpv4.WithBroadcast(true)}, mods...)
	all = append(all, dhcpv4.WithTransactionID(id), dhcpv4.WithMessageType(typ))
	p, err := dhcpv4.New(all...)
	if err != nil {
		t.Fatal(err)
	}
	return p.ToBytes(), id
}

// loopbackConn opens a DHCP socket on an ephemeral port bound to lo.
func loopbackConn(t *testing.T) (net.PacketConn, *net.UDPAddr) {
	t.Helper()
	c, err := dhcpserver.Listen("lo", 0)
	if err != nil {
		skipOrFail(t, "cannot bind a UDP socket to lo: %v", err)
	}
	return c, &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: c.LocalAddr().(*net.UDPAddr).Port}
}

// tftpFixture is a TFTP root holding ipxe.efi.
type tftpFixture struct{ root string }

func newTFTPFixture(t *testing.T) *tftpFixture {
	t.Helper()
	root := filepath.Join(t.TempDir(), "tftp")
	if err := os.MkdirAll(root, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "ipxe.efi"), bytes.Repeat([]byte("iPXE"), 25000), 0o644); err != nil {
		t.Fatal(err)
	}
	return &tftpFixture{root: root}
}

// nodeProvisioner gives cfg node-provisioner's backend over the stores of
// cfg.StateDir (secrets in secretsDir) and, for a discovery window, their
// inbox, as node-provisioner serve wires a window; t closes it.
func nodeProvisioner(t testing.TB, cfg Config, secretsDir string) Config {
	t.Helper()
	stores, err := store.Open(t.Context(), cfg.StateDir, store.Options{SecretsDir: secretsDir})
	if err != nil {
		t.Fatal(err)
	}
	b, err := regbackend.Open(context.Background(), stores, regbackend.Options{StateDir: cfg.StateDir, Discover: cfg.Discover})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	cfg.Backend = b
	if cfg.Discover {
		if cfg.Inbox, err = stores.Discovered(); err != nil {
			t.Fatal(err)
		}
	}
	return cfg
}
