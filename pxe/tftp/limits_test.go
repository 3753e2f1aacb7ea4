package tftp

import (
	"context"
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/plasmactl/plasma-node/pxe/internal/pxetest"
)

func TestAdmitDropsTheTransferStalledLongest(t *testing.T) {
	a, b, c := netip.MustParseAddr("10.0.0.1"), netip.MustParseAddr("10.0.0.2"), netip.MustParseAddr("10.0.0.3")
	now := time.Now()
	type running struct {
		peer netip.Addr
		idle time.Duration // since its last acknowledgement
	}
	tests := map[string]struct {
		max, perClient int
		budget, live   int // descriptors; handlers of dropped transfers still open
		running        []running
		peer           netip.Addr
		wantDropped    int // index in running, -1 for none
		wantErr        string
	}{
		"under the bounds a request is admitted": {
			max: 2, perClient: 2, running: []running{{a, 10 * time.Second}}, peer: b, wantDropped: -1,
		},
		"at the server's bound with none stalled a request is refused": {
			max: 2, perClient: 2, running: []running{{a, time.Second}, {b, 0}}, peer: c, wantDropped: -1, wantErr: "server busy",
		},
		"at the server's bound the transfer stalled longest is dropped": {
			max: 3, perClient: 2, running: []running{{a, 3 * time.Second}, {b, 9 * time.Second}, {a, 0}}, peer: c, wantDropped: 1,
		},
		"at a client's bound with none of its own stalled it is refused": {
			max: 9, perClient: 1, running: []running{{a, 0}, {b, 9 * time.Second}}, peer: a, wantDropped: -1, wantErr: "too many transfers from this client",
		},
		"with the descriptor budget spent on sockets of dropped transfers a request is refused": {
			max: 9, perClient: 9, budget: 10, live: 9, running: []running{{a, 0}}, peer: b, wantDropped: -1, wantErr: "sockets of stalled transfers",
		},
		"at a client's bound its own stalled transfer is dropped, not another's": {
			max: 9, perClient: 2, running: []running{{a, 3 * time.Second}, {b, 9 * time.Second}, {a, 0}}, peer: a, wantDropped: 0,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if tc.budget == 0 {
				tc.budget = 1000
			}
			ts := newTransfers(tc.max, tc.perClient, tc.budget)
			ts.live = tc.live
			var ran []*transfer
			for _, r := range tc.running {
				tr, _, err := ts.admit(r.peer, now)
				if err != nil {
					t.Fatal(err)
				}
				tr.last.Store(now.Add(-r.idle).UnixNano())
				ran = append(ran, tr)
			}
			got, dropped, err := ts.admit(tc.peer, now)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || got == nil {
				t.Fatalf("admit: %v", err)
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
			if n := ts.count(); n != len(tc.running)+1-min(tc.wantDropped+1, 1) {
				t.Errorf("running = %d", n)
			}
		})
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
	// Neither acknowledges. A third is refused while they are not yet
	// stalled...
	if op, msg, _ := firstBlock(t, c, addr); op != pxetest.OpERROR || !strings.Contains(msg, "server busy") {
		t.Fatalf("third client before the others stall: op %d %q, want ERROR server busy", op, msg)
	}
	// ...and served once they are, in place of the one stalled longest.
	time.Sleep(StallTime + 100*time.Millisecond)
	b.Ack(tidB, 1) // b goes on: it is no longer stalled
	if op, _, _ := b.Recv(2 * time.Second); op != pxetest.OpDATA {
		t.Fatalf("second client after its ACK: op %d, want DATA block 2", op)
	}
	time.Sleep(StallTime + 100*time.Millisecond)
	if op, msg, _ := firstBlock(t, c, addr); op != pxetest.OpDATA {
		t.Fatalf("third client after the others stalled: op %d %q, want DATA", op, msg)
	}
	// The first one was dropped; the second one, acknowledging later,
	// was kept.
	a.Ack(tidA, 1)
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
		// resent block 1: acknowledge it to see the transfer end
		a.Ack(tidA, 1)
	}
}

func TestTransfersPerClientAreBounded(t *testing.T) {
	fx := newTFTPFixture(t)
	addr := startBounded(t, fx, 50, 2)
	ip := net.IPv4(127, 0, 0, 5)
	for i := range 2 {
		if op, msg, _ := firstBlock(t, pxetest.NewTFTPClientOn(t, ip), addr); op != pxetest.OpDATA {
			t.Fatalf("transfer %d of one client: op %d %q, want DATA", i+1, op, msg)
		}
	}
	if op, msg, _ := firstBlock(t, pxetest.NewTFTPClientOn(t, ip), addr); op != pxetest.OpERROR || !strings.Contains(msg, "too many transfers from this client") {
		t.Errorf("third transfer of one client: op %d %q, want ERROR too many transfers", op, msg)
	}
	if op, msg, _ := firstBlock(t, pxetest.NewTFTPClientOn(t, net.IPv4(127, 0, 0, 6)), addr); op != pxetest.OpDATA {
		t.Errorf("another client meanwhile: op %d %q, want DATA", op, msg)
	}
}
