package proxydhcp

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	"github.com/insomniacslk/dhcp/dhcpv4"
	"github.com/insomniacslk/dhcp/iana"
)

// Ports of the proxy-DHCP exchange.
const (
	// DHCPPort is the DHCP server port, where DISCOVERs arrive.
	DHCPPort = 67
	// PXEPort is the PXE boot-server port, where PXE clients send a
	// REQUEST after a proxy offer.
	PXEPort = 4011
	// DHCPClientPort is the port clients receive replies on.
	DHCPClientPort = 68
)

// ErrInvalidConfig is matched by the errors of [BootConfig.Validate] and
// [Config.Validate], which a server checks before it starts.
var ErrInvalidConfig = errors.New("invalid boot configuration")

// Arrival says which socket a DHCP request came in on; it decides whether
// a REQUEST is answered.
type Arrival uint8

const (
	// OnDHCPPort is a request on the DHCP server port ([DHCPPort]).
	OnDHCPPort Arrival = iota
	// OnPXEPort is a request on the PXE boot-server port ([PXEPort]).
	OnPXEPort
)

// String returns "67" or "4011", the default port of the socket.
func (a Arrival) String() string {
	if a == OnPXEPort {
		return strconv.Itoa(PXEPort)
	}
	return strconv.Itoa(DHCPPort)
}

// Config is what [Reply] needs besides the request.
type Config struct {
	// ServerIP is this server's IPv4 address on the clients' network: the
	// next-server (siaddr), server identifier (option 54) and server name
	// (sname) of every reply. Required.
	ServerIP netip.Addr
	// Boot says which boot files are offered.
	Boot BootConfig
}

// Validate reports a missing or non-IPv4 ServerIP and the errors of
// [BootConfig.Validate]. Its errors match [ErrInvalidConfig].
func (c Config) Validate() error {
	if !c.ServerIP.Is4() || c.ServerIP.IsUnspecified() {
		return fmt.Errorf("%w: ServerIP %q: want this server's IPv4 address on the clients' network", ErrInvalidConfig, c.ServerIP.String())
	}
	return c.Boot.Validate()
}

// Decision is what [Reply] made of one request.
type Decision struct {
	// Type is [dhcpv4.MessageTypeOffer] or [dhcpv4.MessageTypeAck] when a
	// reply was built, [dhcpv4.MessageTypeNone] when the request is
	// ignored.
	Type dhcpv4.MessageType
	// XID is the request's transaction id.
	XID dhcpv4.TransactionID
	// Client is what the request told about its sender.
	Client Client
	// Boot is the boot-file choice; zero when the request was ignored
	// before one was made.
	Boot Boot
	// Reason is a short sentence on why the request was answered so or
	// ignored.
	Reason string
}

// Ignored reports that the request gets no reply.
func (d Decision) Ignored() bool { return d.Type == dhcpv4.MessageTypeNone }

// Action is "offer", "ack" or "ignore", for logs.
func (d Decision) Action() string {
	switch d.Type {
	case dhcpv4.MessageTypeOffer:
		return "offer"
	case dhcpv4.MessageTypeAck:
		return "ack"
	}
	return "ignore"
}

// ParseClient reads what a request tells about its sender: MAC, vendor
// class, architectures, whether it runs iPXE, relay address. It never
// fails; what is missing or malformed stays zero.
func ParseClient(req *dhcpv4.DHCPv4) Client {
	vc := req.ClassIdentifier()
	c := Client{MAC: slices.Clone(req.ClientHWAddr), VendorClass: vc}
	switch {
	case strings.HasPrefix(vc, ClassPXE):
		c.Class = ClassPXE
	case strings.HasPrefix(vc, ClassHTTP):
		c.Class = ClassHTTP
	}
	c.Archs = clientArchs(req.Options.Get(dhcpv4.OptionClientSystemArchitectureType))
	if len(c.Archs) == 0 {
		if a, ok := archFromClass(vc); ok {
			c.Archs = []iana.Arch{a}
		}
	}
	if slices.Contains(req.UserClass(), "iPXE") || req.Options.Has(dhcpv4.OptionEtherboot) {
		c.IPXE = true
	}
	if gi, ok := netip.AddrFromSlice(req.GatewayIPAddr); ok && !gi.Unmap().IsUnspecified() {
		c.Relay = gi.Unmap()
	}
	return c
}

