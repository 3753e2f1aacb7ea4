package agent

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"path/filepath"
	"slices"

	"github.com/plasmactl/plasma-node/pxe/discovery"
)

// The SMBIOS structures the agent reads the BMC from (DMTF DSP0134), as
// the kernel shows each one: /sys/firmware/dmi/entries/<type>-<n>/raw,
// the structure's formatted area and then its strings.
const (
	// smbiosIPMI is type 38, IPMI Device Information: the machine has
	// an IPMI BMC, and byte 04h names its system interface.
	smbiosIPMI = 38
	// smbiosHostInterface is type 42, Management Controller Host
	// Interface: byte 04h the interface type, 05h the length n of the
	// interface-specific data at 06h, then at 06h+n the count of
	// protocol records, each a type byte, a length byte and the data.
	smbiosHostInterface = 42
	// hostInterfaceNetwork is type 42's interface type of a network
	// host interface (DSP0270).
	hostInterfaceNetwork = 0x40
	// protocolRedfishOverIP is the protocol record type of Redfish over
	// IP (DSP0270).
	protocolRedfishOverIP = 0x04
	// maxSMBIOSRaw bounds what the agent reads of one raw structure:
	// the formatted area is at most 255 bytes, the strings follow.
	maxSMBIOSRaw = 4096
)

// The Redfish over IP protocol record's data (DSP0270, "Protocol
// Specific Record Data"): the service UUID (16 bytes), the host's IP
// assignment type and address format (1 byte each), the host's IP
// address and mask (16 bytes each), the service's IP discovery type and
// address format (1 byte each), its IP address and mask (16 bytes
// each; an IPv4 address in the first 4), its port (2 bytes, little
// endian), its VLAN ID (4 bytes), and its hostname's length and bytes.
const (
	rfHostFormat    = 17
	rfHostAddress   = 18
	rfServiceFormat = 51
	rfServiceAddr   = 52
	rfServicePort   = 84
	rfFixedLen      = 91 // through the hostname's length byte

	ipFormatV4 = 1
	ipFormatV6 = 2
)

// errSMBIOS is wrapped by the errors of a structure that is not one:
// shorter than its header, or lengths that point past its end.
var errSMBIOS = errors.New("malformed SMBIOS structure")

// errNoService is wrapped when a Redfish host interface gives no
// address a site could reach the service at.
var errNoService = errors.New("no usable Redfish service address")

// formatted returns a raw structure's formatted area, checking its type
// and that its length fits the bytes read and is at least min.
func formatted(raw []byte, typ byte, min int) ([]byte, error) {
	if len(raw) < 4 {
		return nil, fmt.Errorf("%w: %d bytes, shorter than the header", errSMBIOS, len(raw))
	}
	if raw[0] != typ {
		return nil, fmt.Errorf("%w: type %d, want %d", errSMBIOS, raw[0], typ)
	}
	n := int(raw[1])
	if n < min || n > len(raw) {
		return nil, fmt.Errorf("%w: length %d of %d bytes, want %d to %d", errSMBIOS, n, len(raw), min, len(raw))
	}
	return raw[:n], nil
}

// ipmiInterface returns the system interface an SMBIOS type 38
// structure names ([discovery.IPMIInterfaces]; "unknown" for a type
// number past them).
func ipmiInterface(raw []byte) (string, error) {
	f, err := formatted(raw, smbiosIPMI, 5)
	if err != nil {
		return "", err
	}
	if t := int(f[4]); t < len(discovery.IPMIInterfaces) {
		return discovery.IPMIInterfaces[t], nil
	}
	return "unknown", nil
}

// redfishService returns the Redfish service address and port of an
// SMBIOS type 42 structure: the first Redfish-over-IP protocol record of
// a network host interface whose service address is usable. Every
// record's length is checked first: one that lies fails it whole. An address
// is not usable when it is unset (zero, or of unknown format), loopback,
// link-local, multicast, or the host's own address in the same record:
// DSP0270 lets the service be reached only over the host interface
// there, which a site cannot use. Port 0 is the record's "not given".
func redfishService(raw []byte) (netip.AddrPort, error) {
	f, err := formatted(raw, smbiosHostInterface, 7)
	if err != nil {
		return netip.AddrPort{}, err
	}
	if f[4] != hostInterfaceNetwork {
		return netip.AddrPort{}, fmt.Errorf("%w: interface type %#x is not a network host interface", errNoService, f[4])
	}
	at := 6 + int(f[5])
	if at >= len(f) {
		return netip.AddrPort{}, fmt.Errorf("%w: interface data of %d bytes runs past the structure's %d", errSMBIOS, f[5], len(f))
	}
	count := int(f[at])
	at++
	var redfish [][]byte
	for i := 0; i < count; i++ {
		if at+2 > len(f) {
			return netip.AddrPort{}, fmt.Errorf("%w: protocol record %d of %d starts past the structure's end", errSMBIOS, i+1, count)
		}
		typ, n := f[at], int(f[at+1])
		data := f[at+2:]
		if n > len(data) {
			return netip.AddrPort{}, fmt.Errorf("%w: protocol record %d of %d bytes runs past the structure's end", errSMBIOS, i+1, n)
		}
		if data, at = data[:n], at+2+n; typ == protocolRedfishOverIP {
			redfish = append(redfish, data)
		}
	}
	var why []string
	for _, data := range redfish {
		ap, err := overIP(data)
		if err == nil {
			return ap, nil
		}
		why = append(why, err.Error())
	}
	if len(why) == 0 {
		return netip.AddrPort{}, fmt.Errorf("%w: no Redfish over IP protocol record", errNoService)
	}
	return netip.AddrPort{}, fmt.Errorf("%w: %s", errNoService, why[0])
}

