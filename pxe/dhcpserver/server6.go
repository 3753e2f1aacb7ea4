package dhcpserver

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"sync"
	"syscall"
	"time"

	"github.com/insomniacslk/dhcp/dhcpv6"
	"golang.org/x/sys/unix"

	"github.com/plasmactl/plasma-node/pxe/events"
	"github.com/plasmactl/plasma-node/pxe/proxydhcp"
)

// allDHCPServers is All_DHCP_Relay_Agents_and_Servers (RFC 8415 §7.1),
// the group DHCPv6 clients send Solicits to.
var allDHCPServers = netip.MustParseAddr("ff02::1:2")

// Server6 answers UEFI PXE and HTTP boot clients over DHCPv6 beside the
// site's DHCPv6 server, with [proxydhcp.Reply6]: Solicits and
// Information-requests on port 547 of the group ff02::1:2, and the
// Requests EDK2's PXE client sends to the PXE port. Set its fields, then
// call [Server6.Serve]; do not change them while it runs. The zero ports
// are the standard ones.
//
// It does not log within a budget as [Server] does: DHCPv6 boot
// clients are few, and each logs one line.
type Server6 struct {
	// Proxy says what to answer. Its ServerIP and ServerID are required.
	Proxy proxydhcp.Config6
	// Allow reports whether a machine is served. Nil serves no machine.
	Allow func(net.HardwareAddr) bool
	// Interface is the network interface listened on, where the group
	// is joined. Required unless both conns are given.
	Interface string
	// Port is the DHCPv6 server port. Default: [proxydhcp.DHCPv6Port].
	Port int
	// PXEPort is the PXE boot-server port. Default: [proxydhcp.PXEPort];
	// negative disables it.
	PXEPort int
	// Conn and PXEConn, when set, are used instead of listening on Port
	// and PXEPort (tests). Serve closes them when it returns.
	Conn, PXEConn net.PacketConn
	// Logger receives every decision; nil discards them.
	Logger *slog.Logger
	// OnEvent, when set, is called with every Advertise, Reply and
	// ignored boot client, as [Server.OnEvent] is; an event's XID holds
	// the DHCPv6 transaction id in its last three bytes.
	OnEvent func(Event)

	clients linkLocals
}

// maxLinkLocals bounds the link-local addresses a [Server6] remembers.
const maxLinkLocals = 4096

// linkLocals remembers the link-local address each client (by DUID)
// solicited from, with its zone. EDK2's PXE client sends its Request on
// the PXE port from its leased address, with a DUID-UUID: its MAC is
// then known only from the EUI-64 link-local address its Solicit came
// from, and that address is also one the client surely answers
// neighbour discovery for.
type linkLocals struct {
	mu   sync.Mutex
	addr map[string]netip.Addr
}

// source returns the address Reply6 should read the client's MAC from,
// without its zone: a Solicit's link-local source is remembered by its
// DUID; a request on the PXE port from another address gets its DUID's
// remembered one. For that request it also returns the remembered
// address with its zone (else the zero Addr), where the Reply goes too.
func (l *linkLocals) source(req *dhcpv6.Message, from netip.Addr, on proxydhcp.Arrival) (src, linkLocal netip.Addr) {
	id := req.Options.ClientID()
	if id == nil {
		return from.WithZone(""), netip.Addr{}
	}
	key := string(id.ToBytes())
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case from.IsLinkLocalUnicast() && req.MessageType == dhcpv6.MessageTypeSolicit:
		if l.addr == nil || len(l.addr) >= maxLinkLocals {
			l.addr = map[string]netip.Addr{}
		}
		l.addr[key] = from
	case on == proxydhcp.OnPXEPort && !from.IsLinkLocalUnicast():
		if a, ok := l.addr[key]; ok {
			return a.WithZone(""), a
		}
	}
	return from.WithZone(""), netip.Addr{}
}

// Listen6 opens a UDP socket on port of every IPv6 address of interface
// iface (SO_BINDTODEVICE), with SO_REUSEADDR, and joins the DHCPv6
// servers' group ff02::1:2 there when group is set. Port 547 needs root
// or CAP_NET_BIND_SERVICE.
func Listen6(iface string, port int, group bool) (net.PacketConn, error) {
	ifc, err := net.InterfaceByName(iface)
	if err != nil {
		return nil, fmt.Errorf("listen on udp6 port %d: interface %s: %w", port, iface, err)
	}
	lc := net.ListenConfig{Control: func(_, _ string, rc syscall.RawConn) error {
		var serr error
		if err := rc.Control(func(fd uintptr) {
			serr = errors.Join(unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_REUSEADDR, 1),
				unix.BindToDevice(int(fd), iface))
			if group {
				mreq := &unix.IPv6Mreq{Multiaddr: allDHCPServers.As16(), Interface: uint32(ifc.Index)}
				serr = errors.Join(serr, unix.SetsockoptIPv6Mreq(int(fd), unix.IPPROTO_IPV6, unix.IPV6_JOIN_GROUP, mreq))
			}
		}); err != nil {
			return err
		}
		return serr
	}}
	c, err := lc.ListenPacket(context.Background(), "udp6", net.JoinHostPort("::", fmt.Sprint(port)))
	if err != nil {
		return nil, fmt.Errorf("listen on udp6 port %d of interface %s: %w", port, iface, err)
	}
	return c, nil
}

