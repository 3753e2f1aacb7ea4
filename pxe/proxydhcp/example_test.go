package proxydhcp_test

import (
	"fmt"
	"net"
	"net/netip"

	"github.com/insomniacslk/dhcp/dhcpv4"
	"github.com/insomniacslk/dhcp/iana"

	"github.com/plasmactl/plasma-node/pxe/proxydhcp"
)

func ExampleReply() {
	req, _ := dhcpv4.New(
		dhcpv4.WithHwAddr(net.HardwareAddr{0x52, 0x54, 0x00, 0x12, 0x34, 0x56}),
		dhcpv4.WithMessageType(dhcpv4.MessageTypeDiscover),
		dhcpv4.WithOption(dhcpv4.OptClassIdentifier("PXEClient:Arch:00007:UNDI:003016")),
		dhcpv4.WithOption(dhcpv4.OptClientArch(iana.EFI_X86_64)),
	)
	cfg := proxydhcp.Config{
		ServerIP: netip.MustParseAddr("192.0.2.10"),
		Boot:     proxydhcp.BootConfig{ScriptURL: "http://192.0.2.10:8090/boot.ipxe"},
	}
	everyone := func(net.HardwareAddr) bool { return true }
	offer, d := proxydhcp.Reply(req, proxydhcp.OnDHCPPort, cfg, everyone)
	fmt.Println(d.Action(), offer.BootFileName, "from", offer.ServerIPAddr)
	fmt.Println(d.Reason)

	// The same machine, now running iPXE, asks again.
	dhcpv4.WithUserClass("iPXE", false)(req)
	offer, _ = proxydhcp.Reply(req, proxydhcp.OnDHCPPort, cfg, everyone)
	fmt.Println(offer.BootFileName)
	// Output:
	// offer ipxe.efi from 192.0.2.10
	// PXE client of architecture 7 (UEFI x86-64): ipxe.efi over TFTP
	// http://192.0.2.10:8090/boot.ipxe?mac=52:54:00:12:34:56
}
