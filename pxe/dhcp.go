package pxe

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
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
	d := decide(req, on, cfg, allow)
	if d.Ignored() {
		return nil, d
	}
	return buildReply(req, on, cfg, d), d
}

// decide is the decision of [Reply], without building the reply.
func decide(req *dhcpv4.DHCPv4, on Arrival, cfg ProxyConfig, allow func(net.HardwareAddr) bool) Decision {
	if req == nil {
		return Decision{Reason: "no request"}
	}
	d := Decision{XID: req.TransactionID, Client: ParseClient(req)}
	ignored := func(format string, args ...any) Decision {
		d.Type = dhcpv4.MessageTypeNone
		d.Reason = fmt.Sprintf(format, args...)
		return d
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
	return d
}

// echoedOptions are the request's options a reply copies when they fit
// in one option (RFC 6842, RFC 3046, and 97 for PXE).
var echoedOptions = [...]dhcpv4.OptionCode{dhcpv4.OptionClientIdentifier, dhcpv4.OptionRelayAgentInformation, dhcpv4.OptionClientMachineIdentifier}

// buildReply is the reply of [Reply] for a decision d that answers req.
func buildReply(req *dhcpv4.DHCPv4, on Arrival, cfg ProxyConfig, d Decision) *dhcpv4.DHCPv4 {
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
	for _, code := range echoedOptions {
		if v := req.Options.Get(code); v != nil && len(v) <= 255 {
			resp.UpdateOption(dhcpv4.OptGeneric(code, slices.Clone(v)))
		}
	}
	if v := vendorOption(req, on, d); v != nil {
		resp.UpdateOption(dhcpv4.OptGeneric(dhcpv4.OptionVendorSpecificInformation, v))
	}
	return resp
}

// vendorOption is the option 43 of the reply, or nil for none: for a
// PXEClient on port 67 discovery control, on 4011 the boot item echoed.
func vendorOption(req *dhcpv4.DHCPv4, on Arrival, d Decision) []byte {
	if d.Boot.Class != ClassPXE {
		return nil
	}
	if on == OnDHCPPort {
		return []byte{pxeDiscoveryControl, 1, discoveryBootFileOnly, pxeEnd}
	}
	if item, ok := pxeSubOption(req.Options.Get(dhcpv4.OptionVendorSpecificInformation), pxeBootItem); ok {
		v := append([]byte{pxeBootItem, byte(len(item))}, item...)
		return append(v, pxeEnd)
	}
	return nil
}

// BOOTP framing, as dhcpv4's ToBytes writes it.
const (
	bootpHeaderLen = 236
	bootpMinLen    = 300
)

var magicCookie = [4]byte{99, 130, 83, 99}

// appendReply appends to dst the bytes of buildReply(req, on, cfg,
// d).ToBytes() without building the packet: the same header, the same
// options in the same order, the end option and the padding to 300 bytes.
// It is the hot path of [DHCPServer]; a test holds it to buildReply.
func appendReply(dst []byte, req *dhcpv4.DHCPv4, on Arrival, cfg ProxyConfig, d Decision) []byte {
	start := len(dst)
	flags := req.Flags
	var ciaddr [4]byte
	if on == OnPXEPort {
		copy(ciaddr[:], ip4OrZero(req.ClientIPAddr))
	} else {
		flags |= 0x8000
	}
	sip := cfg.ServerIP.As4()
	dst = append(dst, byte(dhcpv4.OpcodeBootReply), byte(req.HWType), byte(len(req.ClientHWAddr)), 0)
	dst = append(dst, req.TransactionID[:]...)
	dst = append(dst, 0, 0, byte(flags>>8), byte(flags))
	dst = append(dst, ciaddr[:]...)
	dst = append(dst, 0, 0, 0, 0)
	dst = append(dst, sip[:]...)
	if gi := req.GatewayIPAddr.To4(); gi != nil {
		dst = append(dst, gi...)
	} else {
		dst = append(dst, 0, 0, 0, 0)
	}
	dst = appendField(dst, req.ClientHWAddr, 16, 16)
	var sname [15]byte
	dst = appendField(dst, cfg.ServerIP.AppendTo(sname[:0]), 63, 64)
	dst = appendField(dst, d.Boot.File, 127, 128)
	dst = append(dst, magicCookie[:]...)

	// Options in code order, but 82 last (RFC 3046 §2.1): 43, 53, 54,
	// 60, 61, 67, 97, 82.
	if v := vendorOption(req, on, d); v != nil {
		dst = appendOption(dst, dhcpv4.OptionVendorSpecificInformation, v)
	}
	dst = append(dst, byte(dhcpv4.OptionDHCPMessageType), 1, byte(d.Type))
	dst = append(dst, byte(dhcpv4.OptionServerIdentifier), 4)
	dst = append(dst, sip[:]...)
	dst = appendOption(dst, dhcpv4.OptionClassIdentifier, d.Boot.Class)
	echo := func(dst []byte, code dhcpv4.OptionCode) []byte {
		if v := req.Options.Get(code); v != nil && len(v) <= 255 {
			return appendOption(dst, code, v)
		}
		return dst
	}
	dst = echo(dst, dhcpv4.OptionClientIdentifier)
	dst = appendOption(dst, dhcpv4.OptionBootfileName, d.Boot.File)
	dst = echo(dst, dhcpv4.OptionClientMachineIdentifier)
	dst = echo(dst, dhcpv4.OptionRelayAgentInformation)
	dst = append(dst, byte(dhcpv4.OptionEnd))
	for len(dst)-start < bootpMinLen {
		dst = append(dst, 0)
	}
	return dst
}

// appendField appends v cut at max bytes and zero-padded to size.
func appendField[T ~string | ~[]byte](dst []byte, v T, max, size int) []byte {
	if len(v) > max {
		v = v[:max]
	}
	dst = append(dst, v...)
	for i := len(v); i < size; i++ {
		dst = append(dst, 0)
	}
	return dst
}

// appendOption appends an option, split into pieces of 255 bytes when
// longer (RFC 3396), as dhcpv4 writes one.
func appendOption[T ~string | ~[]byte](dst []byte, code dhcpv4.OptionCode, v T) []byte {
	if len(v) == 0 {
		return append(dst, byte(code.Code()), 0)
	}
	for len(v) > 0 {
		n := min(len(v), 255)
		dst = append(dst, byte(code.Code()), byte(n))
		dst = append(dst, v[:n]...)
		v = v[n:]
	}
	return dst
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
	// Logger receives every decision, within LogBudget; nil discards
	// them.
	Logger *slog.Logger
	// LogBudget is how many decisions a second are logged. Past it, lines
	// are dropped and counted: the count is logged ("DHCP log lines
	// dropped") when the next second starts, and [DHCPServer.LogsDropped]
	// returns the total. A network full of PXE clients thus cannot make
	// logging the bottleneck. Default: [DefaultDHCPLogBudget]; negative
	// logs every decision.
	LogBudget int
	// Readers is how many goroutines read each socket. Default: one per
	// CPU (GOMAXPROCS).
	Readers int
	// OnEvent, when set, is called with every offer, ACK and ignored PXE
	// client, from the serving goroutines (several at once); it must be
	// safe for concurrent use and not block for long.
	OnEvent func(Event)

	budget  logBudget
	dropped atomic.Int64
}

// Defaults of [DHCPServer].
const (
	// DefaultDHCPLogBudget is the default LogBudget: 50 lines a second.
	DefaultDHCPLogBudget = 50
	// dhcpReadBuffer is the receive buffer asked for each socket (4 MiB),
	// so that a burst of DISCOVERs waits in the kernel rather than being
	// dropped.
	dhcpReadBuffer = 4 << 20
)

// resetBudget starts the log budget afresh, from LogBudget.
func (s *DHCPServer) resetBudget() {
	s.budget.mu.Lock()
	s.budget.per, s.budget.second, s.budget.used, s.budget.dropped = s.LogBudget, time.Time{}, 0, 0
	if s.budget.per == 0 {
		s.budget.per = DefaultDHCPLogBudget
	}
	s.budget.mu.Unlock()
	s.dropped.Store(0)
}

// LogsDropped returns how many decision log lines were dropped for
// LogBudget since Serve started.
func (s *DHCPServer) LogsDropped() int64 { return s.dropped.Load() }

// logBudget lets through at most per lines in each second.
type logBudget struct {
	mu      sync.Mutex
	per     int
	second  time.Time
	used    int
	dropped int64
}

// take reports whether one more line may be written at now; when a new
// second starts after lines were dropped in the last, it also returns
// how many were.
func (b *logBudget) take(now time.Time) (ok bool, dropped int64) {
	if b.per < 0 {
		return true, 0
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if now.Sub(b.second) >= time.Second || now.Before(b.second) {
		dropped, b.dropped = b.dropped, 0
		b.second, b.used = now, 0
	}
	if b.used < b.per {
		b.used++
		return true, dropped
	}
	b.dropped++
	return false, dropped
}

// flush returns the lines dropped and not yet reported.
func (b *logBudget) flush() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	d := b.dropped
	b.dropped = 0
	return d
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
	readers := s.Readers
	if readers <= 0 {
		readers = runtime.GOMAXPROCS(0)
	}
	s.resetBudget()
	for _, l := range ls {
		if err := setReadBuffer(l.conn, dhcpReadBuffer); err != nil {
			log.Debug("proxy-DHCP receive buffer not enlarged", "addr", l.conn.LocalAddr().String(), "err", err)
		}
		log.Info("proxy-DHCP listening", "addr", l.conn.LocalAddr().String(), "interface", s.Interface, "server_ip", s.Proxy.ServerIP.String(), "readers", readers)
	}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errc := make(chan error, len(ls)*readers)
	var wg sync.WaitGroup
	for _, l := range ls {
		for range readers {
			wg.Go(func() {
				if err := s.loop(ctx, log, l.conn, l.on); err != nil {
					errc <- err
					cancel()
				}
			})
		}
	}
	<-ctx.Done()
	closeAll()
	wg.Wait()
	if n := s.budget.flush(); n > 0 {
		s.dropped.Add(n)
		log.Info("DHCP log lines dropped", "dropped", n, "budget_per_second", s.budget.per)
	}
	select {
	case err := <-errc:
		return err
	default:
	}
	return context.Cause(ctx)
}

// reader is the buffers of one reading goroutine.
type reader struct {
	in, out []byte
}

func (s *DHCPServer) loop(ctx context.Context, log *slog.Logger, conn net.PacketConn, on Arrival) error {
	r := &reader{in: make([]byte, maxDatagram), out: make([]byte, 0, 576)}
	for {
		n, peer, err := conn.ReadFrom(r.in)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("read dhcp on %s: %w", conn.LocalAddr(), err)
		}
		s.handle(log, r, conn, on, r.in[:n], peer)
	}
}

