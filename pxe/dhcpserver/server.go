package dhcpserver

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/insomniacslk/dhcp/dhcpv4"
	"github.com/insomniacslk/dhcp/dhcpv4/server4"

	"github.com/plasmactl/plasma-node/pxe/events"
	"github.com/plasmactl/plasma-node/pxe/proxydhcp"
)

// maxDatagram is the largest DHCP packet read; a longer datagram is cut
// short, loses its end option and is dropped as malformed.
const maxDatagram = 4096

// Event is what the server did with one request of a network-booting
// client, for the machine's boot timeline and for metrics.
type Event struct {
	// Time is when it happened.
	Time time.Time
	// Kind says what happened: [events.DHCPOffer] (a proxy OFFER was
	// sent), [events.DHCPAck] (a proxy ACK), or [events.DHCPIgnored] (a
	// PXE or HTTP boot client got no answer, Reason says why, or its
	// reply could not be sent; requests of other DHCP clients raise no
	// event).
	Kind events.Kind
	// MAC is the client's hardware address.
	MAC net.HardwareAddr
	// XID is the DHCP transaction id (its String method gives it in
	// hex): kept as its four bytes, not text no window reads, so that
	// an offer's event allocates nothing for it.
	XID dhcpv4.TransactionID
	// Arch is the client's architecture as [proxydhcp.Client.ArchName]
	// gives it.
	Arch string
	// Peer is the address the request came from.
	Peer netip.AddrPort
	// File is the boot file offered; empty when none was.
	File string
	// Reason says why, in a short sentence.
	Reason string
}

// Server answers PXE and HTTP boot clients as a proxy-DHCP server with
// [proxydhcp.Reply], on the DHCP port and on the PXE port. Set its
// fields, then call [Server.Serve]; do not change them while it runs. The
// zero ports are the standard ones.
type Server struct {
	// Proxy says what to answer. Its ServerIP is required.
	Proxy proxydhcp.Config
	// Allow reports whether a machine is served (a pending registration
	// pins its MAC, or one pins none). Nil serves no machine.
	Allow func(net.HardwareAddr) bool
	// Interface is the network interface listened on (SO_BINDTODEVICE);
	// broadcast replies leave through it. Empty listens on all interfaces,
	// which only suits tests.
	Interface string
	// Port is the DHCP server port. Default: [proxydhcp.DHCPPort].
	Port int
	// PXEPort is the PXE boot-server port. Default: [proxydhcp.PXEPort];
	// negative disables it.
	PXEPort int
	// ClientPort is where replies to unrelayed clients go. Default:
	// [proxydhcp.DHCPClientPort].
	ClientPort int
	// RelayPort is where replies to relayed requests go, on the relay's
	// address (giaddr). Default: [proxydhcp.DHCPPort].
	RelayPort int
	// DHCPConn and PXEConn, when set, are used instead of listening on
	// Port and PXEPort (tests, sockets opened early with [Listen]).
	// Serve closes them when it returns.
	DHCPConn, PXEConn net.PacketConn
	// Logger receives every decision, within LogBudget; nil discards
	// them.
	Logger *slog.Logger
	// LogBudget is how many decisions a second are logged. Past it, lines
	// are dropped and counted: the count is logged ("DHCP log lines
	// dropped") when the next second starts. A network full of PXE clients thus cannot make
	// logging the bottleneck. Default: [DefaultLogBudget]; negative logs
	// every decision.
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
	// largestBatch is the most datagrams one read has returned (tests).
	largestBatch atomic.Int64
	// bcast is the broadcast destination, made once by Serve: most
	// replies go there.
	bcast *net.UDPAddr
}

// Defaults of [Server].
const (
	// DefaultLogBudget is the default LogBudget: 50 lines a second.
	DefaultLogBudget = 50
	// dhcpReadBuffer is the receive buffer asked for each socket (4 MiB),
	// so that a burst of DISCOVERs waits in the kernel rather than being
	// dropped.
	dhcpReadBuffer = 4 << 20
)

// start readies s for serving: the log budget afresh, from LogBudget,
// and the broadcast destination.
func (s *Server) start() {
	s.bcast = &net.UDPAddr{IP: net.IPv4bcast, Port: orDefault(s.ClientPort, proxydhcp.DHCPClientPort)}
	s.budget.mu.Lock()
	s.budget.per, s.budget.second, s.budget.used, s.budget.dropped = s.LogBudget, time.Time{}, 0, 0
	if s.budget.per == 0 {
		s.budget.per = DefaultLogBudget
	}
	s.budget.mu.Unlock()
	s.dropped.Store(0)
}

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