// overIP reads one Redfish over IP protocol record's data.
func overIP(d []byte) (netip.AddrPort, error) {
	if len(d) < rfFixedLen {
		return netip.AddrPort{}, fmt.Errorf("a Redfish over IP record of %d bytes, shorter than %d", len(d), rfFixedLen)
	}
	svc, ok := ipOf(d[rfServiceFormat], d[rfServiceAddr:rfServiceAddr+16])
	if !ok {
		return netip.AddrPort{}, fmt.Errorf("the service address is unset (format %d)", d[rfServiceFormat])
	}
	host, _ := ipOf(d[rfHostFormat], d[rfHostAddress:rfHostAddress+16])
	switch {
	case svc.IsUnspecified() || svc.IsLoopback() || svc.IsMulticast():
		return netip.AddrPort{}, fmt.Errorf("the service address %s is not a unicast one", svc)
	case svc.IsLinkLocalUnicast():
		return netip.AddrPort{}, fmt.Errorf("the service address %s is link-local (the host interface's own)", svc)
	case svc == host:
		return netip.AddrPort{}, fmt.Errorf("the service address %s is the host's own", svc)
	}
	return netip.AddrPortFrom(svc, binary.LittleEndian.Uint16(d[rfServicePort:])), nil
}

// ipOf reads a 16-byte address field of the given format (an IPv4
// address is its first 4 bytes).
func ipOf(format byte, b []byte) (netip.Addr, bool) {
	switch format {
	case ipFormatV4:
		return netip.AddrFrom4([4]byte(b[:4])), true
	case ipFormatV6:
		return netip.AddrFrom16([16]byte(b)).Unmap(), true
	}
	return netip.Addr{}, false
}

// bmcInfo is what [Collect] reads of the machine's BMC from its
// firmware's SMBIOS structures; the zero value is a machine that names
// none.
type bmcInfo struct {
	// Redfish is the Redfish host interface's service address and
	// port (type 42), invalid when none is usable.
	Redfish netip.AddrPort
	// IPMI is the IPMI BMC's system interface (type 38), empty when
	// the firmware names none.
	IPMI string
	// Skipped says why the structures read gave no address, for the
	// agent's log; empty when they did or there were none.
	Skipped []string
}

// readBMC reads the SMBIOS type 42 and 38 structures under sysfs's
// dmi/entries: regular files only, at most maxSMBIOSRaw bytes each.
func readBMC(p Paths) bmcInfo {
	var b bmcInfo
	for _, typ := range []int{smbiosHostInterface, smbiosIPMI} {
		paths, _ := filepath.Glob(p.sys("firmware/dmi/entries", fmt.Sprintf("%d-*", typ), "raw"))
		slices.Sort(paths)
		for _, path := range paths {
			raw, err := readBounded(path)
			if err == nil && typ == smbiosHostInterface && !b.Redfish.IsValid() {
				b.Redfish, err = redfishService(raw)
			}
			if err == nil && typ == smbiosIPMI && b.IPMI == "" {
				b.IPMI, err = ipmiInterface(raw)
			}
			if err != nil {
				b.Skipped = append(b.Skipped, fmt.Sprintf("%s: %v", path, err))
			}
		}
	}
	return b
}

// readBounded reads a regular file's first maxSMBIOSRaw bytes.
func readBounded(path string) ([]byte, error) {
	st, err := os.Lstat(path)
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("not a regular file (%s)", st.Mode().Type())
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, maxSMBIOSRaw))
}

// apply sets the report's BMC fields from b.
func (b bmcInfo) apply(r *discovery.Report) {
	r.BMCIPMI = b.IPMI
	if b.Redfish.IsValid() {
		r.BMCAddress, r.BMCPort, r.BMCKind = b.Redfish.Addr().String(), b.Redfish.Port(), discovery.BMCRedfish
	}
}