// handle answers one datagram; it never panics on its content.
func (s *DHCPServer) handle(log *slog.Logger, r *reader, conn net.PacketConn, on Arrival, pkt []byte, peer net.Addr) {
	from := addrPort(peer)
	req, err := dhcpv4.FromBytes(pkt)
	if err != nil {
		if log.Enabled(context.Background(), slog.LevelDebug) {
			log.Debug("drop malformed DHCP packet", "peer", from.String(), "port", on.String(), "bytes", len(pkt), "err", err)
		}
		return
	}
	d := decide(req, on, s.Proxy, s.Allow)
	attrs := func() []any {
		a := []any{"mac", d.Client.MAC.String(), "xid", d.XID.String(), "arch", d.Client.ArchName(), "decision", d.Action(),
			"port", on.String(), "peer", from.String(), "file", d.Boot.File, "reason", d.Reason}
		if d.Client.Relay.IsValid() {
			a = append(a, "relay", d.Client.Relay.String())
		}
		return a
	}
	if d.Client.Class == "" {
		if log.Enabled(context.Background(), slog.LevelDebug) {
			log.Debug("DHCP request", attrs()...)
		}
		return
	}
	var dst net.Addr
	var sendErr error
	if !d.Ignored() {
		r.out = appendReply(r.out[:0], req, on, s.Proxy, d)
		dst = s.replyAddr(req, on, peer)
		if _, sendErr = conn.WriteTo(r.out, dst); sendErr != nil {
			d.Type, d.Reason = dhcpv4.MessageTypeNone, fmt.Sprintf("reply to %s failed: %v", dst, sendErr)
		}
	}
	if ok, dropped := s.budget.take(time.Now()); ok {
		if dropped > 0 {
			s.dropped.Add(dropped)
			log.Info("DHCP log lines dropped", "dropped", dropped, "budget_per_second", s.budget.per)
		}
		switch {
		case sendErr != nil:
			log.Warn("send DHCP reply", append(attrs(), "to", dst.String(), "err", sendErr)...)
		case dst != nil:
			log.Info("DHCP "+d.Action(), append(attrs(), "to", dst.String())...)
		default:
			log.Info("DHCP "+d.Action(), attrs()...)
		}
	}
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
