package dhcpserver

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"runtime"

	"golang.org/x/net/ipv4"

	"github.com/plasmactl/plasma-node/pxe/proxydhcp"
)

// batchSize is how many datagrams one recvmmsg reads and one sendmmsg
// writes at most. Under a storm of DISCOVERs the kernel's cost per
// system call, not the reply's work, bounds the rate: a perf profile of
// serve with one read and one write per packet had 90 % of its time in
// the kernel.
const batchSize = 64

// batchIO reports whether ipv4.PacketConn's ReadBatch and WriteBatch
// read and write several datagrams a system call here; elsewhere they
// move one, and the plain loop does as well.
const batchIO = runtime.GOOS == "linux"

// batch is the buffers of one goroutine reading in batches: a message,
// an input buffer and a reply for each datagram of a batch, and the
// messages of the replies to send.
type batch struct {
	in    []ipv4.Message
	reps  []reply
	out   []ipv4.Message // out[:nout] are sent
	nout  int
	which []int // reps index of each out message
	errs  []error
}

func newBatch() *batch {
	b := &batch{in: make([]ipv4.Message, batchSize), reps: make([]reply, batchSize),
		out: make([]ipv4.Message, batchSize), which: make([]int, batchSize), errs: make([]error, batchSize)}
	for i := range b.in {
		b.in[i].Buffers = [][]byte{make([]byte, maxDatagram)}
		b.reps[i].out = make([]byte, 0, 576)
		b.out[i].Buffers = make([][]byte, 1)
	}
	return b
}

// batchLoop is loop for a UDP socket on Linux: each recvmmsg takes what
// has arrived (up to batchSize), the replies are built, one sendmmsg
// sends them, and then their decisions are logged and recorded. A reply
// is never held back for a batch to fill: a batch is what one read
// found waiting.
func (s *Server) batchLoop(ctx context.Context, log *slog.Logger, conn *net.UDPConn, on proxydhcp.Arrival) error {
	pc := ipv4.NewPacketConn(conn)
	b := newBatch()
	var p parser
	for {
		n, err := pc.ReadBatch(b.in, 0)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("read dhcp on %s: %w", conn.LocalAddr(), err)
		}
		if int64(n) > s.largestBatch.Load() {
			s.largestBatch.Store(int64(n))
		}
		k := 0
		b.nout = 0
		for i := range n {
			m := &b.in[i]
			rep := &b.reps[k]
			if !s.prepare(log, &p, rep, on, m.Buffers[0][:m.N], m.Addr) {
				continue
			}
			b.errs[k] = nil
			if rep.dst != nil {
				o := &b.out[b.nout]
				o.Buffers[0], o.Addr = rep.out, rep.dst
				b.which[b.nout] = k
				b.nout++
			}
			k++
		}
		b.send(pc)
		for j := range k {
			s.finish(log, &b.reps[j], b.errs[j])
		}
	}
}

// send writes the batch's replies with as few sendmmsg calls as it can;
// a reply the kernel refuses gets its error, and the rest are still
// sent.
func (b *batch) send(pc *ipv4.PacketConn) {
	for off := 0; off < b.nout; {
		n, err := pc.WriteBatch(b.out[off:b.nout], 0)
		if n > 0 {
			off += n
		}
		if err != nil {
			b.errs[b.which[off]] = err
			off++
		} else if n <= 0 {
			// Nothing sent and no error: the kernel said nothing of the
			// rest, which is lost as a failed write would be.
			for _, k := range b.which[off:b.nout] {
				b.errs[k] = fmt.Errorf("sendmmsg sent none of %d replies", b.nout-off)
			}
			return
		}
	}
}