// messageType is req.MessageType() without its decoder's allocations:
// option 53 of exactly one byte, else none.
func messageType(req *dhcpv4.DHCPv4) dhcpv4.MessageType {
	if v := req.Options.Get(dhcpv4.OptionDHCPMessageType); len(v) == 1 {
		return dhcpv4.MessageType(v[0])
	}
	return dhcpv4.MessageTypeNone
}

// clientArchs is req.ClientArch() from option 93's value v, with one
// allocation: the architectures, two bytes each; nil when v is missing,
// empty or of odd length.
func clientArchs(v []byte) []iana.Arch {
	if len(v) == 0 || len(v)%2 != 0 {
		return nil
	}
	a := make([]iana.Arch, len(v)/2)
	for i := range a {
		a[i] = iana.Arch(uint16(v[2*i])<<8 | uint16(v[2*i+1]))
	}
	return a
}

// archFromClass reads the architecture of a class such as
// "PXEClient:Arch:00007:UNDI:003016".
func archFromClass(vc string) (iana.Arch, bool) {
	f := strings.Split(vc, ":")
	for i := 0; i+1 < len(f); i++ {
		if f[i] == "Arch" {
			n, err := strconv.ParseUint(f[i+1], 10, 16)
			return iana.Arch(n), err == nil
		}
	}
	return 0, false
}

// Reply builds the proxy-DHCP answer to one request, or nil with the
// reason it is ignored. It does no I/O.
//
// Only BOOTREQUESTs from Ethernet clients whose vendor class (option 60)
// starts with PXEClient or HTTPClient, and whose MAC allow accepts (nil
// allow accepts none), are answered, and only when [SelectBoot] finds a
// boot file:
//
//   - a DISCOVER on port 67 gets an OFFER;
//   - a REQUEST on port 4011 gets an ACK;
//   - a REQUEST on port 67 gets an ACK only when its server identifier
//     (option 54) is this server; one naming another server belongs to
//     the lease exchange with the site's DHCP server and is ignored.
//
// The reply (reference §12.2) offers no address (yiaddr 0.0.0.0), keeps
// the xid, chaddr, giaddr and (on 4011) ciaddr, sets the broadcast flag on
// port 67, and carries siaddr = sname = ServerIP, the boot file in the
// BOOTP file field and option 67, options 53, 54 = ServerIP, 60 = the
// class, 97 echoed when sent, 61 and 82 copied (RFC 6842, RFC 3046), and
// for PXEClient on port 67 option 43 with PXE discovery control (6) = 0x08,
// "boot the file given, no discovery". An ACK on 4011 carries option 43
// only to echo the PXE boot item (71) the client sent.
func Reply(req *dhcpv4.DHCPv4, on Arrival, cfg Config, allow func(net.HardwareAddr) bool) (*dhcpv4.DHCPv4, Decision) {
	d := Decide(req, on, cfg, allow)
	if d.Ignored() {
		return nil, d
	}
	return buildReply(req, on, cfg, d), d
}

// Decide is the decision of [Reply], without building the reply: what a
// server needs before it writes the reply with [AppendReply].
func Decide(req *dhcpv4.DHCPv4, on Arrival, cfg Config, allow func(net.HardwareAddr) bool) Decision {
	if req == nil {
		return Decision{Reason: "no request"}
	}
	d := Decision{XID: req.TransactionID, Client: ParseClient(req)}
	ignored := func(format string, args ...any) Decision {
		d.Type = dhcpv4.MessageTypeNone
		d.Reason = fmt.Sprintf(format, args...)
		return d
	}
	if req.OpCode != dhcpv4.OpcodeBootRequest {
		return ignored("not a BOOTREQUEST (op %d)", req.OpCode)
	}
	if d.Client.Class == "" {
		return ignored("not a PXE or HTTP boot client (vendor class %q)", d.Client.VendorClass)
	}
	if req.HWType != iana.HWTypeEthernet || len(req.ClientHWAddr) != 6 {
		return ignored("not an Ethernet client (hardware type %d, address length %d)", req.HWType, len(req.ClientHWAddr))
	}
	mt := messageType(req)
	switch {
	case on == OnDHCPPort && mt == dhcpv4.MessageTypeDiscover:
		d.Type = dhcpv4.MessageTypeOffer
	case on == OnPXEPort && mt == dhcpv4.MessageTypeRequest:
		d.Type = dhcpv4.MessageTypeAck
	case on == OnDHCPPort && mt == dhcpv4.MessageTypeRequest:
		sid, ok := netip.AddrFromSlice(req.ServerIdentifier())
		if !ok {
			return ignored("REQUEST on port 67 without a server identifier is for the site's DHCP server")
		}
		if sid.Unmap() != cfg.ServerIP {
			return ignored("REQUEST on port 67 for another DHCP server (%s)", sid.Unmap())
		}
		d.Type = dhcpv4.MessageTypeAck
	default:
		return ignored("%s on port %s is not answered", mt, on)
	}
	if !cfg.ServerIP.Is4() || cfg.ServerIP.IsUnspecified() {
		return ignored("no server address configured")
	}
	if allow == nil || !allow(d.Client.MAC) {
		return ignored("machine %s is not served by this window", d.Client.MAC)
	}
	d.Boot = SelectBoot(d.Client, cfg.Boot)
	if d.Boot.Ignore {
		return ignored("%s", d.Boot.Reason)
	}
	if len(d.Boot.File) > maxBootFile {
		return ignored("boot file %q is longer than the %d bytes of the BOOTP file field", d.Boot.File, maxBootFile)
	}
	d.Reason = d.Boot.Reason
	return d
}

