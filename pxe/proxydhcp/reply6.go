package proxydhcp

import (
	"bytes"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strings"

	"github.com/insomniacslk/dhcp/dhcpv6"
	"github.com/insomniacslk/dhcp/iana"
)

// Ports of the DHCPv6 boot exchange (RFC 8415, RFC 5970).
const (
	// DHCPv6Port is the DHCPv6 server port, where Solicits arrive on the
	// All_DHCP_Relay_Agents_and_Servers group (ff02::1:2).
	DHCPv6Port = 547
	// DHCPv6ClientPort is the port DHCPv6 clients receive replies on.
	DHCPv6ClientPort = 546
)

// EnterprisePXE is the enterprise number (343, Intel) of the PXEClient
// and HTTPClient vendor classes in DHCPv6 (option 16, RFC 5970 §3.4).
const EnterprisePXE = 343

// Config6 is what [Reply6] needs besides the request.
type Config6 struct {
	// ServerIP is this server's IPv6 address on the clients' network,
	// global or unique-local (not link-local): the host of the tftp://
	// boot file URLs offered to PXE clients. Required.
	ServerIP netip.Addr
	// ServerID is the server identifier (DUID) of every reply. Required;
	// [ServerDUID] makes one from the interface's MAC.
	ServerID dhcpv6.DUID
	// Boot says which boot files are offered; its URLs (HTTPBase,
	// ScriptURL) must name this server by an IPv6 address.
	Boot BootConfig
}

// ServerDUID is the DUID-LL (RFC 8415 §11.4) of a server's interface
// MAC, for [Config6.ServerID].
func ServerDUID(mac net.HardwareAddr) dhcpv6.DUID {
	return &dhcpv6.DUIDLL{HWType: iana.HWTypeEthernet, LinkLayerAddr: slices.Clone(mac)}
}

// Validate reports a missing, IPv4 or link-local ServerIP, a missing
// ServerID and the errors of [BootConfig.Validate]. Its errors match
// [ErrInvalidConfig].
func (c Config6) Validate() error {
	a := c.ServerIP
	if !a.Is6() || a.Is4In6() || a.IsUnspecified() || a.IsLinkLocalUnicast() || a.IsMulticast() {
		return fmt.Errorf("%w: ServerIP %q: want this server's global or unique-local IPv6 address on the clients' network", ErrInvalidConfig, a.String())
	}
	if c.ServerID == nil {
		return fmt.Errorf("%w: ServerID: want this server's DUID (ServerDUID of the interface's MAC)", ErrInvalidConfig)
	}
	return c.Boot.Validate()
}

// Decision6 is what [Reply6] made of one DHCPv6 request.
type Decision6 struct {
	// Type is [dhcpv6.MessageTypeAdvertise] or [dhcpv6.MessageTypeReply]
	// when a reply was built, [dhcpv6.MessageTypeNone] when the request
	// is ignored.
	Type dhcpv6.MessageType
	// XID is the request's transaction id.
	XID dhcpv6.TransactionID
	// Client is what the request told about its sender.
	Client Client
	// Boot is the boot-file choice, with the boot file as the URL sent
	// (option 59); zero when the request was ignored before one was
	// made.
	Boot Boot
	// Reason says why the request was answered so or ignored.
	Reason string
}

// Ignored reports that the request gets no reply.
func (d Decision6) Ignored() bool { return d.Type == dhcpv6.MessageTypeNone }

// ParseClient6 reads what a DHCPv6 request tells about its sender: its
// MAC (from a link-layer client DUID, else from the EUI-64 interface id
// of from, the request's link-local source address), the PXEClient or
// HTTPClient vendor class (enterprise 343), its architectures (option
// 61) and whether it runs iPXE (user class "iPXE"). It never fails; what
// is missing stays zero.
func ParseClient6(req *dhcpv6.Message, from netip.Addr) Client {
	var c Client
	switch d := req.Options.ClientID().(type) {
	case *dhcpv6.DUIDLL:
		c.MAC = slices.Clone(d.LinkLayerAddr)
	case *dhcpv6.DUIDLLT:
		c.MAC = slices.Clone(d.LinkLayerAddr)
	}
	if len(c.MAC) != 6 {
		c.MAC = macOfEUI64(from)
	}
	if vc := req.Options.VendorClass(EnterprisePXE); len(vc) > 0 {
		c.VendorClass = string(vc[0])
		switch {
		case strings.HasPrefix(c.VendorClass, ClassPXE):
			c.Class = ClassPXE
		case strings.HasPrefix(c.VendorClass, ClassHTTP):
			c.Class = ClassHTTP
		}
	}
	c.Archs = req.Options.ArchTypes()
	if len(c.Archs) == 0 {
		if a, ok := archFromClass(c.VendorClass); ok {
			c.Archs = []iana.Arch{a}
		}
	}
	c.IPXE = slices.ContainsFunc(req.Options.UserClasses(), func(u []byte) bool { return bytes.Equal(u, []byte("iPXE")) })
	return c
}

