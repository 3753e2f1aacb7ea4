package dhcpserver

import (
	"context"
	"encoding/binary"
	"net"
	"testing"
	"time"

	"github.com/insomniacslk/dhcp/dhcpv4"
	"golang.org/x/net/ipv4"

	"github.com/plasmactl/plasma-node/pxe/events"
	"github.com/plasmactl/plasma-node/pxe/internal/pxetest"
)

// TestABurstIsAnsweredInBatches: DISCOVERs waiting in the socket before
// the server reads are read several at a time (recvmmsg) and answered in
// one write (sendmmsg), and each still gets its own OFFER with its
// boot file (UEFI and BIOS alternating), and its boot step recorded.
func TestABurstIsAnsweredInBatches(t *testing.T) {
	if !batchIO {
		t.Skip("batched reads and writes are Linux's")
	}
	const burst = 200
	dc, dhcpAddr := loopbackConn(t)
	if err := setReadBuffer(dc, dhcpReadBuffer); err != nil {
		t.Logf("receive buffer not enlarged: %v", err)
	}
	client := pxetest.NewDHCPClient(t)
	if err := client.Conn.SetReadBuffer(4 << 20); err != nil {
		t.Fatal(err)
	}
	reqs := make(map[dhcpv4.TransactionID][]byte, burst)
	want := make(map[dhcpv4.TransactionID]string, burst)
	for i := range burst {
		mac := net.HardwareAddr{0x52, 0x54, 0, 0, 0, 0}
		binary.BigEndian.PutUint32(mac[2:], uint32(i))
		xid := dhcpv4.TransactionID{1, 0, byte(i >> 8), byte(i)}
		mods, file := uefiPXE, "ipxe.efi"
		if i%2 == 1 {
			mods, file = biosPXE, "undionly.kpxe"
		}
		p := packet(t, dhcpv4.MessageTypeDiscover, append(mods, dhcpv4.WithTransactionID(xid), dhcpv4.WithHwAddr(mac))...)
		reqs[xid], want[xid] = p.ToBytes(), file
	}
	// The burst waits in the socket before the server reads it.
	for _, q := range reqs {
		if _, err := client.Conn.WriteToUDP(q, dhcpAddr); err != nil {
			t.Fatal(err)
		}
	}
	var evs eventLog
	s := &Server{Proxy: testProxyConfig(), Allow: func(net.HardwareAddr) bool { return true }, DHCPConn: dc, PXEPort: -1,
		ClientPort: client.Port, OnEvent: evs.add, Readers: 1}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	errc := make(chan error, 1)
	go func() { errc <- s.Serve(ctx) }()

	got := map[dhcpv4.TransactionID]string{}
	buf := make([]byte, 2048)
	for try := 0; len(got) < burst && try < 10; try++ {
		if try > 0 { // a datagram lost on the way: send what is unanswered again
			for xid, q := range reqs {
				if _, ok := got[xid]; !ok {
					client.Conn.WriteToUDP(q, dhcpAddr)
				}
			}
		}
		client.Conn.SetReadDeadline(time.Now().Add(time.Second))
		for len(got) < burst {
			n, _, err := client.Conn.ReadFromUDP(buf)
			if err != nil {
				break
			}
			resp, err := dhcpv4.FromBytes(buf[:n])
			if err != nil || resp.MessageType() != dhcpv4.MessageTypeOffer {
				t.Fatalf("got %v (%v), want OFFERs", resp, err)
			}
			got[resp.TransactionID] = resp.BootFileName
		}
	}
	for xid, file := range want {
		if got[xid] != file {
			t.Errorf("xid %s: offered %q, want %q", xid, got[xid], file)
		}
	}
	if n := s.largestBatch.Load(); n < 2 {
		t.Errorf("the largest read returned %d datagrams, want a batch of several", n)
	}
	// A batch's events follow its sending: they are all in once Serve
	// has returned.
	cancel()
	<-errc
	offers := map[string]bool{}
	evs.mu.Lock()
	for _, e := range evs.events {
		if e.Kind != events.DHCPOffer || e.File == "" {
			t.Errorf("event %s %s file %q, want offers with their boot file", e.Kind, e.MAC, e.File)
		}
		offers[e.MAC.String()] = true
	}
	evs.mu.Unlock()
	if len(offers) != burst {
		t.Errorf("%d machines' offers recorded, want %d", len(offers), burst)
	}
}

// TestBatchSendKeepsGoingPastARefusal: a reply the kernel refuses gets
// its error (its event says so), and the replies after it are still
// sent.
func TestBatchSendKeepsGoingPastARefusal(t *testing.T) {
	if !batchIO {
		t.Skip("batched reads and writes are Linux's")
	}
	c, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	sink := pxetest.NewDHCPClient(t)
	ok := &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: sink.Port}
	b := newBatch()
	for i := range 3 {
		b.out[i].Buffers[0], b.out[i].Addr = []byte{byte(i)}, ok
		b.which[i] = i
	}
	b.out[1].Buffers[0] = make([]byte, 70000) // larger than a datagram: EMSGSIZE
	b.nout = 3
	b.send(ipv4.NewPacketConn(c))
	if b.errs[0] != nil || b.errs[1] == nil || b.errs[2] != nil {
		t.Fatalf("errors %v, want only the oversized reply's", b.errs[:3])
	}
	sink.Conn.SetReadDeadline(time.Now().Add(2 * time.Second))
	var got []byte
	buf := make([]byte, 16)
	for len(got) < 2 {
		n, _, err := sink.Conn.ReadFromUDP(buf)
		if err != nil {
			t.Fatalf("got %v, then %v: want replies 0 and 2", got, err)
		}
		got = append(got, buf[:n]...)
	}
	if got[0] != 0 || got[1] != 2 {
		t.Errorf("got replies %v, want 0 and 2", got)
	}
}