// echoedOptions are the request's options a reply copies when they fit
// in one option (RFC 6842, RFC 3046, and 97 for PXE).
var echoedOptions = [...]dhcpv4.OptionCode{dhcpv4.OptionClientIdentifier, dhcpv4.OptionRelayAgentInformation, dhcpv4.OptionClientMachineIdentifier}

// buildReply is the reply of [Reply] for a decision d that answers req.
func buildReply(req *dhcpv4.DHCPv4, on Arrival, cfg Config, d Decision) *dhcpv4.DHCPv4 {
	sip := net.IP(cfg.ServerIP.AsSlice())
	resp := &dhcpv4.DHCPv4{
		OpCode:         dhcpv4.OpcodeBootReply,
		HWType:         req.HWType,
		TransactionID:  req.TransactionID,
		Flags:          req.Flags,
		ClientIPAddr:   net.IPv4zero,
		YourIPAddr:     net.IPv4zero,
		ServerIPAddr:   sip,
		GatewayIPAddr:  ip4OrZero(req.GatewayIPAddr),
		ClientHWAddr:   slices.Clone(req.ClientHWAddr),
		ServerHostName: cfg.ServerIP.String(),
		BootFileName:   d.Boot.File,
		Options:        dhcpv4.Options{},
	}
	if on == OnPXEPort {
		resp.ClientIPAddr = ip4OrZero(req.ClientIPAddr)
	} else {
		resp.SetBroadcast()
	}
	resp.UpdateOption(dhcpv4.OptMessageType(d.Type))
	resp.UpdateOption(dhcpv4.OptServerIdentifier(sip))
	resp.UpdateOption(dhcpv4.OptClassIdentifier(d.Boot.Class))
	resp.UpdateOption(dhcpv4.OptBootFileName(d.Boot.File))
	for _, code := range echoedOptions {
		if v := req.Options.Get(code); v != nil && len(v) <= 255 {
			resp.UpdateOption(dhcpv4.OptGeneric(code, slices.Clone(v)))
		}
	}
	if v := vendorOption(req, on, d); v != nil {
		resp.UpdateOption(dhcpv4.OptGeneric(dhcpv4.OptionVendorSpecificInformation, v))
	}
	return resp
}

// vendorOption is the option 43 of the reply, or nil for none: for a
// PXEClient on port 67 discovery control, on 4011 the boot item echoed.
func vendorOption(req *dhcpv4.DHCPv4, on Arrival, d Decision) []byte {
	if d.Boot.Class != ClassPXE {
		return nil
	}
	if on == OnDHCPPort {
		return []byte{pxeDiscoveryControl, 1, discoveryBootFileOnly, pxeEnd}
	}
	if item, ok := pxeSubOption(req.Options.Get(dhcpv4.OptionVendorSpecificInformation), pxeBootItem); ok {
		v := append([]byte{pxeBootItem, byte(len(item))}, item...)
		return append(v, pxeEnd)
	}
	return nil
}

// bootpMinLen is the shortest BOOTP message, as dhcpv4's ToBytes pads it.
const bootpMinLen = 300

var magicCookie = [4]byte{99, 130, 83, 99}

