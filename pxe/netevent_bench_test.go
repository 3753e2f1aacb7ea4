package pxe

import (
	"encoding/binary"
	"net"
	"testing"
	"time"

	"github.com/plasmactl/plasma-node/pxe/dhcpserver"
)

// BenchmarkDHCPEvent files one proxy-DHCP offer into the timeline and the
// metrics, as the window does for every DISCOVER it answers, from a new
// MAC address each time. It cycles through 4096 MACs, more than the
// timeline follows, so that it also measures the timeline's eviction.
// (Package dhcpserver's BenchmarkHandleDiscover measures the rest of a
// DISCOVER's way.)
func BenchmarkDHCPEvent(b *testing.B) {
	const macs = 4096
	evs := make([]dhcpserver.Event, macs)
	for i := range evs {
		mac := net.HardwareAddr{0x52, 0x54, 0, 0, 0, 0}
		binary.BigEndian.PutUint32(mac[2:], uint32(i))
		evs[i] = dhcpserver.Event{Kind: dhcpserver.EventOffer, MAC: mac, XID: "0000abcd", Arch: "7 (UEFI x86-64)", File: "snponly.efi",
			Reason: "PXE client of architecture 7 (UEFI x86-64): snponly.efi over TFTP"}
	}
	tl := &Timeline{}
	m := &Metrics{}
	h := &BootHandler{cfg: BootHandlerConfig{Timeline: tl, Metrics: m}}
	base := time.Now()
	tl.Now = func() time.Time { return base }
	i := 0
	b.ReportAllocs()
	for b.Loop() {
		e := evs[i%macs]
		e.Time = base
		h.DHCPEvent(e)
		i++
	}
	if m.dhcpOffers.Load() == 0 {
		b.Fatal("no offer counted")
	}
}
