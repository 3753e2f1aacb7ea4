package tftp

import (
	"bytes"
	"encoding/binary"
	"net"
	"net/netip"
	"testing"
	"time"
)

// blockLoopAllocBudget is what a whole transfer's block loop may
// allocate, whatever the file's size: nothing a block. It is a committed
// budget: a change that adds an allocation to the loop fails
// TestBlockLoopAllocBudget until this is raised on purpose (say why in
// the commit). Allocation counts are deterministic, unlike times.
const blockLoopAllocBudget = 0

// TestBlockLoopAllocBudget runs the sender's block loop against a client
// on loopback that acknowledges every block, for files of 10 and 700
// blocks of 1468 bytes (700 is a 1 MiB iPXE binary), and holds the
// allocations of a transfer to blockLoopAllocBudget.
// ackingClient is a client on loopback that acknowledges every block of
// a sender's transfers; each transfer's byte count arrives on done.
func ackingClient(t testing.TB, block int) (snd *sender, done chan int) {
	cl, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cl.Close() })
	srv, err := net.DialUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)}, cl.LocalAddr().(*net.UDPAddr))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	done = make(chan int)
	go func() {
		buf := make([]byte, 4+block)
		ack := []byte{0, opACK, 0, 0}
		got := 0
		for {
			n, from, err := cl.ReadFromUDPAddrPort(buf)
			if err != nil {
				return
			}
			if n < 4 || binary.BigEndian.Uint16(buf) != opDATA {
				continue
			}
			copy(ack[2:], buf[2:4])
			cl.WriteToUDPAddrPort(ack, from)
			got += n - 4
			if n-4 < block {
				done <- got
				got = 0
			}
		}
	}()
	peer := netip.MustParseAddrPort(cl.LocalAddr().String())
	return newSender(srv, peer, &transfer{}, block, time.Second, func() bool { return false }), done
}

// TestBlockLoopAllocBudget runs the sender's block loop against a client
// on loopback that acknowledges every block, for files of 10 and 700
// blocks of 1468 bytes (700 is a 1 MiB iPXE binary), and holds the
// allocations of a transfer to blockLoopAllocBudget.
func TestBlockLoopAllocBudget(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates on its own: allocation budgets are checked without it")
	}
	const block = 1468
	snd, done := ackingClient(t, block)
	for _, blocks := range []int{10, 700} {
		payload := bytes.Repeat([]byte{7}, blocks*block-100)
		r := bytes.NewReader(nil)
		var failed error
		n := testing.AllocsPerRun(5, func() {
			r.Reset(payload)
			if _, err := snd.run(nil, r); err != nil {
				failed = err
				return
			}
			if got := <-done; got != len(payload) {
				t.Fatalf("the client got %d bytes of %d", got, len(payload))
			}
		})
		if failed != nil {
			t.Fatal(failed)
		}
		if n > blockLoopAllocBudget {
			t.Errorf("a transfer of %d blocks allocates %v times, budget %d: find the new allocation, or raise blockLoopAllocBudget on purpose", blocks, n, blockLoopAllocBudget)
		}
	}
}

// BenchmarkBlockLoop sends a 1 MiB file in blocks of 1468 bytes to a
// client on loopback that acknowledges each one.
func BenchmarkBlockLoop(b *testing.B) {
	const block = 1468
	snd, done := ackingClient(b, block)
	payload := bytes.Repeat([]byte{7}, 1<<20)
	r := bytes.NewReader(nil)
	b.SetBytes(int64(len(payload)))
	b.ReportAllocs()
	for b.Loop() {
		r.Reset(payload)
		if _, err := snd.run(nil, r); err != nil {
			b.Fatal(err)
		}
		<-done
	}
}