// AppendReply appends to dst the wire bytes of the reply [Reply] builds
// for req and its decision d (from [Decide]; d must not be ignored),
// without building a [dhcpv4.DHCPv4]: the same header, the same options
// in the same order, the end option and the padding to 300 bytes. It is a
// server's hot path; a test holds it to [Reply].
func AppendReply(dst []byte, req *dhcpv4.DHCPv4, on Arrival, cfg Config, d Decision) []byte {
	start := len(dst)
	flags := req.Flags
	var ciaddr [4]byte
	if on == OnPXEPort {
		copy(ciaddr[:], ip4OrZero(req.ClientIPAddr))
	} else {
		flags |= 0x8000
	}
	sip := cfg.ServerIP.As4()
	dst = append(dst, byte(dhcpv4.OpcodeBootReply), byte(req.HWType), byte(len(req.ClientHWAddr)), 0)
	dst = append(dst, req.TransactionID[:]...)
	dst = append(dst, 0, 0, byte(flags>>8), byte(flags))
	dst = append(dst, ciaddr[:]...)
	dst = append(dst, 0, 0, 0, 0)
	dst = append(dst, sip[:]...)
	if gi := req.GatewayIPAddr.To4(); gi != nil {
		dst = append(dst, gi...)
	} else {
		dst = append(dst, 0, 0, 0, 0)
	}
	dst = appendField(dst, req.ClientHWAddr, 16, 16)
	var sname [15]byte
	dst = appendField(dst, cfg.ServerIP.AppendTo(sname[:0]), 63, 64)
	dst = appendField(dst, d.Boot.File, 127, 128)
	dst = append(dst, magicCookie[:]...)

	// Options in code order, but 82 last (RFC 3046 §2.1): 43, 53, 54,
	// 60, 61, 67, 97, 82.
	if v := vendorOption(req, on, d); v != nil {
		dst = appendOption(dst, dhcpv4.OptionVendorSpecificInformation, v)
	}
	dst = append(dst, byte(dhcpv4.OptionDHCPMessageType), 1, byte(d.Type))
	dst = append(dst, byte(dhcpv4.OptionServerIdentifier), 4)
	dst = append(dst, sip[:]...)
	dst = appendOption(dst, dhcpv4.OptionClassIdentifier, d.Boot.Class)
	echo := func(dst []byte, code dhcpv4.OptionCode) []byte {
		if v := req.Options.Get(code); v != nil && len(v) <= 255 {
			return appendOption(dst, code, v)
		}
		return dst
	}
	dst = echo(dst, dhcpv4.OptionClientIdentifier)
	dst = appendOption(dst, dhcpv4.OptionBootfileName, d.Boot.File)
	dst = echo(dst, dhcpv4.OptionClientMachineIdentifier)
	dst = echo(dst, dhcpv4.OptionRelayAgentInformation)
	dst = append(dst, byte(dhcpv4.OptionEnd))
	for len(dst)-start < bootpMinLen {
		dst = append(dst, 0)
	}
	return dst
}

// appendField appends v cut at max bytes and zero-padded to size.
func appendField[T ~string | ~[]byte](dst []byte, v T, max, size int) []byte {
	if len(v) > max {
		v = v[:max]
	}
	dst = append(dst, v...)
	for i := len(v); i < size; i++ {
		dst = append(dst, 0)
	}
	return dst
}

// appendOption appends an option, split into pieces of 255 bytes when
// longer (RFC 3396), as dhcpv4 writes one.
func appendOption[T ~string | ~[]byte](dst []byte, code dhcpv4.OptionCode, v T) []byte {
	if len(v) == 0 {
		return append(dst, byte(code.Code()), 0)
	}
	for len(v) > 0 {
		n := min(len(v), 255)
		dst = append(dst, byte(code.Code()), byte(n))
		dst = append(dst, v[:n]...)
		v = v[n:]
	}
	return dst
}

// PXE vendor-encapsulated (option 43) sub-options, PXE specification 2.1.
const (
	pxeDiscoveryControl = 6
	pxeBootItem         = 71
	pxeEnd              = 255
	// discoveryBootFileOnly is bit 3: download the boot file of the
	// reply, without boot-server discovery.
	discoveryBootFileOnly = 0x08
)

// pxeSubOption finds a sub-option in option 43's data.
func pxeSubOption(data []byte, code byte) ([]byte, bool) {
	for len(data) >= 1 {
		c := data[0]
		if c == pxeEnd {
			return nil, false
		}
		if c == 0 {
			data = data[1:]
			continue
		}
		if len(data) < 2 || len(data) < 2+int(data[1]) {
			return nil, false
		}
		v := data[2 : 2+int(data[1])]
		if c == code {
			return slices.Clone(v), true
		}
		data = data[2+int(data[1]):]
	}
	return nil, false
}

func ip4OrZero(ip net.IP) net.IP {
	if v4 := ip.To4(); v4 != nil {
		return slices.Clone(v4)
	}
	return net.IPv4zero
}
