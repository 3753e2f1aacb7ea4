package proxydhcp

import (
	"encoding/binary"
	"net"
	"testing"

	"github.com/insomniacslk/dhcp/dhcpv4"
	"github.com/insomniacslk/dhcp/iana"
)

// BenchmarkDecideAndAppendReply answers a parsed UEFI PXE DISCOVER as a
// server does on its hot path: the decision, then the reply's bytes into
// a reused buffer. It cycles through 4096 MACs.
func BenchmarkDecideAndAppendReply(b *testing.B) {
	const macs = 4096
	reqs := make([]*dhcpv4.DHCPv4, macs)
	for i := range reqs {
		mac := net.HardwareAddr{0x52, 0x54, 0, 0, 0, 0}
		binary.BigEndian.PutUint32(mac[2:], uint32(i))
		req, err := dhcpv4.NewDiscovery(mac,
			dhcpv4.WithOption(dhcpv4.OptClassIdentifier("PXEClient:Arch:00007:UNDI:003016")),
			dhcpv4.WithOption(dhcpv4.OptClientArch(iana.EFI_X86_64)),
			dhcpv4.WithBroadcast(true))
		if err != nil {
			b.Fatal(err)
		}
		reqs[i] = req
	}
	cfg := testProxyConfig()
	everyone := func(net.HardwareAddr) bool { return true }
	out := make([]byte, 0, 576)
	i := 0
	b.ReportAllocs()
	for b.Loop() {
		req := reqs[i%macs]
		d := Decide(req, OnDHCPPort, cfg, everyone)
		if d.Ignored() {
			b.Fatalf("ignored: %s", d.Reason)
		}
		out = AppendReply(out[:0], req, OnDHCPPort, cfg, d)
		i++
	}
}