// macOfEUI64 is the MAC inside a link-local address's modified EUI-64
// interface id (RFC 4291 appendix A), or nil when it has none.
func macOfEUI64(a netip.Addr) net.HardwareAddr {
	if !a.Is6() || !a.IsLinkLocalUnicast() {
		return nil
	}
	b := a.As16()
	if b[11] != 0xff || b[12] != 0xfe {
		return nil
	}
	return net.HardwareAddr{b[8] ^ 0x02, b[9], b[10], b[13], b[14], b[15]}
}

// Reply6 builds the answer of a DHCPv6 boot server beside the site's
// DHCPv6 server, or nil with the reason it is ignored. It does no I/O.
// There is no standard proxy-DHCPv6; this is what UEFI firmware accepts
// from a second responder (EDK2's UefiPxeBcDxe and HttpBootDxe):
//
//   - a Solicit on [DHCPv6Port] gets an Advertise with no address (no
//     IA_NA), the PXEClient or HTTPClient vendor class (enterprise 343)
//     and the boot file URL (option 59): EDK2 files it as a proxy offer
//     and leases its address from the site's server;
//   - a Request on [PXEPort] gets a Reply with the same options: EDK2's
//     PXE client asks the proxy again there, at the boot file URL's host,
//     before it downloads;
//   - an Information-request on [DHCPv6Port] gets a Reply with the same
//     options (a stateless client such as iPXE on a segment without
//     stateful DHCPv6).
//
// A Request on the DHCPv6 port belongs to the lease exchange with the
// site's server and is ignored, as is a client whose MAC allow refuses
// (nil allow accepts none), one that is not network-booting, and one
// [SelectBoot] finds no boot file for. A PXE client's boot file is a
// tftp:// URL of ServerIP; an HTTP boot client's and iPXE's are the
// URLs of cfg.Boot.
func Reply6(req *dhcpv6.Message, from netip.Addr, on Arrival, cfg Config6, allow func(net.HardwareAddr) bool) (*dhcpv6.Message, Decision6) {
	if req == nil {
		return nil, Decision6{Reason: "no request"}
	}
	d := Decision6{XID: req.TransactionID, Client: ParseClient6(req, from)}
	var typ dhcpv6.MessageType
	switch {
	case req.MessageType == dhcpv6.MessageTypeSolicit && on == OnDHCPPort:
		typ = dhcpv6.MessageTypeAdvertise
	case req.MessageType == dhcpv6.MessageTypeInformationRequest && on == OnDHCPPort:
		typ = dhcpv6.MessageTypeReply
	case req.MessageType == dhcpv6.MessageTypeRequest && on == OnPXEPort:
		typ = dhcpv6.MessageTypeReply
	default:
		d.Reason = fmt.Sprintf("%s on port %s is not a boot request", req.MessageType, portName6(on))
		return nil, d
	}
	if d.Client.Class == "" {
		d.Reason = "not a PXE or HTTP boot client (no vendor class of enterprise 343)"
		return nil, d
	}
	if req.Options.ClientID() == nil {
		d.Reason = "no client identifier"
		return nil, d
	}
	if len(d.Client.MAC) == 0 {
		d.Reason = "no MAC: the client DUID is not link-layer and the source address is not EUI-64"
		return nil, d
	}
	if allow == nil || !allow(d.Client.MAC) {
		d.Reason = "machine not registered"
		return nil, d
	}
	d.Boot = SelectBoot(d.Client, cfg.Boot)
	if d.Boot.Ignore {
		d.Reason = d.Boot.Reason
		return nil, d
	}
	if !strings.Contains(d.Boot.File, "://") {
		d.Boot.File = "tftp://[" + cfg.ServerIP.String() + "]/" + d.Boot.File
	}
	d.Type, d.Reason = typ, d.Boot.Reason
	return buildReply6(req, typ, cfg, d.Boot), d
}

// buildReply6 is the reply of typ to req: client and server ids, the
// vendor class and the boot file URL.
func buildReply6(req *dhcpv6.Message, typ dhcpv6.MessageType, cfg Config6, b Boot) *dhcpv6.Message {
	m := &dhcpv6.Message{MessageType: typ, TransactionID: req.TransactionID}
	m.AddOption(dhcpv6.OptClientID(req.Options.ClientID()))
	m.AddOption(dhcpv6.OptServerID(cfg.ServerID))
	m.AddOption(&dhcpv6.OptVendorClass{EnterpriseNumber: EnterprisePXE, Data: [][]byte{[]byte(b.Class)}})
	m.AddOption(dhcpv6.OptBootFileURL(b.File))
	return m
}

func portName6(on Arrival) string {
	if on == OnPXEPort {
		return fmt.Sprint(PXEPort)
	}
	return fmt.Sprint(DHCPv6Port)
}
