package pxe

import (
	"context"
	"encoding/binary"
	"log/slog"
	"net"
	"testing"
	"time"

	"github.com/insomniacslk/dhcp/dhcpv4"

	"github.com/plasmactl/plasma-node/pxe/backend"
	"github.com/plasmactl/plasma-node/pxe/dhcpserver"
	"github.com/plasmactl/plasma-node/pxe/events"
	"github.com/plasmactl/plasma-node/pxe/netboot"
	"github.com/plasmactl/plasma-node/pxe/store/folder"
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
		evs[i] = dhcpserver.Event{Kind: events.DHCPOffer, MAC: mac, XID: dhcpv4.TransactionID{0, 0, 0xab, 0xcd}, Arch: "7 (UEFI x86-64)", File: "snponly.efi",
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

// storeRecorder is a backend keeping its events in an event store, as
// the registry's does.
type storeRecorder struct {
	allowFunc
	events.Store
}

func (r storeRecorder) Record(ctx context.Context, e backend.Event) error { return r.Append(ctx, e) }
func (r storeRecorder) History(context.Context) ([]backend.Event, error)  { return nil, nil }

// BenchmarkDHCPEventRecorded is BenchmarkDHCPEvent with the boot step
// recorded in an event log on disk (events.jsonl, as node-provisioner
// serve records it): "inline" appends it on the offer's path, as the
// window did before its writer; "writer" offers it to the window's
// writer (the step is appended off the path, or dropped and counted when
// the writer is behind).
func BenchmarkDHCPEventRecorded(b *testing.B) {
	for _, mode := range []string{"inline", "writer"} {
		b.Run(mode, func(b *testing.B) {
			store := folder.OpenEvents(folder.EventsPath(b.TempDir()), folder.EventsOptions{})
			defer store.Close()
			rec := storeRecorder{allowAll, store}
			s := &Server{cfg: Config{RecordBootSteps: true}, log: slog.New(slog.DiscardHandler)}
			m := &netboot.Metrics{}
			w := s.eventWriter(rec, m)
			defer w.Close()
			tl := s.bootSteps(w)
			if mode == "inline" {
				tl = &netboot.Timeline{OnRecord: func(ev netboot.BootEvent) {
					rec.Record(context.Background(), backend.Event{Time: ev.Time, Kind: ev.Stage, MAC: ev.MAC, Detail: ev.Detail})
				}}
			}
			h, err := netboot.New(netboot.Config{Backend: rec, BaseURL: "http://192.0.2.10:8090", Timeline: tl, Metrics: m})
			if err != nil {
				b.Fatal(err)
			}
			mac := net.HardwareAddr{0x52, 0x54, 0, 0, 0, 0}
			i := 0
			b.ReportAllocs()
			for b.Loop() {
				binary.BigEndian.PutUint32(mac[2:], uint32(i%4096))
				h.Net(dhcpEvent(dhcpserver.Event{Kind: events.DHCPOffer, MAC: mac, Arch: "7 (UEFI x86-64)", File: "snponly.efi"}))
				i++
			}
			b.ReportMetric(float64(w.Dropped())/float64(b.N), "dropped/op")
		})
	}
}
