package pxe

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/insomniacslk/dhcp/dhcpv4"
	"github.com/insomniacslk/dhcp/dhcpv4/server4"
	"github.com/insomniacslk/dhcp/iana"
)

// Ports of the proxy-DHCP exchange; the defaults of [DHCPServer]'s port
// fields.
const (
	// DHCPPort is the DHCP server port, where DISCOVERs arrive.
	DHCPPort = 67
	// PXEPort is the PXE boot-server port, where PXE clients send a
	// REQUEST after a proxy offer.
	PXEPort = 4011
	// DHCPClientPort is the port clients receive replies on.
	DHCPClientPort = 68
)

// maxDatagram is the largest DHCP packet read; a longer datagram is cut
// short, loses its end option and is dropped as malformed.
const maxDatagram = 4096

// ErrInvalidConfig is matched by the errors of [BootConfig.Validate] and
// [ProxyConfig.Validate], and so of [DHCPServer.Serve] given a bad
// configuration, and by [TFTPServer.Serve] without a Root.
var ErrInvalidConfig = errors.New("invalid boot configuration")

// Arrival says which socket a DHCP request came in on; it decides whether
// a REQUEST is answered.
type Arrival uint8

const (
	// OnDHCPPort is a request on the DHCP server port ([DHCPPort]).
	OnDHCPPort Arrival = iota
	// OnPXEPort is a request on the PXE boot-server port ([PXEPort]).
	OnPXEPort
)

// String returns "67" or "4011", the default port of the socket.
func (a Arrival) String() string {
	if a == OnPXEPort {
		return strconv.Itoa(PXEPort)
	}
	return strconv.Itoa(DHCPPort)
}

// ProxyConfig is what [Reply] needs besides the request.
type ProxyConfig struct {
	// ServerIP is this server's IPv4 address on the clients' network: the
	// next-server (siaddr), server identifier (option 54) and server name
	// (sname) of every reply. Required.
	ServerIP netip.Addr
	// Boot says which boot files are offered.
	Boot BootConfig
}

// Validate reports a missing or non-IPv4 ServerIP and the errors of
// [BootConfig.Validate]. Its errors match [ErrInvalidConfig].
func (c ProxyConfig) Validate() error {
	if !c.ServerIP.Is4() || c.ServerIP.IsUnspecified() {
		return fmt.Errorf("%w: ServerIP %q: want this server's IPv4 address on the clients' network", ErrInvalidConfig, c.ServerIP.String())
	}
	return c.Boot.Validate()
}

// Decision is what [Reply] made of one request.
type Decision struct {
	// Type is [dhcpv4.MessageTypeOffer] or [dhcpv4.MessageTypeAck] when a
	// reply was built, [dhcpv4.MessageTypeNone] when the request is
	// ignored.
	Type dhcpv4.MessageType
	// XID is the request's transaction id.
	XID dhcpv4.TransactionID
	// Client is what the request told about its sender.
	Client Client
	// Boot is the boot-file choice; zero when the request was ignored
	// before one was made.
	Boot Boot
	// Reason is a short sentence on why the request was answered so or
	// ignored.
	Reason string
}

// Ignored reports that the request gets no reply.
func (d Decision) Ignored() bool { return d.Type == dhcpv4.MessageTypeNone }

// Action is "offer", "ack" or "ignore", for logs.
func (d Decision) Action() string {
	switch d.Type {
	case dhcpv4.MessageTypeOffer:
		return "offer"
	case dhcpv4.MessageTypeAck:
		return "ack"
	}
	return "ignore"
}

// ParseClient reads what a request tells about its sender: MAC, vendor
// class, architectures, whether it runs iPXE, relay address. It never
// fails; what is missing or malformed stays zero.
func ParseClient(req *dhcpv4.DHCPv4) Client {
	vc := req.ClassIdentifier()
	c := Client{MAC: slices.Clone(req.ClientHWAddr), VendorClass: vc}
	switch {
	case strings.HasPrefix(vc, ClassPXE):
		c.Class = ClassPXE
	case strings.HasPrefix(vc, ClassHTTP):
		c.Class = ClassHTTP
	}
	c.Archs = req.ClientArch()
	if len(c.Archs) == 0 {
		if a, ok := archFromClass(vc); ok {
			c.Archs = []iana.Arch{a}
		}
	}
	if slices.Contains(req.UserClass(), "iPXE") || req.Options.Has(dhcpv4.OptionEtherboot) {
		c.IPXE = true
	}
	if gi, ok := netip.AddrFromSlice(req.GatewayIPAddr); ok && !gi.Unmap().IsUnspecified() {
		c.Relay = gi.Unmap()
	}
	return c
}

