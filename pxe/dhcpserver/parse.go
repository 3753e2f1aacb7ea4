package dhcpserver

import (
	"errors"
	"fmt"
	"io"
	"net"

	"github.com/insomniacslk/dhcp/dhcpv4"
	"github.com/insomniacslk/dhcp/iana"
)

// BOOTP framing of a request.
const (
	bootpHeaderLen = 236
	cookieLen      = 4
)

var magicCookie = [cookieLen]byte{99, 130, 83, 99}

var errShortPacket = errors.New("malformed DHCP packet: shorter than the BOOTP header and magic cookie")

// parser decodes requests as [dhcpv4.FromBytes] does, with the same
// fields and the same errors, into one message it reuses: its addresses
// and option values point into the packet, so the message is valid only
// until the reading goroutine reads its next packet. It allocates only
// for a non-empty sname or file field and for an option sent in several
// pieces (RFC 3396), which a PXE DISCOVER has neither of; FromBytes
// allocates about twenty times a packet, the most of a reply's cost.
type parser struct {
	msg  dhcpv4.DHCPv4
	opts dhcpv4.Options
}

// parse decodes q. The message it returns is the parser's own.
func (p *parser) parse(q []byte) (*dhcpv4.DHCPv4, error) {
	if len(q) < bootpHeaderLen+cookieLen {
		return nil, errShortPacket
	}
	if p.opts == nil {
		p.opts = make(dhcpv4.Options, 16)
	}
	clear(p.opts)
	m := &p.msg
	*m = dhcpv4.DHCPv4{
		OpCode:        dhcpv4.OpcodeType(q[0]),
		HWType:        iana.HWType(q[1]),
		HopCount:      q[3],
		NumSeconds:    uint16(q[8])<<8 | uint16(q[9]),
		Flags:         uint16(q[10])<<8 | uint16(q[11]),
		ClientIPAddr:  net.IP(q[12:16:16]),
		YourIPAddr:    net.IP(q[16:20:20]),
		ServerIPAddr:  net.IP(q[20:24:24]),
		GatewayIPAddr: net.IP(q[24:28:28]),
		Options:       p.opts,
	}
	copy(m.TransactionID[:], q[4:8])
	hl := min(int(q[2]), 16)
	m.ClientHWAddr = net.HardwareAddr(q[28 : 28+hl : 28+hl])
	m.ServerHostName = cString(q[44:108])
	m.BootFileName = cString(q[108:236])
	if [cookieLen]byte(q[bootpHeaderLen:]) != magicCookie {
		return nil, fmt.Errorf("malformed DHCP packet: got magic cookie %v, want %v", q[bootpHeaderLen:bootpHeaderLen+cookieLen], magicCookie[:])
	}
	if err := parseOptions(p.opts, q[bootpHeaderLen+cookieLen:]); err != nil {
		return nil, err
	}
	return m, nil
}

// cString is a NUL-terminated field as a string.
func cString(b []byte) string {
	for i, c := range b {
		if c == 0 {
			b = b[:i]
			break
		}
	}
	if len(b) == 0 {
		return ""
	}
	return string(b)
}

// parseOptions reads options as dhcpv4 does: pads skipped, pieces of one
// option concatenated, an error for a truncated option or a missing end.
func parseOptions(o dhcpv4.Options, data []byte) error {
	if len(data) == 0 {
		return nil
	}
	for len(data) > 0 {
		code := data[0]
		data = data[1:]
		switch code {
		case 0: // pad
			continue
		case 255: // end
			return nil
		}
		if len(data) < 1 {
			return fmt.Errorf("error collecting options: %w", io.ErrUnexpectedEOF)
		}
		n := int(data[0])
		if len(data) < 1+n {
			return fmt.Errorf("error collecting options: %w", io.ErrUnexpectedEOF)
		}
		v := data[1 : 1+n : 1+n]
		data = data[1+n:]
		old, ok := o[code]
		if n == 0 {
			if !ok {
				o[code] = nil // as dhcpv4 keeps an empty option
			}
			continue
		}
		if ok {
			v = append(old[:len(old):len(old)], v...)
		}
		o[code] = v
	}
	return io.ErrUnexpectedEOF
}
