package tftp

import (
	"context"
	"log/slog"
	"net"
	"net/netip"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/plasmactl/plasma-node/pxe/internal/pxetest"
)

func TestRequestsAtABoundWait(t *testing.T) {
	a, b, c := netip.MustParseAddr("10.0.0.1"), netip.MustParseAddr("10.0.0.2"), netip.MustParseAddr("10.0.0.3")
	now := time.Now()
	type running struct {
		peer netip.Addr
		idle time.Duration // since its last acknowledgement
	}
	tests := map[string]struct {
		max, perClient int
		running        []running
		peer           netip.Addr
		want           outcome
		wantDropped    int // index in running, -1 for none
	}{
		"under the bounds a request starts": {
			max: 2, perClient: 2, running: []running{{a, 10 * time.Second}}, peer: b, want: started, wantDropped: -1,
		},
		"at the server's bound with none stalled a request waits": {
			max: 2, perClient: 2, running: []running{{a, time.Second}, {b, 0}}, peer: c, want: queued, wantDropped: -1,
		},
		"at the server's bound the transfer stalled longest is dropped": {
			max: 3, perClient: 2, running: []running{{a, 3 * time.Second}, {b, 9 * time.Second}, {a, 0}}, peer: c, want: started, wantDropped: 1,
		},
		"at a client's bound with none of its own stalled it waits": {
			max: 9, perClient: 1, running: []running{{a, 0}, {b, 9 * time.Second}}, peer: a, want: queued, wantDropped: -1,
		},
		"at a client's bound its own stalled transfer is dropped, not another's": {
			max: 9, perClient: 2, running: []running{{a, 3 * time.Second}, {b, 9 * time.Second}, {a, 0}}, peer: a, want: started, wantDropped: 0,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			ts := newTransfers(tc.max, tc.perClient)
			var ran []*transfer
			for i, r := range tc.running {
				o, _ := ts.request(netip.AddrPortFrom(r.peer, uint16(1000+i)), now, func(tr *transfer) {
					tr.last.Store(now.Add(-r.idle).UnixNano())
					ran = append(ran, tr)
				})
				if o != started {
					t.Fatalf("running transfer %d: outcome %d", i, o)
				}
			}
			var got *transfer
			o, dropped := ts.request(netip.AddrPortFrom(tc.peer, 2000), now, func(tr *transfer) { got = tr })
			if o != tc.want {
				t.Fatalf("outcome %d, want %d", o, tc.want)
			}
			if (got != nil) != (tc.want == started) {
				t.Errorf("start called: %v, want %v", got != nil, tc.want == started)
			}
			want := -1
			for i, r := range ran {
				if r == dropped {
					want = i
				}
			}
			if diff := cmp.Diff(tc.wantDropped, want); diff != "" {
				t.Errorf("dropped (-want +got):\n%s", diff)
			}
			if dropped != nil && !dropped.dropped.Load() {
				t.Error("the dropped transfer does not know it")
			}
		})
	}
}

func TestWaitingRequestsStartNewestFirstAsPlacesFree(t *testing.T) {
	a, b := netip.MustParseAddr("10.0.0.1"), netip.MustParseAddr("10.0.0.2")
	now := time.Now()
	ts := newTransfers(2, 1)
	var order []netip.AddrPort
	places := map[netip.AddrPort]*transfer{}
	req := func(from netip.AddrPort) outcome {
		o, _ := ts.request(from, now, func(tr *transfer) { order = append(order, from); places[from] = tr })
		return o
	}
	a1, a2, b1, b2, b3 := netip.AddrPortFrom(a, 1), netip.AddrPortFrom(a, 2), netip.AddrPortFrom(b, 1), netip.AddrPortFrom(b, 2), netip.AddrPortFrom(b, 3)
	for _, from := range []netip.AddrPort{a1, a2, b1, b2, b3} {
		req(from)
	}
	// b2 asks again while it waits: not a second transfer, and it is
	// now the newest (its client is alive), ahead of b3.
	if o := req(b2); o != duplicate {
		t.Errorf("a retransmitted request: outcome %d, want duplicate", o)
	}
	if r, w := ts.count(); r != 2 || w != 3 {
		t.Fatalf("running %d, waiting %d; want 2 and 3", r, w)
	}
	// b1 ends: b's newest (b2) starts, not a2 (a is at its bound).
	ts.done(places[b1], b1, now)
	ts.done(places[a1], a1, now)
	want := []netip.AddrPort{a1, b1, b2, a2}
	if diff := cmp.Diff(want, order, cmp.Comparer(func(x, y netip.AddrPort) bool { return x == y })); diff != "" {
		t.Errorf("start order (-want +got):\n%s", diff)
	}
	// b3 waits; after maxWait it is forgotten.
	ts.retry(now.Add(maxWait + time.Second))
	if _, w := ts.count(); w != 0 {
		t.Errorf("%d still waiting after maxWait", w)
	}
	if o := req(b3); o != queued {
		t.Errorf("b3 asking again after it was forgotten: outcome %d, want queued", o)
	}
	// Waiting is bounded per client: beyond it a request is not answered.
	for i := range maxWaitingPerClient {
		ts.request(netip.AddrPortFrom(a, uint16(100+i)), now, func(*transfer) {})
	}
	if o := req(netip.AddrPortFrom(a, 60000)); o != full {
		t.Errorf("beyond maxWaitingPerClient: outcome %d, want full", o)
	}
}

