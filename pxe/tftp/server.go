package tftp

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/pin/tftp/v3/netascii"
	"golang.org/x/net/ipv4"
	"golang.org/x/net/ipv6"

	"github.com/plasmactl/plasma-node/pxe/events"
)

// DefaultAddr is where [Server] listens when its Addr is empty: port 69
// of every address.
const DefaultAddr = ":69"

// maxName is the longest file name a TFTP request may carry, in bytes.
const maxName = 255

// ErrInvalidConfig is matched by the error of [Server.Serve] for a
// configuration it cannot serve, such as an empty Root.
var ErrInvalidConfig = errors.New("invalid TFTP configuration")

// Event is one download a [Server] served or refused, for the boot
// timeline of the machine at Peer and for metrics. TFTP requests name no
// MAC address: the caller links Peer to a machine by other means.
type Event struct {
	// Time is when it happened.
	Time time.Time
	// Kind says what happened: [events.TFTP] (a download completed) or
	// [events.TFTPFailed] (a request was refused or its transfer failed).
	Kind events.Kind
	// Peer is the address the request came from.
	Peer netip.AddrPort
	// File is the file requested: the name as sent when it was refused,
	// else its path in the root.
	File string
	// Bytes is the number of bytes sent.
	Bytes int64
	// Reason says why, in a short sentence.
	Reason string
}

// Server serves the files of one folder, read-only, over TFTP (RFC 1350)
// with the blksize and timeout (RFC 2348, 2349) and tsize (RFC 2349)
// options. Set its fields, then call [Server.Serve]; do not change them
// while it runs.
//
// It degrades rather than refuses under a storm: beyond MaxTransfers, or
// MaxTransfersPerClient of one client (an address; its IPv6 /64 together
// [source.PrefixShare] times that), a
// read request waits for a place
// (holding no descriptor) and is served when one frees, or when a
// stalled transfer is dropped for it; a client never gets an error
// packet for the server's load. Beyond maxWaiting requests a request
// is not answered, and the client's retransmission asks again.
//
// A requested name is looked up inside Root only: one leading '/' is
// dropped, since firmware and boot loaders commonly send "/ipxe.efi" for
// a file of the TFTP root (dnsmasq and tftp-hpa --secure do the same);
// any other absolute form ("//x"), "." or ".." elements, backslashes,
// control characters and NUL, names over maxName bytes, folders
// and symlinks that resolve outside Root (refused by [os.Root]) get a
// TFTP error. So do write requests.
type Server struct {
	// Root is the folder served. Required; it must exist when Serve starts.
	Root string
	// Addr is the UDP listen address. Default: [DefaultAddr]; port 69
	// needs root or CAP_NET_BIND_SERVICE. Ignored when Conn is set.
	Addr string
	// Conn, when set, is used instead of listening on Addr (tests, sockets
	// opened early); open it with [Listen]. Serve closes it when it
	// returns.
	Conn *net.UDPConn
	// Logger receives every request and transfer; nil discards them.
	Logger *slog.Logger
	// OnEvent, when set, is called when a download completes, fails or is
	// refused, from the transfer's goroutine; it must not block for long.
	OnEvent func(Event)
	// MaxTransfers bounds the transfers running at once; more wait.
	// Default: [DefaultMaxTransfers]; it is held within TFTP's
	// descriptor budget (a quarter of the process's limit), two
	// descriptors a transfer.
	MaxTransfers int
	// MaxTransfersPerClient bounds the transfers of one client (an IPv4
	// or IPv6 address) running at once, and [source.PrefixShare] times
	// it those of all the addresses of one IPv6 /64 (a segment's
	// machines each have their own; rotating addresses gains at most
	// that share); more wait. Default:
	// [DefaultMaxTransfersPerClient].
	MaxTransfersPerClient int
	// Files, when set, is asked first for each accepted name (relative to
	// the root, no leading '/'): it returns ok false for names it does not
	// serve, which are then looked up in Root; else either data (a small
	// generated file, sent as is) or f (an open regular file from
	// elsewhere, held while the request waits for a place and closed by
	// the transfer), or an error sent to the client as the refusal. It is
	// called from the socket's reading goroutine, once per request (never
	// per block), so it must be quick.
	Files func(ctx context.Context, name string, peer netip.AddrPort) (data []byte, f *os.File, ok bool, err error)
}

