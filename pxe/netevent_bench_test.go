package pxe

import (
	"encoding/binary"
	"net"
	"testing"
	"time"

	"github.com/plasmactl/plasma-node/pxe/dhcpserver"
	"github.com/plasmactl/plasma-node/pxe/events"
	"github.com/plasmactl/plasma-node/pxe/netboot"
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
		evs[i] = dhcpserver.Event{Kind: events.DHCPOffer, MAC: mac, XID: "0000abcd", Arch: "7 (UEFI x86-64)", File: "snponly.efi",
			Reason: "PXE client of architecture 7 (UEFI x86-64): snponly.efi over TFTP"}
	}
	tl := &netboot.Timeline{}
	h, err := netboot.New(netboot.Config{Backend: allowAll, BaseURL: "http://192.0.2.10:8090", Timeline: tl})
	if err != nil {
		b.Fatal(err)
	}
	base := time.Now()
	tl.Now = func() time.Time { return base }
	i := 0
	b.ReportAllocs()
	for b.Loop() {
		e := evs[i%macs]
		e.Time = base
		h.Net(dhcpEvent(e))
		i++
	}
	if len(tl.Snapshot().Unmatched) == 0 {
		b.Fatal("no offer filed")
	}
}