func TestTransfersHeldToTheDescriptorBudget(t *testing.T) {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		t.Fatal(err)
	}
	low := rl
	low.Cur = 400 // a budget of 100 descriptors: 50 transfers
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &low); err != nil {
		t.Skipf("cannot lower RLIMIT_NOFILE: %v", err)
	}
	defer syscall.Setrlimit(syscall.RLIMIT_NOFILE, &rl)
	s := &Server{MaxTransfers: 256, MaxTransfersPerClient: 256}
	max, per := s.limits(slog.New(slog.DiscardHandler))
	if max != 50 || per != 50 {
		t.Errorf("limits = %d, %d; want both held to 50 (two descriptors a transfer, a quarter of 400)", max, per)
	}
}

// startBounded serves fx with the given bounds.
func startBounded(t *testing.T, fx *tftpFixture, maxTransfers, perClient int) *net.UDPAddr {
	t.Helper()
	conn, err := Listen(context.Background(), "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{Root: fx.root, Conn: conn, MaxTransfers: maxTransfers, MaxTransfersPerClient: perClient}
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- s.Serve(ctx) }()
	t.Cleanup(func() { cancel(); <-errc })
	return conn.LocalAddr().(*net.UDPAddr)
}

// firstBlock requests ipxe.efi from c and returns the op of the answer
// and the transfer's address.
func firstBlock(t *testing.T, c *pxetest.TFTPClient, addr *net.UDPAddr) (uint16, string, *net.UDPAddr) {
	t.Helper()
	c.Request(pxetest.OpRRQ, addr, "ipxe.efi")
	op, body, from := c.Recv(2 * time.Second)
	msg := ""
	if op == pxetest.OpERROR && len(body) > 2 {
		msg = string(body[2:])
	}
	return op, msg, from
}

func TestStalledTransfersAreDroppedOldestFirst(t *testing.T) {
	fx := newTFTPFixture(t)
	addr := startBounded(t, fx, 2, 4)
	a, b, c := pxetest.NewTFTPClientOn(t, net.IPv4(127, 0, 0, 2)), pxetest.NewTFTPClientOn(t, net.IPv4(127, 0, 0, 3)), pxetest.NewTFTPClientOn(t, net.IPv4(127, 0, 0, 4))
	opA, _, tidA := firstBlock(t, a, addr)
	if opA != pxetest.OpDATA {
		t.Fatalf("first client: op %d, want DATA", opA)
	}
	time.Sleep(100 * time.Millisecond)
	opB, _, tidB := firstBlock(t, b, addr)
	if opB != pxetest.OpDATA {
		t.Fatalf("second client: op %d, want DATA", opB)
	}
	// Neither acknowledges. A third waits, unanswered (never an error),
	// while they are not yet stalled...
	c.Request(pxetest.OpRRQ, addr, "ipxe.efi")
	if op, body, _ := c.Recv(time.Second); op != 0 {
		t.Fatalf("third client before the others stall: op %d %q, want no answer yet", op, body)
	}
	// ...and is served once one is stalled, in place of the one stalled
	// longest, without asking again. b acknowledges late: it is kept.
	time.Sleep(stallTime - 900*time.Millisecond)
	b.Ack(tidB, 1)
	if op, _, _ := b.Recv(2 * time.Second); op != pxetest.OpDATA {
		t.Fatalf("second client after its ACK: op %d, want DATA block 2", op)
	}
	op, body, _ := c.Recv(2 * time.Second)
	if op != pxetest.OpDATA {
		t.Fatalf("third client after the first stalled: op %d %q, want DATA", op, body)
	}
	// The first one was dropped: it got an error, and its socket (its
	// transfer id) is free at once, not when its retransmissions end.
	for {
		op, body, _ := a.Recv(2 * time.Second)
		if op == pxetest.OpERROR {
			if !strings.Contains(string(body), "dropped") {
				t.Errorf("dropped transfer's error %q", body)
			}
			break
		}
		if op != pxetest.OpDATA {
			t.Fatalf("the first client's transfer neither failed nor went on (op %d)", op)
		}
	}
	assertFreed(t, tidA)
}