// stopWait is how long Serve waits for running transfers once its
// context ends.
const stopWait = 500 * time.Millisecond

// retryEvery is how often waiting requests are looked at for a stalled
// transfer to replace.
const retryEvery = 250 * time.Millisecond

// errShutdown ends the transfers still running when Serve's context ends.
var errShutdown = errors.New("server shutting down")

// Serve serves until ctx ends, then stops taking requests, ends running
// transfers at once with an error packet, waits briefly for them, closes
// the socket and returns ctx's error. It returns at once an error
// matching [ErrInvalidConfig] when Root is empty, one matching
// [fs.ErrNotExist] when Root is missing, or an error when the socket
// cannot be opened.
func (s *Server) Serve(ctx context.Context) error {
	if s.Root == "" {
		return fmt.Errorf("tftp server: %w: Root is empty: want the folder to serve", ErrInvalidConfig)
	}
	root, err := os.OpenRoot(s.Root)
	if err != nil {
		return fmt.Errorf("tftp root: %w", err)
	}
	defer root.Close()
	conn := s.Conn
	if conn == nil {
		addr := s.Addr
		if addr == "" {
			addr = DefaultAddr
		}
		c, err := Listen(ctx, addr)
		if err != nil {
			return fmt.Errorf("tftp server: %w", err)
		}
		conn = c
	}
	log := s.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	h := &handler{ctx: ctx, root: root, log: log, onEvent: s.OnEvent, files: s.Files, conn: conn, ts: newTransfers(s.limits(log)), mtus: map[int]int{}}
	log.Info("TFTP listening", "addr", conn.LocalAddr().String(), "root", s.Root)
	done := make(chan error, 1)
	go func() { done <- h.listen() }()
	tick := time.NewTicker(retryEvery)
	defer tick.Stop()
	for {
		select {
		case <-tick.C:
			for _, d := range h.ts.retry(time.Now()) {
				log.Warn("TFTP stalled transfer dropped for a waiting request", "peer", d.peer.String())
			}
		case <-ctx.Done():
			// Closing the socket stops new requests at once; running
			// transfers wake, send their error and end. Serve waits
			// for them only briefly, so that a window closes on time.
			conn.Close()
			<-done
			h.ts.stopAll()
			stopped := make(chan struct{})
			go func() { h.wg.Wait(); close(stopped) }()
			select {
			case <-stopped:
			case <-time.After(stopWait):
				n, _ := h.ts.count()
				log.Warn("TFTP transfers still running after the window closed; they end at their next block", "transfers", n)
			}
			return ctx.Err()
		case err := <-done:
			conn.Close()
			return fmt.Errorf("tftp server on %s: %w", conn.LocalAddr(), err)
		}
	}
}

// requestReadBuffer is the receive buffer [Listen] asks for on the
// socket that takes read requests: 4 MiB.
const requestReadBuffer = 4 << 20

