package dhcpserver

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/insomniacslk/dhcp/dhcpv4"

	"github.com/plasmactl/plasma-node/pxe/internal/pxetest"
	"github.com/plasmactl/plasma-node/pxe/proxydhcp"
)

type eventLog struct {
	mu     sync.Mutex
	events []Event
}

func (l *eventLog) add(e Event) { l.mu.Lock(); l.events = append(l.events, e); l.mu.Unlock() }
func (l *eventLog) kinds() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var k []string
	for _, e := range l.events {
		k = append(k, string(e.Kind)+" "+e.MAC.String()+" "+e.File)
	}
	return k
}

// loopbackConn opens a DHCP socket on an ephemeral port bound to lo.
func loopbackConn(t *testing.T) (net.PacketConn, *net.UDPAddr) {
	t.Helper()
	c, err := Listen("lo", 0)
	if err != nil {
		skipOrFail(t, "cannot bind a UDP socket to lo: %v", err)
	}
	return c, &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: c.LocalAddr().(*net.UDPAddr).Port}
}

func skipOrFail(t *testing.T, format string, args ...any) {
	t.Helper()
	if os.Getenv("PLASMA_E2E") == "1" {
		t.Fatalf(format, args...)
	}
	t.Skipf(format, args...)
}

func withXID(t *testing.T, xid byte, typ dhcpv4.MessageType, mods ...dhcpv4.Modifier) ([]byte, dhcpv4.TransactionID) {
	id := dhcpv4.TransactionID{0, 0, 0, xid}
	return packet(t, typ, append(mods, dhcpv4.WithTransactionID(id))...).ToBytes(), id
}

func TestServerOnLoopback(t *testing.T) {
	dc, dhcpAddr := loopbackConn(t)
	pc, pxeAddr := loopbackConn(t)
	client := pxetest.NewDHCPClient(t)
	relay := pxetest.NewDHCPClient(t)
	var events eventLog
	s := &Server{
		Proxy: testProxyConfig(), Allow: allowOnly(testMAC),
		DHCPConn: dc, PXEConn: pc, ClientPort: client.Port, RelayPort: relay.Port,
		OnEvent: events.add,
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	errc := make(chan error, 1)
	go func() { errc <- s.Serve(ctx) }()

	// Garbage first: the server must survive it.
	for _, junk := range [][]byte{{1, 2, 3}, bytes.Repeat([]byte{0xff}, maxDatagram+1000), rawDiscover(t)[:200]} {
		if _, err := client.Conn.WriteToUDP(junk, dhcpAddr); err != nil {
			t.Fatal(err)
		}
	}

	t.Run("a broadcast DISCOVER gets a broadcast OFFER", func(t *testing.T) {
		req, xid := withXID(t, 1, dhcpv4.MessageTypeDiscover, uefiPXE...)
		resp, _ := client.Exchange(t, req, dhcpAddr, xid, 3*time.Second)
		if resp == nil {
			t.Fatal("no OFFER")
		}
		if resp.MessageType() != dhcpv4.MessageTypeOffer || resp.BootFileName != "ipxe.efi" {
			t.Errorf("got %s file %q, want OFFER of ipxe.efi", resp.MessageType(), resp.BootFileName)
		}
	})
	t.Run("REQUEST on 4011 gets an ACK to its sender", func(t *testing.T) {
		req, xid := withXID(t, 2, dhcpv4.MessageTypeRequest, join(uefiPXE, []dhcpv4.Modifier{dhcpv4.WithClientIP(net.IPv4(127, 0, 0, 1))})...)
		resp, from := client.Exchange(t, req, pxeAddr, xid, 3*time.Second)
		if resp == nil {
			t.Fatal("no ACK")
		}
		if resp.MessageType() != dhcpv4.MessageTypeAck || from.Port != pxeAddr.Port {
			t.Errorf("got %s from %s, want ACK from port %d", resp.MessageType(), from, pxeAddr.Port)
		}
	})
	t.Run("relayed request is answered to the relay", func(t *testing.T) {
		req, xid := withXID(t, 3, dhcpv4.MessageTypeDiscover, join(biosPXE, []dhcpv4.Modifier{dhcpv4.WithRelay(net.IPv4(127, 0, 0, 1))})...)
		// The relay forwards the request and waits on its own port.
		if _, err := relay.Conn.WriteToUDP(req, dhcpAddr); err != nil {
			t.Fatal(err)
		}
		resp, _ := relay.Exchange(t, req, dhcpAddr, xid, 3*time.Second)
		if resp == nil {
			t.Fatal("the relay got no OFFER")
		}
		if resp.BootFileName != "undionly.kpxe" || !resp.GatewayIPAddr.Equal(net.IPv4(127, 0, 0, 1)) {
			t.Errorf("file %q giaddr %s, want undionly.kpxe via 127.0.0.1", resp.BootFileName, resp.GatewayIPAddr)
		}
	})
	t.Run("unknown MAC gets no offer", func(t *testing.T) {
		req, xid := withXID(t, 4, dhcpv4.MessageTypeDiscover, join(uefiPXE, []dhcpv4.Modifier{dhcpv4.WithHwAddr(otherMAC)})...)
		if resp, _ := client.Exchange(t, req, dhcpAddr, xid, 400*time.Millisecond); resp != nil {
			t.Fatalf("got %s for an unknown MAC", resp.MessageType())
		}
	})
	t.Run("non-PXE client gets nothing", func(t *testing.T) {
		req, xid := withXID(t, 5, dhcpv4.MessageTypeDiscover, class("MSFT 5.0"))
		if resp, _ := client.Exchange(t, req, dhcpAddr, xid, 400*time.Millisecond); resp != nil {
			t.Fatalf("got %s for a non-PXE client", resp.MessageType())
		}
	})

	cancel()
	select {
	case err := <-errc:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Serve = %v, want context.Canceled", err)
		}
	case <-time.After(3 * time.Second):
		t.Fatal("Serve did not stop with its context")
	}
	if _, err := dc.WriteTo([]byte{1}, dhcpAddr); err == nil {
		t.Error("Serve left its DHCP socket open")
	}
	// Retries may repeat an event; each kind must be there, the non-PXE
	// client must not be.
	got := map[string]bool{}
	for _, k := range events.kinds() {
		got[k] = true
	}
	want := map[string]bool{
		"dhcp-offer 52:54:00:12:34:56 ipxe.efi":      true,
		"dhcp-ack 52:54:00:12:34:56 ipxe.efi":        true,
		"dhcp-offer 52:54:00:12:34:56 undionly.kpxe": true,
		"dhcp-ignored 52:54:00:ff:ff:ff ":            true,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

// serveByPort runs a Server that opens its own sockets and checks that
// a DISCOVER to port gets an OFFER on clientPort.
func serveByPort(t *testing.T, s *Server, port int, client *pxetest.DHCPClient) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- s.Serve(ctx) }()
	req, xid := withXID(t, 9, dhcpv4.MessageTypeDiscover, biosPXE...)
	resp, _ := client.Exchange(t, req, &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: port}, xid, 3*time.Second)
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Errorf("Serve = %v, want context.Canceled", err)
	}
	if resp == nil || resp.MessageType() != dhcpv4.MessageTypeOffer || resp.BootFileName != proxydhcp.BIOSBinary {
		t.Fatalf("reply %v, want an OFFER of %s", resp, proxydhcp.BIOSBinary)
	}
}