// archFromClass reads the architecture of a class such as
// "PXEClient:Arch:00007:UNDI:003016".
func archFromClass(vc string) (iana.Arch, bool) {
	f := strings.Split(vc, ":")
	for i := 0; i+1 < len(f); i++ {
		if f[i] == "Arch" {
			n, err := strconv.ParseUint(f[i+1], 10, 16)
			return iana.Arch(n), err == nil
		}
	}
	return 0, false
}

// Reply builds the proxy-DHCP answer to one request, or nil with the
// reason it is ignored. It does no I/O.
//
// Only BOOTREQUESTs from Ethernet clients whose vendor class (option 60)
// starts with PXEClient or HTTPClient, and whose MAC allow accepts (nil
// allow accepts none), are answered, and only when [SelectBoot] finds a
// boot file:
//
//   - a DISCOVER on port 67 gets an OFFER;
//   - a REQUEST on port 4011 gets an ACK;
//   - a REQUEST on port 67 gets an ACK only when its server identifier
//     (option 54) is this server; one naming another server belongs to
//     the lease exchange with the site's DHCP server and is ignored.
//
// The reply (reference §12.2) offers no address (yiaddr 0.0.0.0), keeps
// the xid, chaddr, giaddr and (on 4011) ciaddr, sets the broadcast flag on
// port 67, and carries siaddr = sname = ServerIP, the boot file in the
// BOOTP file field and option 67, options 53, 54 = ServerIP, 60 = the
// class, 97 echoed when sent, 61 and 82 copied (RFC 6842, RFC 3046), and
// for PXEClient on port 67 option 43 with PXE discovery control (6) = 0x08,
// "boot the file given, no discovery". An ACK on 4011 carries option 43
// only to echo the PXE boot item (71) the client sent.
func Reply(req *dhcpv4.DHCPv4, on Arrival, cfg ProxyConfig, allow func(net.HardwareAddr) bool) (*dhcpv4.DHCPv4, Decision) {
	if req == nil {
		return nil, Decision{Reason: "no request"}
	}
	d := Decision{XID: req.TransactionID, Client: ParseClient(req)}
	ignored := func(format string, args ...any) (*dhcpv4.DHCPv4, Decision) {
		d.Type = dhcpv4.MessageTypeNone
		d.Reason = fmt.Sprintf(format, args...)
		return nil, d
	}
	if req.OpCode != dhcpv4.OpcodeBootRequest {
		return ignored("not a BOOTREQUEST (op %d)", req.OpCode)
	}
	if d.Client.Class == "" {
		return ignored("not a PXE or HTTP boot client (vendor class %q)", d.Client.VendorClass)
	}
	if req.HWType != iana.HWTypeEthernet || len(req.ClientHWAddr) != 6 {
		return ignored("not an Ethernet client (hardware type %d, address length %d)", req.HWType, len(req.ClientHWAddr))
	}
	mt := req.MessageType()
	switch {
	case on == OnDHCPPort && mt == dhcpv4.MessageTypeDiscover:
		d.Type = dhcpv4.MessageTypeOffer
	case on == OnPXEPort && mt == dhcpv4.MessageTypeRequest:
		d.Type = dhcpv4.MessageTypeAck
	case on == OnDHCPPort && mt == dhcpv4.MessageTypeRequest:
		sid, ok := netip.AddrFromSlice(req.ServerIdentifier())
		if !ok {
			return ignored("REQUEST on port 67 without a server identifier is for the site's DHCP server")
		}
		if sid.Unmap() != cfg.ServerIP {
			return ignored("REQUEST on port 67 for another DHCP server (%s)", sid.Unmap())
		}
		d.Type = dhcpv4.MessageTypeAck
	default:
		return ignored("%s on port %s is not answered", mt, on)
	}
	if !cfg.ServerIP.Is4() || cfg.ServerIP.IsUnspecified() {
		return ignored("no server address configured")
	}
	if allow == nil || !allow(d.Client.MAC) {
		return ignored("machine %s is not served by this window", d.Client.MAC)
	}
	d.Boot = SelectBoot(d.Client, cfg.Boot)
	if d.Boot.Ignore {
		return ignored("%s", d.Boot.Reason)
	}
	if len(d.Boot.File) > maxBootFile {
		return ignored("boot file %q is longer than the %d bytes of the BOOTP file field", d.Boot.File, maxBootFile)
	}
	d.Reason = d.Boot.Reason

	sip := net.IP(cfg.ServerIP.AsSlice())
	resp := &dhcpv4.DHCPv4{
		OpCode:         dhcpv4.OpcodeBootReply,
		HWType:         req.HWType,
		TransactionID:  req.TransactionID,
		Flags:          req.Flags,
		ClientIPAddr:   net.IPv4zero,
		YourIPAddr:     net.IPv4zero,
		ServerIPAddr:   sip,
		GatewayIPAddr:  ip4OrZero(req.GatewayIPAddr),
		ClientHWAddr:   slices.Clone(req.ClientHWAddr),
		ServerHostName: cfg.ServerIP.String(),
		BootFileName:   d.Boot.File,
		Options:        dhcpv4.Options{},
	}
	if on == OnPXEPort {
		resp.ClientIPAddr = ip4OrZero(req.ClientIPAddr)
	} else {
		resp.SetBroadcast()
	}
	resp.UpdateOption(dhcpv4.OptMessageType(d.Type))
	resp.UpdateOption(dhcpv4.OptServerIdentifier(sip))
	resp.UpdateOption(dhcpv4.OptClassIdentifier(d.Boot.Class))
	resp.UpdateOption(dhcpv4.OptBootFileName(d.Boot.File))
	for _, code := range []dhcpv4.OptionCode{dhcpv4.OptionClientMachineIdentifier, dhcpv4.OptionClientIdentifier, dhcpv4.OptionRelayAgentInformation} {
		if v := req.Options.Get(code); v != nil && len(v) <= 255 {
			resp.UpdateOption(dhcpv4.OptGeneric(code, slices.Clone(v)))
		}
	}
	if d.Boot.Class == ClassPXE {
		if on == OnDHCPPort {
			resp.UpdateOption(dhcpv4.OptGeneric(dhcpv4.OptionVendorSpecificInformation, []byte{pxeDiscoveryControl, 1, discoveryBootFileOnly, pxeEnd}))
		} else if item, ok := pxeSubOption(req.Options.Get(dhcpv4.OptionVendorSpecificInformation), pxeBootItem); ok {
			v := append([]byte{pxeBootItem, byte(len(item))}, item...)
			resp.UpdateOption(dhcpv4.OptGeneric(dhcpv4.OptionVendorSpecificInformation, append(v, pxeEnd)))
		}
	}
	return resp, d
}