// Serve answers requests until ctx ends, then closes its sockets and
// returns ctx's error. It returns at once an error matching
// [proxydhcp.ErrInvalidConfig] for a bad Proxy, or an error when a socket
// cannot be opened or read.
func (s *Server6) Serve(ctx context.Context) error {
	if err := s.Proxy.Validate(); err != nil {
		return fmt.Errorf("dhcpv6 server: %w", err)
	}
	var ls listeners
	open := func(c net.PacketConn, port int, group bool, on proxydhcp.Arrival) error {
		if c == nil {
			var err error
			if c, err = Listen6(s.Interface, port, group); err != nil {
				return fmt.Errorf("dhcpv6 server: %w", err)
			}
		}
		ls = append(ls, listener{c, on})
		return nil
	}
	if err := open(s.Conn, orDefault(s.Port, proxydhcp.DHCPv6Port), true, proxydhcp.OnDHCPPort); err != nil {
		return err
	}
	if s.PXEConn != nil || s.PXEPort >= 0 {
		if err := open(s.PXEConn, orDefault(s.PXEPort, proxydhcp.PXEPort), false, proxydhcp.OnPXEPort); err != nil {
			ls.close()
			return err
		}
	}
	log := s.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	for _, l := range ls {
		log.Info("DHCPv6 boot server listening", "addr", l.conn.LocalAddr().String(), "interface", s.Interface, "server_ip", s.Proxy.ServerIP.String())
	}
	return ls.serve(ctx, 1, func(ctx context.Context, l listener) error { return s.loop(ctx, log, l.conn, l.on) })
}

func (s *Server6) loop(ctx context.Context, log *slog.Logger, conn net.PacketConn, on proxydhcp.Arrival) error {
	buf := make([]byte, maxDatagram)
	for {
		n, peer, err := conn.ReadFrom(buf)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("read dhcpv6 on %s: %w", conn.LocalAddr(), err)
		}
		s.handle(log, conn, on, buf[:n], peer)
	}
}

// handle answers one datagram: to the sender's address and port, which
// is the client's port 546 for a Solicit and EDK2's port 4011 for its
// Request on the PXE port. That Reply goes also to the link-local
// address the client solicited from, at the same port: EDK2 takes it
// from any source at any of its addresses within 3 s
// (PxeBcRequestBootService), and the leased address it asked from may
// not yet answer neighbour discovery, so a Reply sent there alone can be
// lost (OVMF's "PXE-E16: No valid offer received").
func (s *Server6) handle(log *slog.Logger, conn net.PacketConn, on proxydhcp.Arrival, pkt []byte, peer net.Addr) {
	req, err := dhcpv6.MessageFromBytes(pkt)
	if err != nil {
		return // relayed and malformed messages are not boot requests
	}
	from := addrPort(peer)
	src, linkLocal := s.clients.source(req, from.Addr(), on)
	resp, d := proxydhcp.Reply6(req, src, on, s.Proxy, s.Allow)
	e := Event{Time: time.Now(), MAC: d.Client.MAC, Arch: d.Client.ArchName(), Peer: from, File: d.Boot.File, Reason: d.Reason}
	copy(e.XID[1:], d.XID[:])
	attrs := []any{"mac", macString(d.Client.MAC), "type", req.MessageType.String(), "port", on.String(), "peer", from.String(), "arch", e.Arch, "reason", d.Reason}
	switch {
	case resp == nil && d.Client.Class == "":
		return // not a boot client: the site's server answers it
	case resp == nil:
		e.Kind = events.DHCPIgnored
		log.Info("DHCPv6 ignored", attrs...)
	default:
		e.Kind = events.DHCPOffer
		if d.Type == dhcpv6.MessageTypeReply {
			e.Kind = events.DHCPAck
		}
		b := resp.ToBytes()
		if _, err := conn.WriteTo(b, peer); err != nil {
			e.Kind, e.Reason = events.DHCPIgnored, "reply not sent: "+err.Error()
			log.Warn("DHCPv6 reply not sent", append(attrs, "err", err)...)
			break
		}
		if linkLocal.IsValid() {
			also := netip.AddrPortFrom(linkLocal, from.Port())
			attrs = append(attrs, "also_to", also.String())
			if _, err := conn.WriteTo(b, net.UDPAddrFromAddrPort(also)); err != nil {
				log.Warn("DHCPv6 reply not sent to the link-local address", append(attrs, "err", err)...)
			}
		}
		log.Info("DHCPv6 "+d.Type.String(), append(attrs, "file", d.Boot.File)...)
	}
	if s.OnEvent != nil {
		s.OnEvent(e)
	}
}

func macString(m net.HardwareAddr) string {
	if m == nil {
		return "none"
	}
	return m.String()
}