func TestServerListensOnConfiguredPorts(t *testing.T) {
	client := pxetest.NewDHCPClient(t)
	port := pxetest.FreeUDPPort(t)
	s := &Server{Proxy: testProxyConfig(), Allow: allowOnly(testMAC), Interface: "lo",
		Port: port, PXEPort: -1, ClientPort: client.Port}
	if c, err := Listen("lo", 0); err != nil {
		skipOrFail(t, "cannot bind a UDP socket to lo: %v", err)
	} else {
		c.Close()
	}
	serveByPort(t, s, port, client)
}

func TestServerOnPort67(t *testing.T) {
	if os.Geteuid() != 0 {
		skipOrFail(t, "port 67 and 68 need root")
	}
	client, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4zero, Port: proxydhcp.DHCPClientPort})
	if err != nil {
		skipOrFail(t, "port 68 is taken: %v", err)
	}
	t.Cleanup(func() { client.Close() })
	s := &Server{Proxy: testProxyConfig(), Allow: allowOnly(testMAC), Interface: "lo"}
	serveByPort(t, s, proxydhcp.DHCPPort, &pxetest.DHCPClient{Conn: client, Port: proxydhcp.DHCPClientPort})
}

func TestServerRefusesBadConfig(t *testing.T) {
	s := &Server{Proxy: proxydhcp.Config{Boot: testBootConfig()}}
	if err := s.Serve(context.Background()); !errors.Is(err, proxydhcp.ErrInvalidConfig) {
		t.Fatalf("Serve = %v, want ErrInvalidConfig", err)
	}
}

