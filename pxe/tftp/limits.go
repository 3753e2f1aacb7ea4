package tftp

import (
	"errors"
	"net"
	"net/netip"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/plasmactl/plasma-node/pxe/internal/source"
)

// Bounds on the transfers a [Server] runs at once.
const (
	// DefaultMaxTransfers is how many transfers run at once: 1024. A
	// transfer waits on its client's acknowledgement most of the time
	// (lock step), so many at once cost little CPU, and a request must
	// start within its firmware's retries: at 50 (dnsmasq's tftp-max) a
	// storm of 1 000 machines fetching 1 MiB each kept the last ones
	// waiting past them (41 of 1 000 failed; at 512, those beyond 512
	// waited for the slower first ones, and 487 failed), while tftpd-hpa
	// serves them all at once. Each costs two descriptors and about
	// 12 KiB; more wait, holding neither.
	DefaultMaxTransfers = 1024
	// DefaultMaxTransfersPerClient is how many transfers one client (an
	// IPv4 or IPv6 address; an IPv6 /64 together runs
	// [source.PrefixShare] times as many) runs at once: 4. Firmware
	// fetches one file at a time; a retry may overlap the attempt it
	// replaces.
	DefaultMaxTransfersPerClient = 4
	// stallTime is how long a transfer may wait for its client's
	// acknowledgement before it counts as stalled. When the server or a
	// client is at its bound, a new request drops the transfer stalled
	// longest to take its place, and waits when none is stalled.
	// On a LAN a block is acknowledged within milliseconds.
	stallTime = 2 * time.Second
	// maxWaiting bounds the requests waiting for a place, and
	// maxWaitingPerClient those of one client; a request beyond them
	// is not answered, and its client's retransmission asks again.
	// Waiting requests hold no descriptor, only their few bytes.
	maxWaiting          = 8192
	maxWaitingPerClient = 1024
	// maxWait is how long a request waits at most: a client has given
	// up on it by then (PXE firmware retries for about 20 s).
	maxWait = 30 * time.Second
)

// errDropped ends a stalled transfer dropped for a new one.
var errDropped = errors.New("transfer dropped: stalled while the server was at its bound")

// transfer is one running download.
type transfer struct {
	// peer is the client's address, counted by the per-client bound
	// ([source.Counts]).
	peer netip.Addr
	// last is when the client last acknowledged a block (UnixNano).
	last    atomic.Int64
	dropped atomic.Bool
	// conn is the transfer's socket once open: a drop wakes it.
	conn *net.UDPConn
}

// wake makes the transfer's wait for an acknowledgement end at once.
func (t *transfer) wake() {
	if t.conn != nil {
		t.conn.SetReadDeadline(time.Unix(1, 0)) //nolint:errcheck // a closed socket needs no waking
	}
}

// waiting is a request waiting for a place.
type waiting struct {
	from    netip.AddrPort
	arrived time.Time
	start   func(*transfer)
}

// transfers admits and tracks the running transfers under the bounds.
// A request beyond them waits, holding no descriptor (newest first, see
// next):
// the TFTP socket of a transfer is opened once it has its place. So at
// most max transfers hold their two descriptors (socket and file), and a
// dropped transfer's socket is closed at once.
type transfers struct {
	max, maxPerClient int
	mu                sync.Mutex
	running           map[*transfer]struct{}
	// perClient and queuedBy count by client, two-level
	// ([source.Counts]): an IPv4 or IPv6 address, inside its /64.
	perClient source.Counts
	// ids are the client transfer ids (address and port) running (nil)
	// or waiting: a retransmitted request is not a second transfer.
	ids      map[netip.AddrPort]*waiting
	queue    []*waiting
	queuedBy source.Counts
}

func newTransfers(max, maxPerClient int) *transfers {
	return &transfers{max: max, maxPerClient: maxPerClient, running: map[*transfer]struct{}{},
		ids: map[netip.AddrPort]*waiting{}}
}

// Outcomes of [transfers.request].
type outcome int

const (
	started   outcome = iota // start was called with the transfer's place
	queued                   // it waits for a place
	duplicate                // the same client transfer id runs or waits already
	full                     // too many wait: not answered
)