// Listen opens a UDP socket on port of every IPv4 address, bound to
// interface iface when it is not empty, with SO_BROADCAST (for broadcast
// replies) and SO_REUSEADDR. Port 67 needs root or CAP_NET_BIND_SERVICE.
func Listen(iface string, port int) (net.PacketConn, error) {
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
// [proxydhcp.ErrInvalidConfig] for a bad Proxy, or an error when a socket
// cannot be opened or read.
func (s *Server) Serve(ctx context.Context) error {
	if err := s.Proxy.Validate(); err != nil {
		return fmt.Errorf("dhcp server: %w", err)
	}
	var ls listeners
	dc := s.DHCPConn
	if dc == nil {
		c, err := Listen(s.Interface, orDefault(s.Port, proxydhcp.DHCPPort))
		if err != nil {
			return fmt.Errorf("dhcp server: %w", err)
		}
		dc = c
	}
	ls = append(ls, listener{dc, proxydhcp.OnDHCPPort})
	pc := s.PXEConn
	if pc == nil && s.PXEPort >= 0 {
		c, err := Listen(s.Interface, orDefault(s.PXEPort, proxydhcp.PXEPort))
		if err != nil {
			ls.close()
			return fmt.Errorf("dhcp server: %w", err)
		}
		pc = c
	}
	if pc != nil {
		ls = append(ls, listener{pc, proxydhcp.OnPXEPort})
	}
	log := s.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	readers := s.Readers
	if readers <= 0 {
		readers = runtime.GOMAXPROCS(0)
	}
	s.start()
	for _, l := range ls {
		if err := setReadBuffer(l.conn, dhcpReadBuffer); err != nil {
			log.Debug("proxy-DHCP receive buffer not enlarged", "addr", l.conn.LocalAddr().String(), "err", err)
		}
		log.Info("proxy-DHCP listening", "addr", l.conn.LocalAddr().String(), "interface", s.Interface, "server_ip", s.Proxy.ServerIP.String(), "readers", readers)
	}

	err := ls.serve(ctx, readers, func(ctx context.Context, l listener) error { return s.loop(ctx, log, l.conn, l.on) })
	if n := s.budget.flush(); n > 0 {
		s.dropped.Add(n)
		log.Info("DHCP log lines dropped", "dropped", n, "budget_per_second", s.budget.per)
	}
	return err
}

// serve runs loop readers times on each socket until ctx ends or a loop
// fails, closes the sockets, waits for the loops and returns the first
// loop's error, else ctx's.
func (ls listeners) serve(ctx context.Context, readers int, loop func(context.Context, listener) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errc := make(chan error, len(ls)*readers)
	var wg sync.WaitGroup
	for _, l := range ls {
		for range readers {
			wg.Go(func() {
				if err := loop(ctx, l); err != nil {
					errc <- err
					cancel()
				}
			})
		}
	}
	<-ctx.Done()
	ls.close()
	wg.Wait()
	select {
	case err := <-errc:
		return err
	default:
	}
	return context.Cause(ctx)
}

// listener is one socket of a server and the port it stands for.
type listener struct {
	conn net.PacketConn
	on   proxydhcp.Arrival
}

// listeners are a server's sockets.
type listeners []listener

// close closes every socket.
func (ls listeners) close() {
	for _, l := range ls {
		l.conn.Close()
	}
}

// reader is the buffers of one reading goroutine.
type reader struct {
	in, out []byte
	parser  parser
	rep     reply
}

// loop reads and answers conn's datagrams until it is closed: in batches
// (recvmmsg, sendmmsg) on a UDP socket of Linux, one by one otherwise.
func (s *Server) loop(ctx context.Context, log *slog.Logger, conn net.PacketConn, on proxydhcp.Arrival) error {
	if uc, ok := conn.(*net.UDPConn); ok && batchIO {
		return s.batchLoop(ctx, log, uc, on)
	}
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
func (s *Server) handle(log *slog.Logger, r *reader, conn net.PacketConn, on proxydhcp.Arrival, pkt []byte, peer net.Addr) {
	rep := &r.rep
	rep.out = r.out
	if !s.prepare(log, &r.parser, rep, on, pkt, peer) {
		return
	}
	var sendErr error
	if rep.dst != nil {
		_, sendErr = conn.WriteTo(rep.out, rep.dst)
	}
	r.out = rep.out
	s.finish(log, rep, sendErr)
}

// reply is one request's outcome between its decision and its sending:
// the reply's bytes and destination (nil when it is ignored), and what
// is logged and recorded once it is sent.
type reply struct {
	d    proxydhcp.Decision
	on   proxydhcp.Arrival
	from netip.AddrPort
	dst  net.Addr
	out  []byte
}

// prepare parses pkt, decides and builds the reply into rep. It reports
// false when nothing follows: a malformed packet, or a request of a
// machine that is not network-booting (logged at debug level only).
// rep does not point into pkt or the parser once it returns.
func (s *Server) prepare(log *slog.Logger, p *parser, rep *reply, on proxydhcp.Arrival, pkt []byte, peer net.Addr) bool {
	rep.on, rep.from, rep.dst = on, addrPort(peer), nil
	req, err := p.parse(pkt)
	if err != nil {
		if log.Enabled(context.Background(), slog.LevelDebug) {
			log.Debug("drop malformed DHCP packet", "peer", rep.from.String(), "port", on.String(), "bytes", len(pkt), "err", err)
		}
		return false
	}
	rep.d = proxydhcp.Decide(req, on, s.Proxy, s.Allow)
	if rep.d.Client.Class == "" {
		if log.Enabled(context.Background(), slog.LevelDebug) {
			log.Debug("DHCP request", rep.attrs()...)
		}
		return false
	}
	if !rep.d.Ignored() {
		rep.out = proxydhcp.AppendReply(rep.out[:0], req, on, s.Proxy, rep.d)
		rep.dst = s.replyAddr(req, on, peer)
	}
	return true
}

// attrs are a decision's log attributes.
func (rep *reply) attrs() []any {
	d := &rep.d
	a := []any{"mac", d.Client.MAC.String(), "xid", d.XID.String(), "arch", d.Client.ArchName(), "decision", d.Action(),
		"port", rep.on.String(), "peer", rep.from.String(), "file", d.Boot.File, "reason", d.Reason}
	if d.Client.Relay.IsValid() {
		a = append(a, "relay", d.Client.Relay.String())
	}
	return a
}

// finish logs (within the budget) and records the event of a prepared
// reply once sendErr says how its sending went.
func (s *Server) finish(log *slog.Logger, rep *reply, sendErr error) {
	d := &rep.d
	if sendErr != nil {
		d.Type, d.Reason = dhcpv4.MessageTypeNone, fmt.Sprintf("reply to %s failed: %v", rep.dst, sendErr)
	}
	now := time.Now()
	// A window logs decisions only when asked to (-v): otherwise the
	// line is neither built nor counted against the budget.
	if !log.Enabled(context.Background(), slog.LevelInfo) && sendErr == nil {
		// nothing to log
	} else if ok, dropped := s.budget.take(now); ok {
		if dropped > 0 {
			s.dropped.Add(dropped)
			log.Info("DHCP log lines dropped", "dropped", dropped, "budget_per_second", s.budget.per)
		}
		switch {
		case sendErr != nil:
			log.Warn("send DHCP reply", append(rep.attrs(), "to", rep.dst.String(), "err", sendErr)...)
		case rep.dst != nil:
			log.Info("DHCP "+d.Action(), append(rep.attrs(), "to", rep.dst.String())...)
		default:
			log.Info("DHCP "+d.Action(), rep.attrs()...)
		}
	}
	if s.OnEvent != nil {
		kind := events.DHCPIgnored
		switch d.Type {
		case dhcpv4.MessageTypeOffer:
			kind = events.DHCPOffer
		case dhcpv4.MessageTypeAck:
			kind = events.DHCPAck
		}
		s.OnEvent(Event{Time: now, Kind: kind, MAC: d.Client.MAC, XID: d.XID, Arch: d.Client.ArchName(),
			Peer: rep.from, File: d.Boot.File, Reason: d.Reason})
	}
}

// replyAddr is where a reply goes (RFC 2131 §4.1): a request on the PXE
// port is answered to its sender; on the DHCP port, a relayed one to the
// relay, one from a client with an address (ciaddr) to that address, any
// other by broadcast.
func (s *Server) replyAddr(req *dhcpv4.DHCPv4, on proxydhcp.Arrival, peer net.Addr) net.Addr {
	if on == proxydhcp.OnPXEPort {
		return peer
	}
	if gi := req.GatewayIPAddr.To4(); gi != nil && !gi.IsUnspecified() {
		return &net.UDPAddr{IP: slices.Clone(gi), Port: orDefault(s.RelayPort, proxydhcp.DHCPPort)}
	}
	port := orDefault(s.ClientPort, proxydhcp.DHCPClientPort)
	if ci := req.ClientIPAddr.To4(); ci != nil && !ci.IsUnspecified() {
		return &net.UDPAddr{IP: slices.Clone(ci), Port: port}
	}
	if s.bcast == nil || s.bcast.Port != port {
		return &net.UDPAddr{IP: net.IPv4bcast, Port: port}
	}
	return s.bcast
}

func addrPort(a net.Addr) netip.AddrPort {
	if u, ok := a.(*net.UDPAddr); ok {
		ap := u.AddrPort()
		return netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())
	}
	return netip.AddrPort{}
}