func TestServerReportsAMissingInterface(t *testing.T) {
	s := &Server{Proxy: testProxyConfig(), Port: pxetest.FreeUDPPort(t), PXEPort: -1, Interface: "no-such-if0"}
	err := s.Serve(context.Background())
	if err == nil || !strings.Contains(err.Error(), "interface no-such-if0") {
		t.Fatalf("Serve = %v, want an error naming the interface", err)
	}
}

func TestReplyAddr(t *testing.T) {
	s := &Server{}
	peer := &net.UDPAddr{IP: net.IPv4(192, 0, 2, 77), Port: 4321}
	tests := map[string]struct {
		req  *dhcpv4.DHCPv4
		on   proxydhcp.Arrival
		want string
	}{
		"a client without address gets a broadcast to port 68": {
			req: packet(t, dhcpv4.MessageTypeDiscover), want: "255.255.255.255:68",
		},
		"a relayed request goes to the relay's port 67": {
			req: packet(t, dhcpv4.MessageTypeDiscover, dhcpv4.WithRelay(net.IPv4(198, 51, 100, 1))), want: "198.51.100.1:67",
		},
		"a client with an address gets a unicast to port 68": {
			req: packet(t, dhcpv4.MessageTypeRequest, dhcpv4.WithClientIP(net.IPv4(192, 0, 2, 77))), want: "192.0.2.77:68",
		},
		"a request on 4011 is answered to its sender": {
			req: packet(t, dhcpv4.MessageTypeRequest, dhcpv4.WithRelay(net.IPv4(198, 51, 100, 1))), on: proxydhcp.OnPXEPort, want: "192.0.2.77:4321",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := s.replyAddr(tc.req, tc.on, peer).String(); got != tc.want {
				t.Errorf("reply goes to %s, want %s", got, tc.want)
			}
		})
	}
}

func TestLogBudgetCountsWhatItDrops(t *testing.T) {
	b := logBudget{per: 3}
	t0 := time.Unix(1_700_000_000, 0)
	var ok int
	for i := range 10 {
		if took, dropped := b.take(t0.Add(time.Duration(i) * time.Millisecond)); took {
			ok++
			if dropped != 0 {
				t.Errorf("line %d: %d dropped reported within the first second", i, dropped)
			}
		}
	}
	if ok != 3 {
		t.Errorf("%d lines let through in one second, want 3", ok)
	}
	took, dropped := b.take(t0.Add(time.Second))
	if !took || dropped != 7 {
		t.Errorf("first line of the next second: took %v, dropped %d; want true, 7", took, dropped)
	}
	if n := b.flush(); n != 0 {
		t.Errorf("flush after the report = %d, want 0", n)
	}
	unlimited := logBudget{per: -1}
	for range 100 {
		if took, _ := unlimited.take(t0); !took {
			t.Fatal("a negative budget dropped a line")
		}
	}
}

// TestDHCPServerKeepsToItsLogBudget sends ten DISCOVERs to a server whose
// budget is two lines a second: every one is answered, two are logged, and
// the eight others are counted and reported when it stops.
func TestServerKeepsToItsLogBudget(t *testing.T) {
	dc, dhcpAddr := loopbackConn(t)
	client := pxetest.NewDHCPClient(t)
	var logs lockedLog
	s := &Server{Proxy: testProxyConfig(), Allow: allowOnly(testMAC), DHCPConn: dc, PXEPort: -1, ClientPort: client.Port,
		LogBudget: 2, Logger: slog.New(slog.NewTextHandler(&logs, nil))}
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- s.Serve(ctx) }()
	start := time.Now()
	for i := range 10 {
		req, xid := withXID(t, byte(100+i), dhcpv4.MessageTypeDiscover, uefiPXE...)
		if resp, _ := client.Exchange(t, req, dhcpAddr, xid, 3*time.Second); resp == nil {
			t.Fatalf("DISCOVER %d got no OFFER", i)
		}
	}
	if time.Since(start) > 900*time.Millisecond {
		t.Skip("the machine is too slow to send ten DISCOVERs within one budget second")
	}
	cancel()
	<-errc
	out := logs.String()
	if n := strings.Count(out, `msg="DHCP offer"`); n != 2 {
		t.Errorf("%d offers logged, want 2:\n%s", n, out)
	}
	if !strings.Contains(out, `msg="DHCP log lines dropped" dropped=8`) {
		t.Errorf("no report of 8 dropped lines:\n%s", out)
	}
	if n := s.logsDropped(); n != 8 {
		t.Errorf("LogsDropped = %d, want 8", n)
	}
}

// lockedLog is a log sink for several goroutines.
type lockedLog struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// logsDropped returns how many decision log lines were dropped for
// LogBudget since Serve started.
func (s *Server) logsDropped() int64 { return s.dropped.Load() }