// request gives the request from "from" a place and calls start with it
// (on this goroutine), or queues it for one; start is called later, on
// the goroutine that frees the place. At a bound, the transfer stalled
// longest (of the client, at the client's bound) is dropped for it
// first; dropped returns it, for the caller to report.
func (ts *transfers) request(from netip.AddrPort, now time.Time, start func(*transfer)) (o outcome, dropped *transfer) {
	ts.mu.Lock()
	if w, ok := ts.ids[from]; ok {
		if w != nil {
			// A waiting client asks again: it is alive, and goes to the
			// front (the newest wait is served first).
			ts.requeue(w, now)
		}
		ts.mu.Unlock()
		return duplicate, nil
	}
	t, dropped := ts.admit(from.Addr(), now)
	if t == nil {
		if len(ts.queue) >= maxWaiting || ts.queuedBy.Full(from.Addr(), maxWaitingPerClient) {
			ts.mu.Unlock()
			return full, dropped
		}
		w := &waiting{from: from, arrived: now, start: start}
		ts.queue = append(ts.queue, w)
		ts.queuedBy.Add(from.Addr(), 1)
		ts.ids[from] = w
		ts.mu.Unlock()
		return queued, dropped
	}
	ts.ids[from] = nil
	ts.mu.Unlock()
	start(t)
	return started, dropped
}

// admit takes a place for a transfer to peer, dropping the transfer
// stalled longest when the server or the client is at its bound, or
// returns nil when there is none. ts.mu is held.
func (ts *transfers) admit(peer netip.Addr, now time.Time) (t, dropped *transfer) {
	if full := ts.perClient.FullPrefix(peer, ts.maxPerClient); full.IsValid() {
		if dropped = ts.stalledLongest(now, full); dropped == nil {
			return nil, nil
		}
		ts.drop(dropped)
	}
	if len(ts.running) >= ts.max {
		var d *transfer
		if d = ts.stalledLongest(now, netip.Prefix{}); d == nil {
			return nil, dropped
		}
		ts.drop(d)
		dropped = d
	}
	t = &transfer{peer: peer}
	t.last.Store(now.UnixNano())
	ts.running[t] = struct{}{}
	ts.perClient.Add(peer, 1)
	return t, dropped
}

// stalledLongest returns the running transfer (of a peer inside src,
// when valid: a client's address or /64) that has waited longest for an
// acknowledgement, at least stallTime.
func (ts *transfers) stalledLongest(now time.Time, src netip.Prefix) *transfer {
	var oldest *transfer
	limit := now.Add(-stallTime).UnixNano()
	for t := range ts.running {
		if src.IsValid() && !src.Contains(source.AddrOf(t.peer).Addr()) {
			continue
		}
		if l := t.last.Load(); l <= limit && (oldest == nil || l < oldest.last.Load()) {
			oldest = t
		}
	}
	return oldest
}

// drop ends t's place: its wait for an acknowledgement ends at once, it
// sends its client an error and closes its socket and file.
func (ts *transfers) drop(t *transfer) {
	ts.remove(t)
	t.dropped.Store(true)
	t.wake()
}

func (ts *transfers) remove(t *transfer) {
	if _, ok := ts.running[t]; !ok {
		return
	}
	delete(ts.running, t)
	ts.perClient.Add(t.peer, -1)
}

// opened records t's socket, or reports that t was dropped meanwhile.
func (ts *transfers) opened(t *transfer, conn *net.UDPConn) bool {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if t.dropped.Load() {
		return false
	}
	t.conn = conn
	return true
}

// done gives t's place back (and forgets the client transfer id from)
// and starts the requests that wait for it.
func (ts *transfers) done(t *transfer, from netip.AddrPort, now time.Time) {
	ts.mu.Lock()
	ts.remove(t)
	delete(ts.ids, from)
	next := ts.next(now)
	ts.mu.Unlock()
	for _, n := range next {
		n.w.start(n.t)
	}
}