// PXE vendor-encapsulated (option 43) sub-options, PXE specification 2.1.
const (
	pxeDiscoveryControl = 6
	pxeBootItem         = 71
	pxeEnd              = 255
	// discoveryBootFileOnly is bit 3: download the boot file of the
	// reply, without boot-server discovery.
	discoveryBootFileOnly = 0x08
)

// pxeSubOption finds a sub-option in option 43's data.
func pxeSubOption(data []byte, code byte) ([]byte, bool) {
	for len(data) >= 1 {
		c := data[0]
		if c == pxeEnd {
			return nil, false
		}
		if c == 0 {
			data = data[1:]
			continue
		}
		if len(data) < 2 || len(data) < 2+int(data[1]) {
			return nil, false
		}
		v := data[2 : 2+int(data[1])]
		if c == code {
			return slices.Clone(v), true
		}
		data = data[2+int(data[1]):]
	}
	return nil, false
}

func ip4OrZero(ip net.IP) net.IP {
	if v4 := ip.To4(); v4 != nil {
		return slices.Clone(v4)
	}
	return net.IPv4zero
}

// EventKind names what happened in an [Event].
type EventKind string

// Kinds of [Event].
const (
	// EventDHCPOffer: a proxy OFFER was sent.
	EventDHCPOffer EventKind = "dhcp-offer"
	// EventDHCPAck: a proxy ACK was sent.
	EventDHCPAck EventKind = "dhcp-ack"
	// EventDHCPIgnored: a PXE or HTTP boot client got no answer (Reason
	// says why). Requests of other DHCP clients raise no event.
	EventDHCPIgnored EventKind = "dhcp-ignored"
	// EventTFTPSent: a TFTP download completed.
	EventTFTPSent EventKind = "tftp-sent"
	// EventTFTPFailed: a TFTP request was refused or its transfer failed.
	EventTFTPFailed EventKind = "tftp-failed"
)

