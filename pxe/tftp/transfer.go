package tftp

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"syscall"
	"time"
)

// errClientGone ends a transfer whose client stopped acknowledging.
var errClientGone = errors.New("no acknowledgement from the client")

// sender runs one download on its own socket (its transfer id),
// connected to the client as tftpd-hpa's is: DATA blocks in lock step
// with the client's ACKs (RFC 1350), after an OACK when options were
// answered. A connected socket sends without a route lookup or an
// address per packet and gets only the client's packets: one from
// another transfer id is turned away by the kernel (ICMP port
// unreachable) rather than answered with an ERROR. Its buffers are made
// once, so the block loop allocates nothing.
type sender struct {
	conn    *net.UDPConn
	peer    netip.AddrPort
	t       *transfer
	stopped func() bool
	timeout time.Duration
	data    []byte // 4-byte header and one block
	in      []byte // an ACK, or a client's ERROR (cut at 1 KiB)
	// clock returns the time; it is time.Now outside tests.
	clock func() time.Time
}

func newSender(conn *net.UDPConn, peer netip.AddrPort, t *transfer, block int, timeout time.Duration, stopped func() bool) *sender {
	return &sender{conn: conn, peer: peer, t: t, stopped: stopped, timeout: timeout,
		data: make([]byte, 4+block), in: make([]byte, 1024), clock: time.Now}
}

// run sends oack (when not nil) and then r, and returns the bytes sent.
// It ends with an error when the client went away, sent an error, the
// transfer was dropped or the server stops; the caller sends the
// client an error packet for the last two.
func (s *sender) run(oack []byte, r io.Reader) (int64, error) {
	if oack != nil {
		if err := s.exchange(oack, 0); err != nil {
			return 0, err
		}
	}
	binary.BigEndian.PutUint16(s.data, opDATA)
	var sent int64
	for block := uint16(1); ; block++ {
		if err := s.check(); err != nil {
			return sent, err
		}
		n, err := io.ReadFull(r, s.data[4:])
		if err != nil && err != io.EOF && err != io.ErrUnexpectedEOF {
			return sent, fmt.Errorf("read the file: %w", err)
		}
		binary.BigEndian.PutUint16(s.data[2:], block)
		if err := s.exchange(s.data[:4+n], block); err != nil {
			return sent, err
		}
		sent += int64(n)
		if n < len(s.data)-4 {
			return sent, nil
		}
	}
}

// check reports a dropped transfer or a stopping server.
func (s *sender) check() error {
	if s.stopped() {
		return errShutdown
	}
	if s.t.dropped.Load() {
		return errDropped
	}
	return nil
}

// exchange sends p until the client acknowledges block, at most Retries
// times more. Acknowledgements of earlier blocks are ignored, not
// answered (that would send every later block twice).
func (s *sender) exchange(p []byte, block uint16) error {
	for try := 0; try <= Retries; try++ {
		if _, err := s.conn.Write(p); err != nil {
			return fmt.Errorf("send block %d: %w", block, err)
		}
		deadline := s.clock().Add(s.timeout)
		for {
			if err := s.conn.SetReadDeadline(deadline); err != nil {
				return err
			}
			// A drop or a stop sets a past deadline: checked after our
			// own, so that neither is missed.
			if err := s.check(); err != nil {
				return err
			}
			n, err := s.conn.Read(s.in)
			if err != nil {
				if cerr := s.check(); cerr != nil {
					return cerr
				}
				var ne net.Error
				if errors.As(err, &ne) && ne.Timeout() {
					break // send again
				}
				if errors.Is(err, syscall.ECONNREFUSED) {
					// The client's port is closed (ICMP port unreachable
					// on the connected socket): it went away.
					return errClientGone
				}
				return fmt.Errorf("wait for the acknowledgement of block %d: %w", block, err)
			}
			if n < 4 {
				continue
			}
			switch binary.BigEndian.Uint16(s.in) {
			case opACK:
				if binary.BigEndian.Uint16(s.in[2:]) == block {
					s.t.last.Store(s.clock().UnixNano())
					return nil
				}
			case opERROR:
				return &clientError{msg: cString(s.in[4:n])}
			}
		}
		if err := s.check(); err != nil {
			return err
		}
	}
	return errClientGone
}

// clientError is an ERROR packet the client sent: it ended the transfer.
type clientError struct{ msg string }

func (e *clientError) Error() string { return "the client ended the transfer: " + e.msg }

// cString is a NUL-ended string.
func cString(b []byte) string {
	for i, c := range b {
		if c == 0 {
			return string(b[:i])
		}
	}
	return string(b)
}
