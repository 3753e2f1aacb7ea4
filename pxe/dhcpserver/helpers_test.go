package dhcpserver

import (
	"bytes"
	"net"
	"net/netip"
	"testing"

	"github.com/insomniacslk/dhcp/dhcpv4"
	"github.com/insomniacslk/dhcp/iana"

	"github.com/plasmactl/plasma-node/pxe/proxydhcp"
)

var (
	testXID      = dhcpv4.TransactionID{0xde, 0xad, 0xbe, 0xef}
	testServerIP = netip.MustParseAddr("192.0.2.10")
	testUUID     = append([]byte{0}, bytes.Repeat([]byte{0xab}, 16)...)
	testMAC      = net.HardwareAddr{0x52, 0x54, 0x00, 0x12, 0x34, 0x56}
	otherMAC     = net.HardwareAddr{0x52, 0x54, 0x00, 0xff, 0xff, 0xff}
)

func testProxyConfig() proxydhcp.Config {
	return proxydhcp.Config{ServerIP: testServerIP, Boot: testBootConfig()}
}

func testBootConfig() proxydhcp.BootConfig {
	return proxydhcp.BootConfig{
		HTTPBase:  "http://192.0.2.10:8090/ipxe/",
		ScriptURL: "http://192.0.2.10:8090/boot.ipxe",
	}
}

func allowOnly(macs ...net.HardwareAddr) func(net.HardwareAddr) bool {
	return func(m net.HardwareAddr) bool {
		for _, a := range macs {
			if bytes.Equal(a, m) {
				return true
			}
		}
		return false
	}
}

// Modifiers for requests as firmware sends them.
func class(c string) dhcpv4.Modifier { return dhcpv4.WithOption(dhcpv4.OptClassIdentifier(c)) }
func arch(a ...iana.Arch) dhcpv4.Modifier {
	return dhcpv4.WithOption(dhcpv4.OptClientArch(a...))
}
func generic(code uint8, v []byte) dhcpv4.Modifier {
	return dhcpv4.WithGeneric(dhcpv4.GenericOptionCode(code), v)
}

var (
	biosPXE = []dhcpv4.Modifier{class("PXEClient:Arch:00000:UNDI:002001"), arch(iana.INTEL_X86PC)}
	uefiPXE = []dhcpv4.Modifier{class("PXEClient:Arch:00007:UNDI:003016"), arch(iana.EFI_X86_64), generic(97, testUUID)}
)

// packet builds a request from the test MAC with a fixed xid.
func packet(t testing.TB, typ dhcpv4.MessageType, mods ...dhcpv4.Modifier) *dhcpv4.DHCPv4 {
	t.Helper()
	all := append([]dhcpv4.Modifier{dhcpv4.WithTransactionID(testXID), dhcpv4.WithHwAddr(testMAC), dhcpv4.WithBroadcast(true),
		dhcpv4.WithRequestedOptions(dhcpv4.OptionSubnetMask, dhcpv4.OptionRouter, dhcpv4.OptionBootfileName)}, mods...)
	all = append(all, dhcpv4.WithMessageType(typ))
	p, err := dhcpv4.New(all...)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func join(groups ...[]dhcpv4.Modifier) []dhcpv4.Modifier {
	var all []dhcpv4.Modifier
	for _, g := range groups {
		all = append(all, g...)
	}
	return all
}

// rawDiscover is a BIOS PXE DISCOVER on the wire.
func rawDiscover(t testing.TB) []byte {
	return packet(t, dhcpv4.MessageTypeDiscover, biosPXE...).ToBytes()
}