// Event is one step of a machine's network boot, for its boot timeline.
type Event struct {
	// Time is when it happened.
	Time time.Time
	// Kind says what happened.
	Kind EventKind
	// MAC is the client's hardware address (DHCP events only).
	MAC net.HardwareAddr
	// XID is the DHCP transaction id in hex (DHCP events only).
	XID string
	// Arch is the client's architecture as [Client.ArchName] gives it
	// (DHCP events only).
	Arch string
	// Peer is the address the request came from.
	Peer netip.AddrPort
	// File is the boot file offered (DHCP) or requested (TFTP).
	File string
	// Bytes is the number of bytes sent (TFTP only).
	Bytes int64
	// Reason says why, in a short sentence.
	Reason string
}

// DHCPServer answers PXE and HTTP boot clients as a proxy-DHCP server
// with [Reply], on the DHCP port and on the PXE port. Set its fields,
// then call [DHCPServer.Serve]; do not change them while it runs. The zero
// ports are the standard ones.
type DHCPServer struct {
	// Proxy says what to answer. Its ServerIP is required.
	Proxy ProxyConfig
	// Allow reports whether a machine is served (a pending registration
	// pins its MAC, or one pins none). Nil serves no machine.
	Allow func(net.HardwareAddr) bool
	// Interface is the network interface listened on (SO_BINDTODEVICE);
	// broadcast replies leave through it. Empty listens on all interfaces,
	// which only suits tests.
	Interface string
	// Port is the DHCP server port. Default: [DHCPPort].
	Port int
	// PXEPort is the PXE boot-server port. Default: [PXEPort]; negative
	// disables it.
	PXEPort int
	// ClientPort is where replies to unrelayed clients go. Default:
	// [DHCPClientPort].
	ClientPort int
	// RelayPort is where replies to relayed requests go, on the relay's
	// address (giaddr). Default: [DHCPPort].
	RelayPort int
	// DHCPConn and PXEConn, when set, are used instead of listening on
	// Port and PXEPort (tests, sockets opened early with [ListenDHCP]).
	// Serve closes them when it returns.
	DHCPConn, PXEConn net.PacketConn
	// Logger receives every decision; nil discards them.
	Logger *slog.Logger
	// OnEvent, when set, is called with every offer, ACK and ignored PXE
	// client, from the serving goroutines; it must not block for long.
	OnEvent func(Event)
}

// ListenDHCP opens a UDP socket on port of every IPv4 address, bound to
// interface iface when it is not empty, with SO_BROADCAST (for broadcast
// replies) and SO_REUSEADDR. Port 67 needs root or CAP_NET_BIND_SERVICE.
func ListenDHCP(iface string, port int) (net.PacketConn, error) {
	c, err := server4.NewIPv4UDPConn(iface, &net.UDPAddr{IP: net.IPv4zero, Port: port})
	if err != nil {
		where := "all interfaces"
		if iface != "" {
			where = "interface " + iface
		}
		return nil, fmt.Errorf("listen on udp port %d of %s: %w", port, where, err)
	}
	return c, nil
}

func orDefault(v, def int) int {
	if v == 0 {
		return def
	}
	return v
}

// Serve answers requests until ctx ends, then closes its sockets and
// returns ctx's error. It returns at once an error matching
// [ErrInvalidConfig] for a bad Proxy, or an error when a socket cannot be
// opened or read.
func (s *DHCPServer) Serve(ctx context.Context) error {
	if err := s.Proxy.Validate(); err != nil {
		return fmt.Errorf("dhcp server: %w", err)
	}
	type listener struct {
		conn net.PacketConn
		on   Arrival
	}
	var ls []listener
	closeAll := func() {
		for _, l := range ls {
			l.conn.Close()
		}
	}
	dc := s.DHCPConn
	if dc == nil {
		c, err := ListenDHCP(s.Interface, orDefault(s.Port, DHCPPort))
		if err != nil {
			return fmt.Errorf("dhcp server: %w", err)
		}
		dc = c
	}
	ls = append(ls, listener{dc, OnDHCPPort})
	pc := s.PXEConn
	if pc == nil && s.PXEPort >= 0 {
		c, err := ListenDHCP(s.Interface, orDefault(s.PXEPort, PXEPort))
		if err != nil {
			closeAll()
			return fmt.Errorf("dhcp server: %w", err)
		}
		pc = c
	}
	if pc != nil {
		ls = append(ls, listener{pc, OnPXEPort})
	}
	log := s.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	for _, l := range ls {
		log.Info("proxy-DHCP listening", "addr", l.conn.LocalAddr().String(), "interface", s.Interface, "server_ip", s.Proxy.ServerIP.String())
	}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errc := make(chan error, len(ls))
	var wg sync.WaitGroup
	for _, l := range ls {
		wg.Go(func() {
			if err := s.loop(ctx, log, l.conn, l.on); err != nil {
				errc <- err
				cancel()
			}
		})
	}
	<-ctx.Done()
	closeAll()
	wg.Wait()
	select {
	case err := <-errc:
		return err
	default:
	}
	return context.Cause(ctx)
}