// TestDroppedTransferFreesItsSocketAtOnce (issue 27): a transfer dropped
// at a bound closes its socket when it is dropped; it kept it 25-30 s,
// until the TFTP library's retransmissions to the gone client ended.
func TestDroppedTransferFreesItsSocketAtOnce(t *testing.T) {
	fx := newTFTPFixture(t)
	addr := startBounded(t, fx, 1, 1)
	a, b := pxetest.NewTFTPClientOn(t, net.IPv4(127, 0, 0, 7)), pxetest.NewTFTPClientOn(t, net.IPv4(127, 0, 0, 8))
	op, _, tidA := firstBlock(t, a, addr)
	if op != pxetest.OpDATA {
		t.Fatalf("first client: op %d, want DATA", op)
	}
	if !inUse(tidA) {
		t.Fatalf("the running transfer's socket %s is not in use", tidA)
	}
	time.Sleep(stallTime + 100*time.Millisecond)
	op, _, _ = firstBlock(t, b, addr)
	if op != pxetest.OpDATA {
		t.Fatalf("second client: op %d, want DATA in place of the stalled one", op)
	}
	assertFreed(t, tidA)
}

// inUse reports whether a UDP socket is bound to addr.
func inUse(addr *net.UDPAddr) bool {
	c, err := net.ListenUDP("udp", addr)
	if err != nil {
		return true
	}
	c.Close()
	return false
}

// assertFreed fails unless addr's socket closes within 200 ms.
func assertFreed(t *testing.T, addr *net.UDPAddr) {
	t.Helper()
	for deadline := time.Now().Add(200 * time.Millisecond); inUse(addr); {
		if time.Now().After(deadline) {
			t.Fatalf("the dropped transfer's socket %s is still open", addr)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestTransfersPerClientAreBounded(t *testing.T) {
	fx := newTFTPFixture(t)
	addr := startBounded(t, fx, 50, 2)
	ip := net.IPv4(127, 0, 0, 5)
	var firsts []*pxetest.TFTPClient
	var tids []*net.UDPAddr
	for i := range 2 {
		c := pxetest.NewTFTPClientOn(t, ip)
		op, msg, tid := firstBlock(t, c, addr)
		if op != pxetest.OpDATA {
			t.Fatalf("transfer %d of one client: op %d %q, want DATA", i+1, op, msg)
		}
		firsts, tids = append(firsts, c), append(tids, tid)
	}
	third := pxetest.NewTFTPClientOn(t, ip)
	third.Request(pxetest.OpRRQ, addr, "ipxe.efi")
	if op, body, _ := third.Recv(500 * time.Millisecond); op != 0 {
		t.Errorf("third transfer of one client: op %d %q, want no answer while it waits", op, body)
	}
	if op, msg, _ := firstBlock(t, pxetest.NewTFTPClientOn(t, net.IPv4(127, 0, 0, 6)), addr); op != pxetest.OpDATA {
		t.Errorf("another client meanwhile: op %d %q, want DATA", op, msg)
	}
	// The first one ends (the client gives up with an error): the third
	// is served at once.
	firsts[0].Send(tids[0], []byte{0, 5, 0, 0, 'b', 'y', 'e', 0})
	if op, body, _ := third.Recv(2 * time.Second); op != pxetest.OpDATA {
		t.Errorf("third transfer once the first ended: op %d %q, want DATA", op, body)
	}
}

// TestAFloodDoesNotKeepARealClientWaiting: behind 3 000 requests that
// are never repeated (nor acknowledged), a real client's request gets
// the first place a stalled transfer leaves: the newest wait is served
// first.
func TestAFloodDoesNotKeepARealClientWaiting(t *testing.T) {
	now := time.Now()
	ts := newTransfers(2, 4)
	var started []netip.AddrPort
	req := func(from netip.AddrPort, at time.Time) {
		ts.request(from, at, func(*transfer) { started = append(started, from) })
	}
	for i := range 3002 {
		req(netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, 1, byte(i >> 8), byte(i)}), 1000), now)
	}
	real := netip.MustParseAddrPort("10.9.9.9:2000")
	req(real, now.Add(time.Second))
	started = nil
	ts.retry(now.Add(stallTime + time.Second))
	if len(started) == 0 || started[0] != real {
		t.Errorf("started after the flood stalled: %v, want the real client first", started)
	}
}