// Listen opens the UDP socket for a [Server] on addr ("host:port")
// and asks the kernel for each request's destination address and
// interface: a transfer answers from the address its request came to,
// with blocks as large as the interface's MTU allows.
func Listen(ctx context.Context, addr string) (*net.UDPConn, error) {
	lc := net.ListenConfig{Control: freebind}
	pc, err := lc.ListenPacket(ctx, "udp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen on udp %s: %w", addr, err)
	}
	conn := pc.(*net.UDPConn)
	// A boot storm's read requests arrive at once: the default receive
	// buffer (about 200 KiB) held some hundred of them and dropped the
	// rest, which their clients sent again only after their timeout
	// (2 s and more). Best effort: the system's net.core.rmem_max caps it.
	_ = conn.SetReadBuffer(requestReadBuffer)
	if is6(conn) {
		err = ipv6.NewPacketConn(conn).SetControlMessage(ipv6.FlagDst|ipv6.FlagInterface, true)
	} else {
		err = ipv4.NewPacketConn(conn).SetControlMessage(ipv4.FlagDst|ipv4.FlagInterface, true)
	}
	if err != nil {
		conn.Close()
		return nil, fmt.Errorf("listen on udp %s: ask for packet info: %w", addr, err)
	}
	return conn, nil
}

func is6(conn *net.UDPConn) bool {
	la, ok := conn.LocalAddr().(*net.UDPAddr)
	return ok && la.IP.To4() == nil && !la.IP.IsUnspecified()
}

// limits returns the transfer bounds with the defaults filled in and the
// descriptor budget applied.
func (s *Server) limits(log *slog.Logger) (maxTransfers, perClient int) {
	maxTransfers, perClient = s.MaxTransfers, s.MaxTransfersPerClient
	if maxTransfers <= 0 {
		maxTransfers = DefaultMaxTransfers
	}
	if perClient <= 0 {
		perClient = DefaultMaxTransfersPerClient
	}
	if budget := descriptorBudget(); maxTransfers > budget/2 {
		log.Warn("TFTP transfers held to the descriptor budget", "max_transfers", budget/2, "asked", maxTransfers, "budget", budget)
		maxTransfers = max(budget/2, 1)
	}
	return maxTransfers, min(perClient, maxTransfers)
}

type handler struct {
	ts      *transfers
	ctx     context.Context
	root    *os.Root
	log     *slog.Logger
	onEvent func(Event)
	files   func(ctx context.Context, name string, peer netip.AddrPort) ([]byte, *os.File, bool, error)
	conn    *net.UDPConn
	wg      sync.WaitGroup
	// mtus caches each interface's largest block by index; only listen
	// uses it. hdr is the IP and UDP headers' size.
	mtus map[int]int
	hdr  int
	// readers are the file readers of the transfers, each with
	// fileBuffer bytes, reused: a transfer reads its file in pieces of
	// fileBuffer rather than with one read(2) per block.
	readers sync.Pool
}

// fileBuffer is what a transfer reads of its file at once: 11 blocks of
// 1 468 bytes, 32 of 512. At the default 1 024 transfers, 16 MiB.
const fileBuffer = 16 << 10

// listen reads requests until the socket closes.
func (h *handler) listen() error {
	buf := make([]byte, maxRequest)
	var read func() (int, netip.AddrPort, net.IP, int, error)
	h.hdr = 20 + 8
	if is6(h.conn) {
		h.hdr = 40 + 8
		pc := ipv6.NewPacketConn(h.conn)
		// The wrapper reads the packet info only when asked through it.
		if err := pc.SetControlMessage(ipv6.FlagDst|ipv6.FlagInterface, true); err != nil {
			return fmt.Errorf("ask for packet info: %w", err)
		}
		read = func() (int, netip.AddrPort, net.IP, int, error) {
			n, cm, src, err := pc.ReadFrom(buf)
			if cm == nil {
				return n, addrPortOf(src), nil, 0, err
			}
			return n, addrPortOf(src), cm.Dst, cm.IfIndex, err
		}
	} else {
		pc := ipv4.NewPacketConn(h.conn)
		if err := pc.SetControlMessage(ipv4.FlagDst|ipv4.FlagInterface, true); err != nil {
			return fmt.Errorf("ask for packet info: %w", err)
		}
		read = func() (int, netip.AddrPort, net.IP, int, error) {
			n, cm, src, err := pc.ReadFrom(buf)
			if cm == nil {
				return n, addrPortOf(src), nil, 0, err
			}
			return n, addrPortOf(src), cm.Dst, cm.IfIndex, err
		}
	}
	for {
		n, from, dst, ifIndex, err := read()
		if err != nil {
			if h.ctx.Err() != nil || errors.Is(err, net.ErrClosed) {
				return nil
			}
			return err
		}
		if !from.IsValid() {
			continue
		}
		h.request(buf[:n], from, dst, h.mtu(ifIndex))
	}
}

