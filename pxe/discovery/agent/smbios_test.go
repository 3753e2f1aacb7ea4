package agent

import (
	"encoding/binary"
	"errors"
	"net/netip"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/plasmactl/plasma-node/pxe/discovery"
)

// usbIface is a type 42 interface-specific data of a USB network
// device (DSP0270): device type 02h, idVendor, idProduct, then the
// serial number's string descriptor (length, type 03h, "Sn").
var usbIface = []byte{0x02, 0x6b, 0x1d, 0x03, 0x01, 0x04, 0x03, 'S', 'n'}

// type42 builds an SMBIOS type 42 structure byte by byte (DSP0134): its
// header (type, length, handle), the interface type, the
// interface-specific data with its length, the count of protocol
// records and the records, then an empty string set (two NULs).
func type42(ifType byte, iface []byte, records ...[]byte) []byte {
	b := []byte{42, 0, 0x34, 0x12, ifType, byte(len(iface))}
	b = append(b, iface...)
	b = append(b, byte(len(records)))
	for _, r := range records {
		b = append(b, r...)
	}
	b[1] = byte(len(b))
	return append(b, 0, 0)
}

// overIPRecord builds a Redfish over IP protocol record (type 04h, its
// length, then DSP0270's record data) with the host's and the
// service's address formats and addresses, the service's port and
// hostname.
func overIPRecord(hostFmt byte, host string, svcFmt byte, svc string, port uint16, hostname string) []byte {
	addr := func(s string) []byte {
		out := make([]byte, 16)
		if a, err := netip.ParseAddr(s); err == nil {
			if a.Is4() {
				v := a.As4()
				copy(out, v[:])
			} else {
				v := a.As16()
				copy(out, v[:])
			}
		}
		return out
	}
	d := make([]byte, 0, 91+len(hostname))
	d = append(d, 0x5a, 0x5a, 0x5a, 0x5a, 0x5a, 0x5a, 0x5a, 0x5a, 0x5a, 0x5a, 0x5a, 0x5a, 0x5a, 0x5a, 0x5a, 0x5a) // service UUID
	d = append(d, 0x01, hostFmt)                                                                                  // host IP assignment type (static), format
	d = append(d, addr(host)...)                                                                                  // host IP address
	d = append(d, addr("255.255.255.0")...)                                                                       // host IP mask
	d = append(d, 0x01, svcFmt)                                                                                   // service IP discovery type (static), format
	d = append(d, addr(svc)...)                                                                                   // service IP address
	d = append(d, addr("255.255.255.0")...)                                                                       // service IP mask
	d = binary.LittleEndian.AppendUint16(d, port)                                                                 // service port
	d = binary.LittleEndian.AppendUint32(d, 0)                                                                    // service VLAN ID
	d = append(d, byte(len(hostname)))
	d = append(d, hostname...)
	return append([]byte{protocolRedfishOverIP, byte(len(d))}, d...)
}

