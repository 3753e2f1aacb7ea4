package pxe

import (
	"bytes"
	"encoding/binary"
	"flag"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/insomniacslk/dhcp/dhcpv4"
	"github.com/insomniacslk/dhcp/iana"

	"github.com/plasmactl/plasma-node/pxe/dhcpserver"
	"github.com/plasmactl/plasma-node/pxe/proxydhcp"
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

// testClient is a UDP socket standing for PXE clients.
type testClient struct {
	conn *net.UDPConn
	port int
}

func newTestClient(t *testing.T) *testClient {
	t.Helper()
	c, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4zero})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &testClient{conn: c, port: c.LocalAddr().(*net.UDPAddr).Port}
}

// exchange sends req to addr until a reply with its xid arrives, or
// returns nil after wait.
func (c *testClient) exchange(t *testing.T, req []byte, addr *net.UDPAddr, xid dhcpv4.TransactionID, wait time.Duration) (*dhcpv4.DHCPv4, *net.UDPAddr) {
	t.Helper()
	deadline := time.Now().Add(wait)
	buf := make([]byte, 2048)
	for time.Now().Before(deadline) {
		if _, err := c.conn.WriteToUDP(req, addr); err != nil {
			t.Fatal(err)
		}
		c.conn.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
		for {
			n, from, err := c.conn.ReadFromUDP(buf)
			if err != nil {
				break
			}
			resp, err := dhcpv4.FromBytes(buf[:n])
			if err == nil && resp.TransactionID == xid && resp.OpCode == dhcpv4.OpcodeBootReply {
				return resp, from
			}
		}
	}
	return nil, nil
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

// rawTFTP is a TFTP client speaking raw UDP.
type rawTFTP struct {
	t    *testing.T
	conn *net.UDPConn
}

func newRawTFTP(t *testing.T) *rawTFTP {
	t.Helper()
	c, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &rawTFTP{t: t, conn: c}
}

// TFTP opcodes.
const (
	opRRQ  = 1
	opDATA = 3
	opOACK = 6
)

func (c *rawTFTP) request(op uint16, server *net.UDPAddr, name string) {
	c.t.Helper()
	p := binary.BigEndian.AppendUint16(nil, op)
	p = append(append(p, name...), 0)
	p = append(append(p, "octet"...), 0)
	if _, err := c.conn.WriteToUDP(p, server); err != nil {
		c.t.Fatal(err)
	}
}

// recv returns the next packet's opcode, body and sender, or op 0 after
// a timeout.
func (c *rawTFTP) recv(wait time.Duration) (uint16, []byte, *net.UDPAddr) {
	buf := make([]byte, 65536)
	c.conn.SetReadDeadline(time.Now().Add(wait))
	n, from, err := c.conn.ReadFromUDP(buf)
	if err != nil || n < 2 {
		return 0, nil, nil
	}
	return binary.BigEndian.Uint16(buf), buf[2:n], from
}
