package dhcpserver

import (
	"encoding/binary"
	"io"
	"log/slog"
	"net"
	"sync/atomic"
	"testing"

	"github.com/insomniacslk/dhcp/dhcpv4"
	"github.com/insomniacslk/dhcp/iana"

	"github.com/plasmactl/plasma-node/pxe/events"
	"github.com/plasmactl/plasma-node/pxe/proxydhcp"
)

// discardConn is a PacketConn whose writes go nowhere.
type discardConn struct{ net.PacketConn }

func (discardConn) WriteTo(p []byte, _ net.Addr) (int, error) { return len(p), nil }

// BenchmarkHandleDiscover answers one UEFI PXE DISCOVER as a window does,
// from a new MAC address each time: JSON logs (discarded), an event for
// each (counted here; package pxe benchmarks its timeline on its own), the
// reply written to a socket that drops it. It cycles through 4096 MACs.
// "budget" logs as Serve does by default (DefaultLogBudget lines a second,
// the rest counted), "every" logs every decision.
func BenchmarkHandleDiscover(b *testing.B) {
	b.Run("budget", func(b *testing.B) { benchmarkHandleDiscover(b, 0) })
	b.Run("every", func(b *testing.B) { benchmarkHandleDiscover(b, -1) })
}

func benchmarkHandleDiscover(b *testing.B, budget int) {
	const macs = 4096
	pkts := make([][]byte, macs)
	for i := range pkts {
		mac := net.HardwareAddr{0x52, 0x54, 0, 0, 0, 0}
		binary.BigEndian.PutUint32(mac[2:], uint32(i))
		req, err := dhcpv4.NewDiscovery(mac,
			dhcpv4.WithOption(dhcpv4.OptClassIdentifier("PXEClient:Arch:00007:UNDI:003016")),
			dhcpv4.WithOption(dhcpv4.OptClientArch(iana.EFI_X86_64)),
			dhcpv4.WithBroadcast(true))
		if err != nil {
			b.Fatal(err)
		}
		pkts[i] = req.ToBytes()
	}
	var offers atomic.Int64
	onEvent := func(e Event) {
		if e.Kind == events.DHCPOffer {
			offers.Add(1)
		}
	}
	log := slog.New(slog.NewJSONHandler(io.Discard, nil))
	s := &Server{Proxy: testProxyConfig(), Allow: func(net.HardwareAddr) bool { return true }, Logger: log, OnEvent: onEvent, LogBudget: budget}
	s.start()
	r := &reader{out: make([]byte, 0, 576)}
	peer := &net.UDPAddr{IP: net.IPv4zero, Port: proxydhcp.DHCPClientPort}
	var conn discardConn
	i := 0
	b.ReportAllocs()
	for b.Loop() {
		s.handle(log, r, conn, proxydhcp.OnDHCPPort, pkts[i%macs], peer)
		i++
	}
	if offers.Load() == 0 {
		b.Fatal("no offer made")
	}
}