// TestRedfishService: the Redfish service address and port of a network
// host interface's Redfish over IP record, the first usable one; an
// unset, loopback, link-local or host's own address is skipped, and a
// structure whose lengths run past its end is refused as malformed.
func TestRedfishService(t *testing.T) {
	good := overIPRecord(ipFormatV4, "192.0.2.100", ipFormatV4, "192.0.2.10", 443, "bmc1")
	ipmiRecord := []byte{0x02, 3, 1, 2, 3} // a protocol record of another type
	tests := map[string]struct {
		raw     []byte
		want    string
		wantErr error
	}{
		"IPv4 service on 443":               {type42(0x40, usbIface, good), "192.0.2.10:443", nil},
		"IPv6 service on 8443":              {type42(0x40, usbIface, overIPRecord(ipFormatV6, "2001:db8::64", ipFormatV6, "2001:db8::10", 8443, "")), "[2001:db8::10]:8443", nil},
		"no port given":                     {type42(0x40, usbIface, overIPRecord(ipFormatV4, "192.0.2.100", ipFormatV4, "192.0.2.10", 0, "")), "192.0.2.10:0", nil},
		"no interface data":                 {type42(0x40, nil, good), "192.0.2.10:443", nil},
		"after a record of another type":    {type42(0x40, usbIface, ipmiRecord, good), "192.0.2.10:443", nil},
		"a link-local one, then a usable":   {type42(0x40, usbIface, overIPRecord(ipFormatV4, "169.254.0.2", ipFormatV4, "169.254.0.1", 443, ""), good), "192.0.2.10:443", nil},
		"IPv4 link-local only":              {type42(0x40, usbIface, overIPRecord(ipFormatV4, "169.254.0.2", ipFormatV4, "169.254.0.1", 443, "")), "", errNoService},
		"IPv6 link-local only":              {type42(0x40, usbIface, overIPRecord(ipFormatV6, "fe80::2", ipFormatV6, "fe80::1", 443, "")), "", errNoService},
		"the host's own address":            {type42(0x40, usbIface, overIPRecord(ipFormatV4, "192.0.2.10", ipFormatV4, "192.0.2.10", 443, "")), "", errNoService},
		"an unset address (format 0)":       {type42(0x40, usbIface, overIPRecord(ipFormatV4, "192.0.2.100", 0, "192.0.2.10", 443, "")), "", errNoService},
		"an address of an unknown format":   {type42(0x40, usbIface, overIPRecord(ipFormatV4, "192.0.2.100", 7, "192.0.2.10", 443, "")), "", errNoService},
		"an all-zero IPv4 address":          {type42(0x40, usbIface, overIPRecord(ipFormatV4, "192.0.2.100", ipFormatV4, "0.0.0.0", 443, "")), "", errNoService},
		"loopback":                          {type42(0x40, usbIface, overIPRecord(ipFormatV4, "192.0.2.100", ipFormatV4, "127.0.0.1", 443, "")), "", errNoService},
		"multicast":                         {type42(0x40, usbIface, overIPRecord(ipFormatV6, "2001:db8::64", ipFormatV6, "ff02::1", 443, "")), "", errNoService},
		"a KCS interface, not network":      {type42(0x02, nil), "", errNoService},
		"no Redfish over IP record":         {type42(0x40, usbIface, ipmiRecord), "", errNoService},
		"no protocol record":                {type42(0x40, usbIface), "", errNoService},
		"a record shorter than its data":    {type42(0x40, usbIface, append([]byte{protocolRedfishOverIP, 40}, good[2:42]...)), "", errNoService},
		"three bytes":                       {[]byte{42, 3, 0}, "", errSMBIOS},
		"another structure's type":          {append([]byte{38}, type42(0x40, usbIface, good)[1:]...), "", errSMBIOS},
		"a length past the bytes":           {type42(0x40, usbIface, good)[:60], "", errSMBIOS},
		"a length of 5 (found by the fuzz)": {[]byte{42, 5, 0, 0, 0x40}, "", errSMBIOS},
		"a length below the header":         {[]byte{42, 4, 0, 0, 0x40, 0, 0}, "", errSMBIOS},
		"interface data past the end":       {lie(type42(0x40, usbIface, good), 5, 250), "", errSMBIOS},
		"more records than there are":       {lie(type42(0x40, usbIface, good), 6+len(usbIface), 3), "", errSMBIOS},
		"a record length past the end":      {lie(type42(0x40, usbIface, good), 7+len(usbIface)+1, 200), "", errSMBIOS},
		"a record count at the very end":    {lie(type42(0x40, []byte{1, 2, 3}), 5, 4), "", errSMBIOS},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := redfishService(tt.raw)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("redfishService = %v, %v; want %v", got, err, tt.wantErr)
				}
				return
			}
			if err != nil || got.String() != tt.want {
				t.Fatalf("redfishService = %v, %v; want %s", got, err, tt.want)
			}
		})
	}
}

// lie returns raw with the byte at i set to v: a length that lies.
func lie(raw []byte, i int, v byte) []byte {
	out := append([]byte(nil), raw...)
	out[i] = v
	return out
}

