package pxetest

import (
	"encoding/binary"
	"net"
	"testing"
	"time"

	"github.com/insomniacslk/dhcp/dhcpv4"
)

// DHCPClient is a UDP socket on an ephemeral port of every address,
// standing for PXE clients and relays.
type DHCPClient struct {
	// Conn is the socket, closed when the test ends.
	Conn *net.UDPConn
	// Port is Conn's port, for a server's ClientPort or RelayPort.
	Port int
}

// NewDHCPClient opens a DHCPClient for the length of t.
func NewDHCPClient(t testing.TB) *DHCPClient {
	t.Helper()
	c, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4zero})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &DHCPClient{Conn: c, Port: c.LocalAddr().(*net.UDPAddr).Port}
}

// Exchange sends req to addr until a reply with its xid arrives, and
// returns the reply and its sender, or nil after wait.
func (c *DHCPClient) Exchange(t testing.TB, req []byte, addr *net.UDPAddr, xid dhcpv4.TransactionID, wait time.Duration) (*dhcpv4.DHCPv4, *net.UDPAddr) {
	t.Helper()
	deadline := time.Now().Add(wait)
	buf := make([]byte, 2048)
	for time.Now().Before(deadline) {
		if _, err := c.Conn.WriteToUDP(req, addr); err != nil {
			t.Fatal(err)
		}
		c.Conn.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
		for {
			n, from, err := c.Conn.ReadFromUDP(buf)
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

// FreeUDPPort finds a UDP port free on all addresses.
func FreeUDPPort(t testing.TB) int {
	t.Helper()
	c, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4zero})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	return c.LocalAddr().(*net.UDPAddr).Port
}

// TFTP opcodes (RFC 1350, RFC 2347).
const (
	OpRRQ   = 1
	OpWRQ   = 2
	OpDATA  = 3
	OpACK   = 4
	OpERROR = 5
	OpOACK  = 6
)

// TFTPClient is a TFTP client speaking raw UDP from a loopback socket, to
// see every packet.
type TFTPClient struct {
	t    testing.TB
	conn *net.UDPConn
}

// NewTFTPClient opens a TFTPClient on 127.0.0.1 for the length of t.
func NewTFTPClient(t testing.TB) *TFTPClient {
	t.Helper()
	return NewTFTPClientOn(t, net.IPv4(127, 0, 0, 1))
}

// NewTFTPClientOn opens a TFTPClient on ip (such as another address of
// 127/8, for another client) for the length of t.
func NewTFTPClientOn(t testing.TB, ip net.IP) *TFTPClient {
	t.Helper()
	c, err := net.ListenUDP("udp4", &net.UDPAddr{IP: ip})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &TFTPClient{t: t, conn: c}
}

// Request sends a request (op [OpRRQ] or [OpWRQ]) for name in octet mode
// to server, with opts as option name and value pairs.
func (c *TFTPClient) Request(op uint16, server *net.UDPAddr, name string, opts ...string) {
	c.t.Helper()
	p := binary.BigEndian.AppendUint16(nil, op)
	for _, f := range append([]string{name, "octet"}, opts...) {
		p = append(append(p, f...), 0)
	}
	if _, err := c.conn.WriteToUDP(p, server); err != nil {
		c.t.Fatal(err)
	}
}

// Recv returns the next packet's opcode, body and sender, or op 0 after
// wait.
func (c *TFTPClient) Recv(wait time.Duration) (uint16, []byte, *net.UDPAddr) {
	buf := make([]byte, 65536)
	c.conn.SetReadDeadline(time.Now().Add(wait))
	n, from, err := c.conn.ReadFromUDP(buf)
	if err != nil || n < 2 {
		return 0, nil, nil
	}
	return binary.BigEndian.Uint16(buf), buf[2:n], from
}

// Ack acknowledges block to the transfer's address to.
func (c *TFTPClient) Ack(to *net.UDPAddr, block uint16) {
	c.t.Helper()
	p := binary.BigEndian.AppendUint16(binary.BigEndian.AppendUint16(nil, OpACK), block)
	if _, err := c.conn.WriteToUDP(p, to); err != nil {
		c.t.Fatal(err)
	}
}

// Close closes the client's socket, as a machine that went away: a
// packet sent to its port then gets ICMP port unreachable.
func (c *TFTPClient) Close() { c.conn.Close() }

// Send sends the raw packet p (an ERROR, say) to the transfer's address
// to.
func (c *TFTPClient) Send(to *net.UDPAddr, p []byte) {
	c.t.Helper()
	if _, err := c.conn.WriteToUDP(p, to); err != nil {
		c.t.Fatal(err)
	}
}