// retry starts the waiting requests that now have a place, for instance
// because a transfer stalled meanwhile, and forgets those that waited
// longer than maxWait. It returns the transfers dropped for them.
func (ts *transfers) retry(now time.Time) (dropped []*transfer) {
	ts.mu.Lock()
	var next []admitted
	for {
		d := ts.droppedFor(now)
		next = append(next, ts.next(now)...)
		if len(d) == 0 {
			break
		}
		dropped = append(dropped, d...)
	}
	ts.mu.Unlock()
	for _, n := range next {
		n.w.start(n.t)
	}
	return dropped
}

// droppedFor drops a stalled transfer for the newest waiting request
// that has no place: one of its client's when the client is at its
// bound, else the one stalled longest. ts.mu is held.
func (ts *transfers) droppedFor(now time.Time) []*transfer {
	var out []*transfer
	for i := len(ts.queue) - 1; i >= 0; i-- {
		w := ts.queue[i]
		if now.Sub(w.arrived) > maxWait {
			continue // next() forgets it
		}
		src := ts.perClient.FullPrefix(w.from.Addr(), ts.maxPerClient)
		clientFull := src.IsValid()
		if !clientFull && len(ts.running) < ts.max {
			break // next() admits it
		}
		var d *transfer
		if clientFull {
			d = ts.stalledLongest(now, src)
		} else {
			d = ts.stalledLongest(now, netip.Prefix{})
		}
		if d == nil {
			if clientFull {
				continue // a request of another client may have a place
			}
			break
		}
		ts.drop(d)
		out = append(out, d)
		break // one place at a time: next() admits w
	}
	return out
}

// requeue moves w to the end of the queue, the newest, as if it had just
// arrived. ts.mu is held.
func (ts *transfers) requeue(w *waiting, now time.Time) {
	if i := slices.Index(ts.queue, w); i >= 0 {
		ts.queue = append(slices.Delete(ts.queue, i, i+1), w)
	}
	w.arrived = now
}

type admitted struct {
	w *waiting
	t *transfer
}

// next takes the waiting requests that have a place now, newest first,
// skipping those whose client is at its bound, and forgets those that
// waited too long. Newest first: a request that is waiting and asks
// again (its client is alive) becomes the newest, while a flood of
// requests that are never repeated (and never acknowledged) cannot keep
// a real client behind it. ts.mu is held.
func (ts *transfers) next(now time.Time) []admitted {
	var out []admitted
	gone := 0
	for i := len(ts.queue) - 1; i >= 0; i-- {
		w := ts.queue[i]
		switch {
		case now.Sub(w.arrived) > maxWait:
		case len(ts.running) < ts.max && !ts.perClient.Full(w.from.Addr(), ts.maxPerClient):
			t := &transfer{peer: w.from.Addr()}
			t.last.Store(now.UnixNano())
			ts.running[t] = struct{}{}
			ts.perClient.Add(t.peer, 1)
			ts.ids[w.from] = nil
			out = append(out, admitted{w, t})
		default:
			continue
		}
		if now.Sub(w.arrived) > maxWait {
			delete(ts.ids, w.from)
		}
		ts.unqueue(w)
		ts.queue[i] = nil
		gone++
	}
	if gone > 0 {
		ts.queue = slices.DeleteFunc(ts.queue, func(w *waiting) bool { return w == nil })
	}
	return out
}

func (ts *transfers) unqueue(w *waiting) {
	ts.queuedBy.Add(w.from.Addr(), -1)
}

// count returns how many transfers run and how many requests wait.
func (ts *transfers) count() (running, waiting int) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return len(ts.running), len(ts.queue)
}

// stopAll wakes every running transfer, for it to see the server stop.
func (ts *transfers) stopAll() {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	for t := range ts.running {
		t.wake()
	}
	for _, w := range ts.queue {
		delete(ts.ids, w.from)
	}
	ts.queue, ts.queuedBy = nil, source.Counts{}
}

// descriptorBudget is the descriptors TFTP may hold: a quarter of the
// process's limit (RLIMIT_NOFILE), leaving the rest to HTTP and DHCP.
// A running transfer holds two (its socket and its file); a waiting
// request none.
func descriptorBudget() int {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil || rl.Cur > 1<<30 {
		return 1 << 30
	}
	return max(int(rl.Cur/4), 1)
}