// TestIPMIInterface: SMBIOS type 38's interface type byte names the
// IPMI BMC's system interface.
func TestIPMIInterface(t *testing.T) {
	type38 := func(iface byte) []byte {
		// type, length 12h, handle, interface type, spec revision 2.0,
		// I2C target address, NV storage address, base address (I/O
		// 0CA2h), modifier, interrupt; then the empty string set.
		return []byte{38, 0x12, 0, 0x01, iface, 0x20, 0x20, 0xff, 0xa3, 0x0c, 0, 0, 0, 0, 0, 0, 0x00, 0, 0, 0}
	}
	tests := map[string]struct {
		raw  []byte
		want string
		err  bool
	}{
		"KCS":                {type38(1), "kcs", false},
		"SMIC":               {type38(2), "smic", false},
		"BT":                 {type38(3), "bt", false},
		"SSIF":               {type38(4), "ssif", false},
		"unknown":            {type38(0), "unknown", false},
		"a type past them":   {type38(9), "unknown", false},
		"truncated":          {type38(1)[:4], "", true},
		"a lying length":     {lie(type38(1), 1, 0x40), "", true},
		"a type 42 instead":  {type42(0x40, usbIface), "", true},
		"no bytes":           {nil, "", true},
		"the header only, 5": {[]byte{38, 5, 0, 0, 3}, "bt", false},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := ipmiInterface(tt.raw)
			if got != tt.want || (err != nil) != tt.err {
				t.Errorf("ipmiInterface = %q, %v; want %q, error %v", got, err, tt.want, tt.err)
			}
			if err != nil && !errors.Is(err, errSMBIOS) {
				t.Errorf("the error %v is not errSMBIOS", err)
			}
		})
	}
}

// TestCollectReadsTheBMC: Collect reports the Redfish host interface's
// service (its first usable one) and the IPMI interface from sysfs's
// dmi/entries; a structure that is not a regular file is not read.
func TestCollectReadsTheBMC(t *testing.T) {
	sys := t.TempDir()
	write := func(entry string, raw []byte) {
		dir := filepath.Join(sys, "firmware/dmi/entries", entry)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "raw"), raw, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("42-0", type42(0x40, usbIface, overIPRecord(ipFormatV4, "169.254.0.2", ipFormatV4, "169.254.0.1", 443, "")))
	write("42-1", type42(0x40, usbIface, overIPRecord(ipFormatV6, "2001:db8::64", ipFormatV6, "2001:db8::10", 8443, "bmc")))
	write("38-0", []byte{38, 0x10, 0, 0, 1, 0x20, 0x20, 0xff, 0xa3, 0x0c, 0, 0, 0, 0, 0, 0, 0, 0})
	get := func() [4]any {
		r := Collect(Paths{Sys: sys, Proc: t.TempDir()})
		return [4]any{r.BMCAddress, r.BMCPort, r.BMCKind, r.BMCIPMI}
	}
	if d := cmp.Diff([4]any{"2001:db8::10", uint16(8443), discovery.BMCRedfish, "kcs"}, get()); d != "" {
		t.Errorf("Collect's BMC (-want +got):\n%s", d)
	}
	dir := filepath.Join(sys, "firmware/dmi/entries/42-1")
	os.Rename(filepath.Join(dir, "raw"), filepath.Join(dir, "real"))
	if err := os.Symlink("real", filepath.Join(dir, "raw")); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([4]any{"", uint16(0), "", "kcs"}, get()); d != "" {
		t.Errorf("Collect's BMC through a symlink (-want +got):\n%s", d)
	}
}

// FuzzRedfishService: no structure makes the parser panic or read past
// it, and an address it returns is a usable one.
func FuzzRedfishService(f *testing.F) {
	f.Add(type42(0x40, usbIface, overIPRecord(ipFormatV4, "192.0.2.100", ipFormatV4, "192.0.2.10", 443, "bmc1")))
	f.Add(type42(0x40, usbIface, []byte{0x02, 3, 1, 2, 3}, overIPRecord(ipFormatV6, "fe80::2", ipFormatV6, "2001:db8::10", 0, "")))
	f.Add([]byte{42, 9, 0, 0, 0x40, 0, 1, 4, 0})
	f.Add([]byte{38, 0x10, 0, 0, 1, 0x20})
	f.Fuzz(func(t *testing.T, raw []byte) {
		ap, err := redfishService(raw)
		if err != nil {
			if ap.IsValid() {
				t.Fatalf("an error %v with an address %v", err, ap)
			}
			return
		}
		if a := ap.Addr(); !a.IsValid() || a.IsLinkLocalUnicast() || a.IsLoopback() || a.IsUnspecified() || a.IsMulticast() {
			t.Fatalf("an unusable address %v", ap)
		}
		ipmiInterface(raw)
	})
}
