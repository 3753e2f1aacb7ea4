package dhcpserver

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/insomniacslk/dhcp/dhcpv6"
	"github.com/insomniacslk/dhcp/iana"

	"github.com/plasmactl/plasma-node/pxe/proxydhcp"
)

// TestServer6 runs the DHCPv6 boot server on two loopback sockets: a
// PXE Solicit on the DHCPv6 socket gets an Advertise and a Request on the
// PXE socket a Reply, both with the tftp:// URL, to the sender's port; a
// machine not allowed gets nothing and an ignored event.
func TestServer6(t *testing.T) {
	listen := func() (net.PacketConn, *net.UDPAddr) {
		c, err := net.ListenPacket("udp6", "[::1]:0")
		if err != nil {
			skipOrFail(t, "no IPv6 loopback: %v", err)
		}
		return c, c.LocalAddr().(*net.UDPAddr)
	}
	dc, daddr := listen()
	pc, paddr := listen()
	mac := net.HardwareAddr{0x52, 0x54, 0x00, 0x77, 0x60, 0x10}
	var evs eventLog
	s := &Server6{Proxy: proxydhcp.Config6{ServerIP: netip.MustParseAddr("fd77::2"), ServerID: proxydhcp.ServerDUID(mac),
		Boot: proxydhcp.BootConfig{UEFIBinary: proxydhcp.SNPOnlyBinary}},
		Allow: func(m net.HardwareAddr) bool { return m.String() == mac.String() }, Conn: dc, PXEConn: pc, OnEvent: evs.add}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx) }()
	client, err := net.ListenPacket("udp6", "[::1]:0")
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	ask := func(typ dhcpv6.MessageType, m net.HardwareAddr, to *net.UDPAddr) string {
		req := &dhcpv6.Message{MessageType: typ, TransactionID: dhcpv6.TransactionID{7, 7, byte(typ)}}
		req.AddOption(dhcpv6.OptClientID(&dhcpv6.DUIDLL{HWType: iana.HWTypeEthernet, LinkLayerAddr: m}))
		req.AddOption(dhcpv6.OptClientArchType(iana.EFI_X86_64))
		req.AddOption(&dhcpv6.OptVendorClass{EnterpriseNumber: proxydhcp.EnterprisePXE, Data: [][]byte{[]byte("PXEClient:Arch:00007:UNDI:003000")}})
		if _, err := client.WriteTo(req.ToBytes(), to); err != nil {
			t.Fatal(err)
		}
		client.SetReadDeadline(time.Now().Add(3 * time.Second))
		buf := make([]byte, 1500)
		n, _, err := client.ReadFrom(buf)
		if err != nil {
			return "no reply"
		}
		resp, err := dhcpv6.MessageFromBytes(buf[:n])
		if err != nil || resp.TransactionID != req.TransactionID {
			return "bad reply"
		}
		return resp.MessageType.String() + " " + resp.Options.BootFileURL()
	}
	got := []string{
		ask(dhcpv6.MessageTypeSolicit, mac, daddr),
		ask(dhcpv6.MessageTypeRequest, mac, paddr),
		ask(dhcpv6.MessageTypeSolicit, net.HardwareAddr{0x52, 0x54, 0, 0, 0, 1}, daddr),
	}
	want := []string{"ADVERTISE tftp://[fd77::2]/snponly.efi", "REPLY tftp://[fd77::2]/snponly.efi", "no reply"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("replies (-want +got):\n%s", diff)
	}
	wantEv := []string{"dhcp-offer 52:54:00:77:60:10 tftp://[fd77::2]/snponly.efi", "dhcp-ack 52:54:00:77:60:10 tftp://[fd77::2]/snponly.efi", "dhcp-ignored 52:54:00:00:00:01 "}
	if diff := cmp.Diff(wantEv, evs.kinds()); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("Serve: %v; want context.Canceled", err)
	}
}

func TestServer6RefusesBadConfig(t *testing.T) {
	s := &Server6{Proxy: proxydhcp.Config6{ServerIP: netip.MustParseAddr("fe80::1")}}
	if err := s.Serve(t.Context()); !errors.Is(err, proxydhcp.ErrInvalidConfig) {
		t.Errorf("Serve: %v; want ErrInvalidConfig", err)
	}
}

