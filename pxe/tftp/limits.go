package tftp

import (
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Bounds on the transfers a [Server] runs at once.
const (
	// DefaultMaxTransfers is how many transfers run at once: 50, as
	// dnsmasq's tftp-max. PXE firmware fetches one iPXE binary of at
	// most a few hundred KiB per machine, so 50 machines booting at
	// once each still get theirs in well under a second on a LAN.
	DefaultMaxTransfers = 50
	// DefaultMaxTransfersPerClient is how many transfers one client
	// address runs at once: 4. Firmware fetches one file at a time; a
	// retry may overlap the attempt it replaces.
	DefaultMaxTransfersPerClient = 4
	// StallTime is how long a transfer may wait for its client's
	// acknowledgement before it counts as stalled. When the server or a
	// client is at its bound, a new request drops the transfer stalled
	// longest to take its place, and is refused when none is stalled.
	// On a LAN a block is acknowledged within milliseconds.
	StallTime = 2 * time.Second
)

// errDropped ends a stalled transfer dropped for a new one.
var errDropped = errors.New("transfer dropped: stalled while the server was at its bound")

// transfer is one running download.
type transfer struct {
	peer netip.Addr
	// last is when the client last acknowledged a block (UnixNano).
	last    atomic.Int64
	dropped atomic.Bool
	file    *os.File // set once open; closed by a drop
}

// transfers admits and tracks the running transfers under the bounds.
//
// Each request has its own socket, opened by the TFTP library before the
// request is seen; it closes when the request's handler returns, which
// for a dropped transfer is when the library gives up on its client
// (5 retransmissions 5 s apart). live counts those handlers, so that
// sockets plus open files stay within budget descriptors.
type transfers struct {
	max, maxPerClient, budget int
	mu                        sync.Mutex
	running                   map[*transfer]struct{}
	perClient                 map[netip.Addr]int
	live                      int
}

func newTransfers(max, maxPerClient, budget int) *transfers {
	return &transfers{max: max, maxPerClient: maxPerClient, budget: budget, running: map[*transfer]struct{}{}, perClient: map[netip.Addr]int{}}
}

// enter counts a request's handler, and with it the request's socket.
func (ts *transfers) enter() {
	ts.mu.Lock()
	ts.live++
	ts.mu.Unlock()
}

// leave uncounts a request's handler.
func (ts *transfers) leave() {
	ts.mu.Lock()
	ts.live--
	ts.mu.Unlock()
}

// admit takes a place for a transfer to peer, dropping the transfer
// stalled longest when the server or the client is at its bound. It
// returns the dropped transfer, if any, for the caller to report.
func (ts *transfers) admit(peer netip.Addr, now time.Time) (t, dropped *transfer, err error) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if ts.perClient[peer] >= ts.maxPerClient {
		if dropped = ts.stalledLongest(now, peer); dropped == nil {
			return nil, nil, fmt.Errorf("too many transfers from this client (%d)", ts.maxPerClient)
		}
		ts.drop(dropped)
	}
	if len(ts.running) >= ts.max {
		if dropped = ts.stalledLongest(now, netip.Addr{}); dropped == nil {
			return nil, nil, fmt.Errorf("server busy: %d transfers running", ts.max)
		}
		ts.drop(dropped)
	}
	// Sockets of live handlers, the files of running transfers and this
	// one's file.
	if ts.live+len(ts.running)+1 > ts.budget {
		return nil, dropped, fmt.Errorf("server busy: %d sockets of stalled transfers still open", ts.live)
	}
	t = &transfer{peer: peer}
	t.last.Store(now.UnixNano())
	ts.running[t] = struct{}{}
	ts.perClient[peer]++
	return t, dropped, nil
}

// stalledLongest returns the running transfer (of peer, when valid)
// that has waited longest for an acknowledgement, at least StallTime.
func (ts *transfers) stalledLongest(now time.Time, peer netip.Addr) *transfer {
	var oldest *transfer
	limit := now.Add(-StallTime).UnixNano()
	for t := range ts.running {
		if peer.IsValid() && t.peer != peer {
			continue
		}
		if l := t.last.Load(); l <= limit && (oldest == nil || l < oldest.last.Load()) {
			oldest = t
		}
	}
	return oldest
}

// drop ends t's place: its file is closed at once, and its next block
// fails.
func (ts *transfers) drop(t *transfer) {
	ts.remove(t)
	t.dropped.Store(true)
	if t.file != nil {
		t.file.Close()
	}
}

func (ts *transfers) remove(t *transfer) {
	if _, ok := ts.running[t]; !ok {
		return
	}
	delete(ts.running, t)
	if ts.perClient[t.peer]--; ts.perClient[t.peer] <= 0 {
		delete(ts.perClient, t.peer)
	}
}

// opened records t's file, or closes it when t was dropped meanwhile.
func (ts *transfers) opened(t *transfer, f *os.File) bool {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if t.dropped.Load() {
		f.Close()
		return false
	}
	t.file = f
	return true
}

// done gives t's place back.
func (ts *transfers) done(t *transfer) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	ts.remove(t)
}

// count returns how many transfers run.
func (ts *transfers) count() int {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return len(ts.running)
}

// transferReader reads t's file a block at a time: each read means the
// client acknowledged the block before. It ends the transfer when the
// server stops or t was dropped.
type transferReader struct {
	stopped func() bool
	t       *transfer
	r       io.Reader
}

func (c transferReader) Read(p []byte) (int, error) {
	if c.stopped() {
		return 0, errShutdown
	}
	if c.t.dropped.Load() {
		return 0, errDropped
	}
	c.t.last.Store(time.Now().UnixNano())
	return c.r.Read(p)
}

// descriptorBudget is the descriptors TFTP may hold: a quarter of the
// process's limit (RLIMIT_NOFILE), leaving the rest to HTTP and DHCP.
// A running transfer holds two (its socket and its file), a dropped one
// its socket until the library gives up on it, a refused one its socket
// for the moment of sending the error.
func descriptorBudget() int {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil || rl.Cur > 1<<30 {
		return 1 << 30
	}
	return max(int(rl.Cur/4), 1)
}