// mtu is the largest block the interface carries, or 512 when unknown.
func (h *handler) mtu(ifIndex int) int {
	if m, ok := h.mtus[ifIndex]; ok {
		return m
	}
	m := defaultBlockSize
	if ifi, err := net.InterfaceByIndex(ifIndex); err == nil && ifi.MTU > 0 {
		m = max(ifi.MTU-h.hdr-4, defaultBlockSize) // and the DATA header
	}
	if len(h.mtus) < 64 {
		h.mtus[ifIndex] = m
	}
	return m
}

func addrPortOf(a net.Addr) netip.AddrPort {
	if u, ok := a.(*net.UDPAddr); ok {
		ap := u.AddrPort()
		return netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())
	}
	return netip.AddrPort{}
}

func (h *handler) event(kind events.Kind, peer netip.AddrPort, file string, n int64, reason string) {
	if h.onEvent != nil {
		h.onEvent(Event{Time: time.Now(), Kind: kind, Peer: peer, File: file, Bytes: n, Reason: reason})
	}
}

// refuse logs and reports a refused request and sends the client its
// error; the reason names no path of this machine.
func (h *handler) refuse(from netip.AddrPort, file, reason string) {
	h.log.Warn("TFTP request refused", "peer", from.String(), "file", file, "reason", reason)
	h.event(events.TFTPFailed, from, file, 0, reason)
	h.conn.WriteToUDPAddrPort(errorPacket(reason), from) //nolint:errcheck // best effort, as any UDP reply
}

// request answers one packet on the server's port.
func (h *handler) request(p []byte, from netip.AddrPort, dst net.IP, mtu int) {
	r, err := parseRequest(p)
	if err != nil || (r.op != opRRQ && r.op != opWRQ) {
		return // not a request: nothing to answer
	}
	if r.op == opWRQ {
		h.refuse(from, r.name, "access violation: this TFTP server is read-only")
		return
	}
	if h.ctx.Err() != nil {
		h.refuse(from, r.name, errShutdown.Error())
		return
	}
	name, err := checkName(r.name)
	if err != nil {
		h.refuse(from, r.name, err.Error())
		return
	}
	var src *given
	if h.files != nil {
		data, f, ok, err := h.files(h.ctx, name, from)
		if err != nil {
			h.refuse(from, r.name, err.Error())
			return
		}
		if ok {
			src = &given{data: data, f: f}
		}
	}
	// Whether the file can be served is known before the request waits.
	if src == nil {
		fi, err := h.root.Stat(name)
		if errors.Is(err, fs.ErrNotExist) {
			h.refuse(from, r.name, "file not found")
			return
		}
		if err != nil {
			// Escapes through symlinks and permission errors alike.
			h.refuse(from, r.name, "access violation: file cannot be read from the TFTP root")
			return
		}
		if !fi.Mode().IsRegular() {
			h.refuse(from, r.name, "access violation: not a regular file")
			return
		}
	}
	var local net.IP
	if dst != nil && !dst.IsMulticast() && !dst.Equal(net.IPv4bcast) {
		local = dst
	}
	start := func(t *transfer) {
		h.wg.Add(1)
		go func() {
			defer h.wg.Done()
			h.serve(t, r, name, from, local, mtu, src)
		}()
	}
	o, dropped := h.ts.request(from, time.Now(), start)
	if o == full && src != nil && src.f != nil {
		src.f.Close()
	}
	if dropped != nil {
		h.log.Warn("TFTP stalled transfer dropped for a new request", "peer", dropped.peer.String(), "for", from.String())
	}
	switch o {
	case queued:
		h.log.Debug("TFTP request waits for a place", "peer", from.String(), "file", name)
	case full:
		h.log.Debug("TFTP request not answered: too many wait", "peer", from.String(), "file", name)
	}
}

