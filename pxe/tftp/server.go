package tftp

import (
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
	"time"

	pintftp "github.com/pin/tftp/v3"
	"golang.org/x/net/ipv4"
	"golang.org/x/net/ipv6"

	"github.com/plasmactl/plasma-node/pxe/events"
)

// DefaultAddr is where [Server] listens when its Addr is empty: port 69
// of every address.
const DefaultAddr = ":69"

// MaxName is the longest file name a TFTP request may carry, in bytes.
const MaxName = 255

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
// with the blksize (RFC 2348) and tsize (RFC 2349) options. Set its
// fields, then call [Server.Serve]; do not change them while it runs.
//
// A requested name is looked up inside Root only: one leading '/' is
// dropped, since firmware and boot loaders commonly send "/ipxe.efi" for
// a file of the TFTP root (dnsmasq and tftp-hpa --secure do the same);
// any other absolute form ("//x"), "." or ".." elements, backslashes,
// control characters and NUL, names over [MaxName] bytes, folders
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
	// MaxTransfers bounds the transfers running at once. Default:
	// [DefaultMaxTransfers]; it is held within TFTP's descriptor budget
	// (see [Server.Serve]), two descriptors a transfer.
	MaxTransfers int
	// MaxTransfersPerClient bounds the transfers of one client address.
	// Default: [DefaultMaxTransfersPerClient].
	MaxTransfersPerClient int
}

// stopWait is how long Serve waits for running transfers once its
// context ends.
const stopWait = 500 * time.Millisecond

// errShutdown ends the transfers still running when Serve's context ends.
var errShutdown = errors.New("server shutting down")

// Serve serves until ctx ends, then stops taking requests, ends running
// transfers at their next block, waits for them to send their error
// packet, closes the socket and returns ctx's error. It returns at once
// an error matching [ErrInvalidConfig] when Root is empty, one matching
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
	h := &handler{ctx: ctx, root: root, log: log, onEvent: s.OnEvent, ts: newTransfers(s.limits(log))}
	srv := pintftp.NewServer(h.read, h.write)
	log.Info("TFTP listening", "addr", conn.LocalAddr().String(), "root", s.Root)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(conn) }()
	select {
	case <-ctx.Done():
		// Shutdown closes the listening socket at once, so no new request
		// is served; running transfers end at their next block or their
		// own timeout. Serve waits for them only briefly, so that a
		// window closes on time even with a client that went away.
		stopped := make(chan struct{})
		go func() {
			srv.Shutdown()
			<-done
			conn.Close()
			close(stopped)
		}()
		select {
		case <-stopped:
		case <-time.After(stopWait):
			log.Warn("TFTP transfers still running after the window closed; they end at their timeout", "transfers", h.ts.count())
		}
		return ctx.Err()
	case err := <-done:
		conn.Close()
		return fmt.Errorf("tftp server on %s: %w", conn.LocalAddr(), err)
	}
}

