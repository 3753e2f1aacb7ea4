package agent

import (
	"errors"
	"fmt"
	"net/netip"
)

// The IPMI requests the agent sends the BMC through the host's system
// interface (IPMI v2.0, sections 22.24 and 23.2), to read the LAN
// address of an IPMI BMC whose firmware names no Redfish host interface.
const (
	// netFnApp and cmdGetChannelInfo: Get Channel Info, whose reply
	// names the channel's medium (byte 2, low 7 bits; 04h 802.3 LAN).
	netFnApp          = 0x06
	cmdGetChannelInfo = 0x42
	mediumLAN         = 0x04
	// netFnTransport and cmdGetLANConfig: Get LAN Configuration
	// Parameters; request data: channel, parameter, set selector, block
	// selector; reply: completion code, parameter revision, data.
	netFnTransport  = 0x0c
	cmdGetLANConfig = 0x02
	// lanParamIP is parameter 3, the IP address (4 bytes);
	// lanParamIPSource is parameter 4, the address source (low 4 bits).
	lanParamIP       = 3
	lanParamIPSource = 4
	// firstLANChannel is the channel most BMCs put their LAN on, tried
	// first; maxIPMIChannel is the last channel number a LAN can have
	// (0Eh is "this channel", 0Fh the system interface).
	firstLANChannel = 1
	maxIPMIChannel  = 0x0b
	// ipmiLANPort is IPMI over LAN's UDP port, the report's bmc_port
	// for an address read this way (pxe/bmc/ipmi's DefaultPort, which
	// the agent does not import).
	ipmiLANPort = 623
	// maxIPMIReply bounds what the agent takes of one reply.
	maxIPMIReply = 64
)

// ipSources names parameter 4's address sources by number.
var ipSources = []string{"unspecified", "static", "dhcp", "bios", "other"}

// errIPMIReply is wrapped by the error of a reply that gives no data: a
// completion code other than 0, or fewer bytes than the data needs.
var errIPMIReply = errors.New("IPMI reply refused")

// errNoLANAddress is wrapped when the BMC's LAN address is one a site
// cannot reach it at (0.0.0.0: the BMC has none).
var errNoLANAddress = errors.New("the BMC has no usable LAN address")

// lanConfigRequest is the data of Get LAN Configuration Parameters for
// parameter param of channel (its low 4 bits; the revision-only bit
// clear), set and block selectors 0.
func lanConfigRequest(channel, param byte) []byte {
	return []byte{channel & 0x0f, param, 0, 0}
}

// lanParam returns a Get LAN Configuration Parameters reply's data, at
// least n bytes: the reply's completion code must be 0.
func lanParam(reply []byte, param byte, n int) ([]byte, error) {
	if len(reply) > 0 && reply[0] != 0 {
		return nil, fmt.Errorf("%w: parameter %d: completion code %#02x", errIPMIReply, param, reply[0])
	}
	if len(reply) < 2+n {
		return nil, fmt.Errorf("%w: parameter %d: %d bytes, want at least %d (completion code, revision, data)", errIPMIReply, param, len(reply), 2+n)
	}
	return reply[2 : 2+n], nil
}

// lanAddress reads the BMC's LAN address from the replies to parameter
// 3 (ip) and 4 (src), and names its source ("unknown" when parameter 4
// is refused or past the known ones). An address a site cannot reach,
// 0.0.0.0 (none set) among them, is refused with errNoLANAddress.
func lanAddress(ip, src []byte) (netip.Addr, string, error) {
	d, err := lanParam(ip, lanParamIP, 4)
	if err != nil {
		return netip.Addr{}, "", err
	}
	a := netip.AddrFrom4([4]byte(d))
	if a.IsUnspecified() || a.IsLoopback() || a.IsMulticast() || a.IsLinkLocalUnicast() || a == netip.AddrFrom4([4]byte{255, 255, 255, 255}) {
		return netip.Addr{}, "", fmt.Errorf("%w: %s", errNoLANAddress, a)
	}
	source := "unknown"
	if s, err := lanParam(src, lanParamIPSource, 1); err == nil && int(s[0]&0x0f) < len(ipSources) {
		source = ipSources[s[0]&0x0f]
	}
	return a, source, nil
}

// isLANChannel says whether a Get Channel Info reply names an 802.3 LAN
// channel.
func isLANChannel(reply []byte) bool {
	return len(reply) >= 3 && reply[0] == 0 && reply[2]&0x7f == mediumLAN
}

// ipmiModules are the modules the agent loads by name for an IPMI BMC
// on interface iface (an SMBIOS type 38 name), beside those the
// devices' modaliases ask for: the system interface driver (which its
// ACPI or SMBIOS device may not bring on its own) and the device
// interface, which has no device to ask for it.
func ipmiModules(iface string) []string {
	if iface == "ssif" {
		return []string{"ipmi_ssif", "ipmi_devintf"}
	}
	return []string{"ipmi_si", "ipmi_devintf"}
}