func (s *DHCPServer) loop(ctx context.Context, log *slog.Logger, conn net.PacketConn, on Arrival) error {
	buf := make([]byte, maxDatagram)
	for {
		n, peer, err := conn.ReadFrom(buf)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("read dhcp on %s: %w", conn.LocalAddr(), err)
		}
		s.handle(log, conn, on, buf[:n], peer)
	}
}

// handle answers one datagram; it never panics on its content.
func (s *DHCPServer) handle(log *slog.Logger, conn net.PacketConn, on Arrival, pkt []byte, peer net.Addr) {
	from := addrPort(peer)
	req, err := dhcpv4.FromBytes(pkt)
	if err != nil {
		log.Debug("drop malformed DHCP packet", "peer", from.String(), "port", on.String(), "bytes", len(pkt), "err", err)
		return
	}
	resp, d := Reply(req, on, s.Proxy, s.Allow)
	attrs := []any{"mac", d.Client.MAC.String(), "xid", d.XID.String(), "arch", d.Client.ArchName(), "decision", d.Action(),
		"port", on.String(), "peer", from.String(), "file", d.Boot.File, "reason", d.Reason}
	if d.Client.Relay.IsValid() {
		attrs = append(attrs, "relay", d.Client.Relay.String())
	}
	if d.Client.Class == "" {
		log.Debug("DHCP request", attrs...)
		return
	}
	if resp != nil {
		dst := s.replyAddr(req, on, peer)
		if _, err := conn.WriteTo(resp.ToBytes(), dst); err != nil {
			log.Warn("send DHCP reply", append(attrs, "to", dst.String(), "err", err)...)
			d.Type, d.Reason = dhcpv4.MessageTypeNone, fmt.Sprintf("reply to %s failed: %v", dst, err)
		} else {
			attrs = append(attrs, "to", dst.String())
		}
	}
	log.Info("DHCP "+d.Action(), attrs...)
	if s.OnEvent != nil {
		kind := EventDHCPIgnored
		switch d.Type {
		case dhcpv4.MessageTypeOffer:
			kind = EventDHCPOffer
		case dhcpv4.MessageTypeAck:
			kind = EventDHCPAck
		}
		s.OnEvent(Event{Time: time.Now(), Kind: kind, MAC: d.Client.MAC, XID: d.XID.String(), Arch: d.Client.ArchName(),
			Peer: from, File: d.Boot.File, Reason: d.Reason})
	}
}

// replyAddr is where a reply goes (RFC 2131 §4.1): a request on the PXE
// port is answered to its sender; on the DHCP port, a relayed one to the
// relay, one from a client with an address (ciaddr) to that address, any
// other by broadcast.
func (s *DHCPServer) replyAddr(req *dhcpv4.DHCPv4, on Arrival, peer net.Addr) net.Addr {
	if on == OnPXEPort {
		return peer
	}
	if gi := req.GatewayIPAddr.To4(); gi != nil && !gi.IsUnspecified() {
		return &net.UDPAddr{IP: gi, Port: orDefault(s.RelayPort, DHCPPort)}
	}
	port := orDefault(s.ClientPort, DHCPClientPort)
	if ci := req.ClientIPAddr.To4(); ci != nil && !ci.IsUnspecified() {
		return &net.UDPAddr{IP: ci, Port: port}
	}
	return &net.UDPAddr{IP: net.IPv4bcast, Port: port}
}

func addrPort(a net.Addr) netip.AddrPort {
	if u, ok := a.(*net.UDPAddr); ok {
		ap := u.AddrPort()
		return netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())
	}
	return netip.AddrPort{}
}