// given is what [Server.Files] gave for a request: generated bytes, or
// an open file.
type given struct {
	data []byte
	f    *os.File
}

// serve runs the transfer t has the place for, and gives the place back.
// src, when set, is the request's content from [Server.Files].
func (h *handler) serve(t *transfer, r request, name string, from netip.AddrPort, local net.IP, mtu int, src *given) {
	defer h.ts.done(t, from, time.Now())
	fail := func(reason string, n int64) {
		h.log.Warn("TFTP transfer failed", "peer", from.String(), "file", name, "bytes", n, "err", reason)
		h.event(events.TFTPFailed, from, name, n, "transfer failed: "+reason)
	}
	var content io.Reader
	var size int64
	switch {
	case src != nil && src.f == nil:
		content, size = bytes.NewReader(src.data), int64(len(src.data))
	default:
		f := (*os.File)(nil)
		if src != nil {
			f = src.f
		} else {
			var err error
			if f, err = h.root.Open(name); err != nil {
				h.refuse(from, r.name, "access violation: file cannot be read from the TFTP root")
				return
			}
		}
		defer f.Close()
		fi, err := f.Stat()
		if err != nil || !fi.Mode().IsRegular() {
			h.refuse(from, r.name, "access violation: not a regular file")
			return
		}
		br, _ := h.readers.Get().(*bufio.Reader)
		if br == nil {
			br = bufio.NewReaderSize(f, fileBuffer)
		} else {
			br.Reset(f)
		}
		defer func() {
			br.Reset(nil)
			h.readers.Put(br)
		}()
		content, size = br, fi.Size()
	}
	conn, err := net.DialUDP("udp", &net.UDPAddr{IP: local}, net.UDPAddrFromAddrPort(from))
	if err != nil {
		fail("cannot open the transfer's socket: "+err.Error(), 0)
		return
	}
	defer conn.Close()
	if !h.ts.opened(t, conn) {
		conn.Write(errorPacket(errDropped.Error())) //nolint:errcheck // best effort
		fail(errDropped.Error(), 0)
		return
	}
	rd := content
	if strings.EqualFold(r.mode, "netascii") {
		rd, size = netascii.ToReader(content), -1
	}
	block, timeout, oack := negotiate(r, size, mtu)
	snd := newSender(conn, from, t, block, timeout, func() bool { return h.ctx.Err() != nil })
	began := time.Now()
	n, err := snd.run(oack, rd)
	if err != nil {
		var ce *clientError
		if !errors.As(err, &ce) && !errors.Is(err, errClientGone) {
			conn.Write(errorPacket(err.Error())) //nolint:errcheck // best effort
		}
		fail(err.Error(), n)
		return
	}
	h.log.Info("TFTP sent", "peer", from.String(), "file", name, "bytes", n, "duration", time.Since(began).String())
	h.event(events.TFTP, from, name, n, "download complete")
}

// checkName turns a requested name into a path relative to the TFTP root,
// or says why it is refused.
func checkName(name string) (string, error) {
	if len(name) > maxName {
		return "", fmt.Errorf("access violation: name longer than %d bytes", maxName)
	}
	for _, r := range name {
		if r < 0x20 || r == 0x7f {
			return "", errors.New("access violation: control character or NUL in name")
		}
	}
	if strings.Contains(name, `\`) {
		return "", errors.New(`access violation: backslash in name, want '/' separators`)
	}
	rel := strings.TrimPrefix(name, "/")
	if rel == "" || !fs.ValidPath(rel) || rel == "." {
		return "", errors.New("access violation: name leaves the TFTP root or is not a clean relative path")
	}
	return rel, nil
}
