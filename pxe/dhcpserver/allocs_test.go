package dhcpserver

import (
	"encoding/binary"
	"io"
	"log/slog"
	"net"
	"testing"

	"github.com/insomniacslk/dhcp/dhcpv4"
	"github.com/insomniacslk/dhcp/iana"

	"github.com/plasmactl/plasma-node/pxe/events"
	"github.com/plasmactl/plasma-node/pxe/proxydhcp"
)

// offerAllocBudget is what answering one PXE DISCOVER may allocate (as
// testing.AllocsPerRun counts them): the client's MAC, vendor class and
// architectures kept in the decision (the event's transaction id, text
// until issue 28, is its four bytes); it was 29 with dhcpv4.FromBytes
// and the library's option decoders. It is a committed budget:
// a change that adds an allocation to the reply path fails
// TestOfferAllocBudget until this is raised on purpose (say why in the
// commit). Allocation counts are deterministic, unlike times.
const offerAllocBudget = 4

// TestOfferAllocBudget holds the per-offer reply (parse, decision, reply
// bytes, event) to offerAllocBudget, for UEFI and BIOS clients, with the
// window's logger at its default level (decisions are logged with -v).
func TestOfferAllocBudget(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates on its own: allocation budgets are checked without it")
	}
	for name, arch := range map[string]struct {
		class string
		arch  iana.Arch
	}{
		"UEFI": {"PXEClient:Arch:00007:UNDI:003016", iana.EFI_X86_64},
		"BIOS": {"PXEClient:Arch:00000:UNDI:002001", iana.INTEL_X86PC},
	} {
		t.Run(name, func(t *testing.T) {
			mac := net.HardwareAddr{0x52, 0x54, 0, 0, 0, 0}
			binary.BigEndian.PutUint32(mac[2:], 7)
			req, err := dhcpv4.NewDiscovery(mac,
				dhcpv4.WithOption(dhcpv4.OptClassIdentifier(arch.class)),
				dhcpv4.WithOption(dhcpv4.OptClientArch(arch.arch)),
				dhcpv4.WithBroadcast(true))
			if err != nil {
				t.Fatal(err)
			}
			pkt := req.ToBytes()
			var offers int
			var file string
			log := slog.New(slog.NewJSONHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelWarn}))
			s := &Server{Proxy: testProxyConfig(), Allow: func(net.HardwareAddr) bool { return true }, Logger: log,
				OnEvent: func(e Event) {
					if e.Kind == events.DHCPOffer {
						offers++
						file = e.File
					}
				}}
			s.start()
			r := &reader{out: make([]byte, 0, 576)}
			peer := &net.UDPAddr{IP: net.IPv4zero, Port: proxydhcp.DHCPClientPort}
			var conn net.PacketConn = discardConn{}
			n := testing.AllocsPerRun(1000, func() { s.handle(log, r, conn, proxydhcp.OnDHCPPort, pkt, peer) })
			if offers == 0 || file == "" {
				t.Fatalf("%d offers, boot file %q: want offers with a boot file", offers, file)
			}
			if n > offerAllocBudget {
				t.Errorf("an offer allocates %v times, budget %d: find the new allocation, or raise offerAllocBudget on purpose", n, offerAllocBudget)
			}
		})
	}
}