// TestServer6KnowsEDK2ByItsSolicit: EDK2 solicits from its EUI-64
// link-local address with a DUID-UUID and asks again on the PXE port
// from its leased address; the second request is read as from the first
// address, so its MAC is known. Another DUID is not.
func TestServer6KnowsEDK2ByItsSolicit(t *testing.T) {
	msg := func(typ dhcpv6.MessageType, uuid byte) *dhcpv6.Message {
		m := &dhcpv6.Message{MessageType: typ}
		m.AddOption(dhcpv6.OptClientID(&dhcpv6.DUIDUUID{UUID: [16]byte{uuid}}))
		return m
	}
	ll, leased := netip.MustParseAddr("fe80::5054:ff:fe77:6010"), netip.MustParseAddr("fd77::123")
	var l linkLocals
	first := func(src, _ netip.Addr) netip.Addr { return src }
	got := []netip.Addr{
		first(l.source(msg(dhcpv6.MessageTypeSolicit, 1), ll, proxydhcp.OnDHCPPort)),
		first(l.source(msg(dhcpv6.MessageTypeRequest, 1), leased, proxydhcp.OnPXEPort)),
		first(l.source(msg(dhcpv6.MessageTypeRequest, 2), leased, proxydhcp.OnPXEPort)),
		first(l.source(msg(dhcpv6.MessageTypeRequest, 1), leased, proxydhcp.OnDHCPPort)),
	}
	if diff := cmp.Diff([]netip.Addr{ll, ll, leased, leased}, got, cmp.Comparer(func(a, b netip.Addr) bool { return a == b })); diff != "" {
		t.Errorf("sources (-want +got):\n%s", diff)
	}
}

// sentTo records what a [Server6] writes, and to where.
type sentTo struct {
	net.PacketConn
	to   []string
	msgs []*dhcpv6.Message
}

func (s *sentTo) WriteTo(b []byte, a net.Addr) (int, error) {
	m, err := dhcpv6.MessageFromBytes(b)
	if err != nil {
		return 0, err
	}
	s.to, s.msgs = append(s.to, a.String()), append(s.msgs, m)
	return len(b), nil
}

// TestServer6RepliesOnThePXEPortAlsoToTheLinkLocalAddress: EDK2 reads
// the port-4011 Reply from any source and to any of its addresses
// (PxeBcRequestBootService: ANY_SRC_IP | ANY_DEST_IP, 3 s), and the
// address it asked from is the one just leased, which its IPv6 stack
// may not answer neighbour discovery for in time; its link-local
// address, which it solicited from, it does. So the Reply goes to the
// leased address and, the same bytes, to the link-local one with its
// zone, both at the port the Request came from. A Request from the
// link-local address itself gets one Reply.
func TestServer6RepliesOnThePXEPortAlsoToTheLinkLocalAddress(t *testing.T) {
	mac := net.HardwareAddr{0x52, 0x54, 0x00, 0x77, 0x60, 0x10}
	msg := func(typ dhcpv6.MessageType, uuid byte) []byte {
		m := &dhcpv6.Message{MessageType: typ, TransactionID: dhcpv6.TransactionID{1, 2, uuid}}
		m.AddOption(dhcpv6.OptClientID(&dhcpv6.DUIDUUID{UUID: [16]byte{uuid}}))
		m.AddOption(dhcpv6.OptClientArchType(iana.EFI_X86_64))
		m.AddOption(&dhcpv6.OptVendorClass{EnterpriseNumber: proxydhcp.EnterprisePXE, Data: [][]byte{[]byte("PXEClient:Arch:00007:UNDI:003000")}})
		return m.ToBytes()
	}
	udp := func(s string) *net.UDPAddr { return net.UDPAddrFromAddrPort(netip.MustParseAddrPort(s)) }
	ll := "[fe80::5054:ff:fe77:6010%br0]"
	tests := map[string]struct {
		uuid byte
		from string
		want []string
	}{
		"a Request from the leased address goes there and to the link-local address": {
			1, "[fd77::123]:4011", []string{"[fd77::123]:4011", ll + ":4011"}},
		"a Request from the link-local address gets one Reply": {
			1, ll + ":4011", []string{ll + ":4011"}},
		"a DUID that never solicited is not known and gets nothing": {
			2, "[fd77::124]:4011", nil},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			s := &Server6{Proxy: proxydhcp.Config6{ServerIP: netip.MustParseAddr("fd77::2"), ServerID: proxydhcp.ServerDUID(mac),
				Boot: proxydhcp.BootConfig{UEFIBinary: proxydhcp.SNPOnlyBinary}}, Allow: func(net.HardwareAddr) bool { return true }}
			log := slog.New(slog.DiscardHandler)
			s.handle(log, &sentTo{}, proxydhcp.OnDHCPPort, msg(dhcpv6.MessageTypeSolicit, 1), udp(ll+":546"))
			conn := &sentTo{}
			s.handle(log, conn, proxydhcp.OnPXEPort, msg(dhcpv6.MessageTypeRequest, tc.uuid), udp(tc.from))
			if diff := cmp.Diff(tc.want, conn.to); diff != "" {
				t.Errorf("Replies sent to (-want +got):\n%s", diff)
			}
			for i, m := range conn.msgs {
				if m.MessageType != dhcpv6.MessageTypeReply || m.Options.BootFileURL() != "tftp://[fd77::2]/snponly.efi" {
					t.Errorf("message %d: %s with URL %q, want a REPLY with tftp://[fd77::2]/snponly.efi", i, m.MessageType, m.Options.BootFileURL())
				}
				if diff := cmp.Diff(conn.msgs[0].ToBytes(), m.ToBytes()); diff != "" {
					t.Errorf("message %d differs from the first (-first +this):\n%s", i, diff)
				}
			}
		})
	}
}