// Listen opens the UDP socket for a [Server] on addr ("host:port")
// and asks the kernel for each request's destination address and
// interface. The TFTP library needs them to answer from the address the
// request came to and to allow blocks larger than 512 bytes: a request
// queued before they are asked for is held to 512-byte blocks.
func Listen(ctx context.Context, addr string) (*net.UDPConn, error) {
	var lc net.ListenConfig
	pc, err := lc.ListenPacket(ctx, "udp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen on udp %s: %w", addr, err)
	}
	conn := pc.(*net.UDPConn)
	if la, ok := conn.LocalAddr().(*net.UDPAddr); ok && la.IP.To4() == nil && !la.IP.IsUnspecified() {
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

// limits returns the transfer bounds with the defaults filled in and the
// descriptor budget applied.
func (s *Server) limits(log *slog.Logger) (maxTransfers, perClient, budget int) {
	maxTransfers, perClient = s.MaxTransfers, s.MaxTransfersPerClient
	if maxTransfers <= 0 {
		maxTransfers = DefaultMaxTransfers
	}
	if perClient <= 0 {
		perClient = DefaultMaxTransfersPerClient
	}
	budget = descriptorBudget()
	if maxTransfers > budget/2 {
		log.Warn("TFTP transfers held to the descriptor budget", "max_transfers", budget/2, "asked", maxTransfers, "budget", budget)
		maxTransfers = max(budget/2, 1)
	}
	return maxTransfers, min(perClient, maxTransfers), budget
}

type handler struct {
	ts      *transfers
	ctx     context.Context
	root    *os.Root
	log     *slog.Logger
	onEvent func(Event)
}

func (h *handler) event(kind events.Kind, peer netip.AddrPort, file string, n int64, reason string) {
	if h.onEvent != nil {
		h.onEvent(Event{Time: time.Now(), Kind: kind, Peer: peer, File: file, Bytes: n, Reason: reason})
	}
}

// refuse logs and reports a refused request and returns the error the
// client is sent; it names no path of this machine.
func (h *handler) refuse(peer netip.AddrPort, file, reason string) error {
	h.log.Warn("TFTP request refused", "peer", peer.String(), "file", file, "reason", reason)
	h.event(events.TFTPFailed, peer, file, 0, reason)
	return errors.New(reason)
}

func (h *handler) read(filename string, rf io.ReaderFrom) error {
	var peer netip.AddrPort
	if ot, ok := rf.(pintftp.OutgoingTransfer); ok {
		peer = udpAddrPort(ot.RemoteAddr())
	}
	if h.ctx.Err() != nil {
		return h.refuse(peer, filename, errShutdown.Error())
	}
	name, err := checkName(filename)
	if err != nil {
		return h.refuse(peer, filename, err.Error())
	}
	h.ts.enter()
	defer h.ts.leave()
	t, dropped, err := h.ts.admit(peer.Addr(), time.Now())
	if err != nil {
		return h.refuse(peer, filename, err.Error())
	}
	defer h.ts.done(t)
	if dropped != nil {
		h.log.Warn("TFTP stalled transfer dropped for a new request", "peer", dropped.peer.String(), "for", peer.String())
	}
	f, err := h.root.Open(name)
	if errors.Is(err, fs.ErrNotExist) {
		return h.refuse(peer, filename, "file not found")
	}
	if err != nil {
		// Escapes through symlinks and permission errors alike.
		return h.refuse(peer, filename, "access violation: file cannot be read from the TFTP root")
	}
	defer f.Close()
	if !h.ts.opened(t, f) {
		return errDropped
	}
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return h.refuse(peer, filename, "access violation: not a regular file")
	}
	if ot, ok := rf.(pintftp.OutgoingTransfer); ok {
		ot.SetSize(fi.Size())
	}
	start := time.Now()
	n, err := rf.ReadFrom(transferReader{stopped: func() bool { return h.ctx.Err() != nil }, t: t, r: f})
	if err != nil {
		h.log.Warn("TFTP transfer failed", "peer", peer.String(), "file", name, "bytes", n, "err", err)
		h.event(events.TFTPFailed, peer, name, n, "transfer failed: "+err.Error())
		return err
	}
	h.log.Info("TFTP sent", "peer", peer.String(), "file", name, "bytes", n, "duration", time.Since(start).String())
	h.event(events.TFTP, peer, name, n, "download complete")
	return nil
}

func (h *handler) write(filename string, wt io.WriterTo) error {
	var peer netip.AddrPort
	if it, ok := wt.(pintftp.IncomingTransfer); ok {
		peer = udpAddrPort(it.RemoteAddr())
	}
	return h.refuse(peer, filename, "access violation: this TFTP server is read-only")
}

func udpAddrPort(a net.UDPAddr) netip.AddrPort {
	ap := a.AddrPort()
	return netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())
}

// checkName turns a requested name into a path relative to the TFTP root,
// or says why it is refused.
func checkName(name string) (string, error) {
	if len(name) > MaxName {
		return "", fmt.Errorf("access violation: name longer than %d bytes", MaxName)
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
