package proxydhcp

import (
	"bytes"
	"encoding/binary"
	"errors"
	"net"
	"net/netip"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/insomniacslk/dhcp/dhcpv6"
	"github.com/insomniacslk/dhcp/iana"
)

var (
	testServerIP6 = netip.MustParseAddr("fd77::2")
	// testLinkLocal is testMAC's EUI-64 link-local address, the source of
	// EDK2's Solicit.
	testLinkLocal = netip.MustParseAddr("fe80::5054:ff:fe12:3456")
)

func testConfig6() Config6 {
	return Config6{ServerIP: testServerIP6, ServerID: ServerDUID(net.HardwareAddr{0x52, 0x54, 0x00, 0, 0, 2}),
		Boot: BootConfig{HTTPBase: "http://[fd77::2]:8090/ipxe", ScriptURL: "http://[fd77::2]:8090/boot.ipxe"}}
}

// edk2Solicit is a Solicit as OVMF's PXE or HTTP boot client sends it:
// a DUID-UUID client id, an IA_NA, option 61 and the vendor class.
func edk2Solicit(t testing.TB, typ dhcpv6.MessageType, class string, arch iana.Arch, extra ...dhcpv6.Option) *dhcpv6.Message {
	t.Helper()
	m := &dhcpv6.Message{MessageType: typ, TransactionID: dhcpv6.TransactionID{1, 2, 3}}
	m.AddOption(dhcpv6.OptClientID(&dhcpv6.DUIDUUID{UUID: [16]byte{0xe2, 0xe0}}))
	m.AddOption(&dhcpv6.OptIANA{IaId: [4]byte{0, 0, 0, 1}})
	m.AddOption(dhcpv6.OptClientArchType(arch))
	if class != "" {
		m.AddOption(&dhcpv6.OptVendorClass{EnterpriseNumber: EnterprisePXE, Data: [][]byte{[]byte(class)}})
	}
	for _, o := range extra {
		m.AddOption(o)
	}
	return m
}

// edk2ProxyOffer classifies a reply as EDK2's PxeBcParseDhcp6Packet and
// HttpBootParseDhcp6Packet do (NetworkPkg, edk2 c5aa7e7): a proxy offer
// has no IA_NA; a PXE offer's option 16 starts with enterprise 343 and
// has "PXEClient" at byte 6, an HTTP offer "HTTPClient"; the boot file
// URL is option 59.
func edk2ProxyOffer(wire []byte) (class, url string, proxy bool) {
	proxy = true
	for o := wire[4:]; len(o) >= 4; {
		code, n := binary.BigEndian.Uint16(o), int(binary.BigEndian.Uint16(o[2:]))
		if len(o) < 4+n {
			return "", "", false
		}
		data := o[4 : 4+n]
		switch code {
		case 3: // IA_NA
			proxy = false
		case 16:
			if n >= 13 && binary.BigEndian.Uint32(data) == EnterprisePXE {
				if bytes.HasPrefix(data[6:], []byte(ClassHTTP)) {
					class = ClassHTTP
				} else if bytes.HasPrefix(data[6:], []byte(ClassPXE)) {
					class = ClassPXE
				}
			}
		case 59:
			url = string(data)
		}
		o = o[4+n:]
	}
	return class, url, proxy
}

func TestReply6(t *testing.T) {
	allowTest := allowOnly(testMAC)
	ipxeUserClass := &dhcpv6.OptUserClass{UserClasses: [][]byte{[]byte("iPXE")}}
	type want struct {
		Type            dhcpv6.MessageType
		Class, URL      string
		Proxy           bool
		Reason          string
		MAC             string
		SameXIDClientID bool
	}
	tests := map[string]struct {
		req   *dhcpv6.Message
		from  netip.Addr
		on    Arrival
		allow func(net.HardwareAddr) bool
		want  want
	}{
		"EDK2's PXE Solicit gets a proxy Advertise with the TFTP URL of the UEFI binary": {
			req: edk2Solicit(t, dhcpv6.MessageTypeSolicit, "PXEClient:Arch:00007:UNDI:003000", iana.EFI_X86_64), from: testLinkLocal, allow: allowTest,
			want: want{Type: dhcpv6.MessageTypeAdvertise, Class: ClassPXE, URL: "tftp://[fd77::2]/ipxe.efi", Proxy: true, MAC: testMAC.String(), SameXIDClientID: true,
				Reason: "PXE client of architecture 7 (UEFI x86-64): ipxe.efi over TFTP"},
		},
		"a DUID-UUID client from a global address cannot be told by its MAC": {
			req: edk2Solicit(t, dhcpv6.MessageTypeRequest, "PXEClient:Arch:00007:UNDI:003000", iana.EFI_X86_64), from: netip.MustParseAddr("fd77::123"), on: OnPXEPort,
			allow: func(net.HardwareAddr) bool { return true },
			want:  want{Reason: "no MAC: the client DUID is not link-layer and the source address is not EUI-64"},
		},
		"a PXE Request on port 4011 from the link-local address gets a Reply": {
			req: edk2Solicit(t, dhcpv6.MessageTypeRequest, "PXEClient:Arch:00007:UNDI:003000", iana.EFI_X86_64), from: testLinkLocal, on: OnPXEPort, allow: allowTest,
			want: want{Type: dhcpv6.MessageTypeReply, Class: ClassPXE, URL: "tftp://[fd77::2]/ipxe.efi", Proxy: true, MAC: testMAC.String(), SameXIDClientID: true,
				Reason: "PXE client of architecture 7 (UEFI x86-64): ipxe.efi over TFTP"},
		},
		"EDK2's HTTP boot Solicit gets the HTTP URL with class HTTPClient": {
			req: edk2Solicit(t, dhcpv6.MessageTypeSolicit, "HTTPClient:Arch:00016:UNDI:003000", iana.EFI_X86_64_HTTP), from: testLinkLocal, allow: allowTest,
			want: want{Type: dhcpv6.MessageTypeAdvertise, Class: ClassHTTP, URL: "http://[fd77::2]:8090/ipxe/ipxe.efi", Proxy: true, MAC: testMAC.String(), SameXIDClientID: true,
				Reason: "HTTP boot client of architecture 16 (UEFI x86-64 HTTP): ipxe.efi over HTTP"},
		},
		"a DUID-LL client is known by its DUID's MAC from any source": {
			req: func() *dhcpv6.Message {
				m := edk2Solicit(t, dhcpv6.MessageTypeSolicit, "PXEClient:Arch:00007:UNDI:003000", iana.EFI_X86_64)
				m.UpdateOption(dhcpv6.OptClientID(&dhcpv6.DUIDLL{HWType: iana.HWTypeEthernet, LinkLayerAddr: testMAC}))
				return m
			}(), from: netip.MustParseAddr("fe80::1"), allow: allowTest,
			want: want{Type: dhcpv6.MessageTypeAdvertise, Class: ClassPXE, URL: "tftp://[fd77::2]/ipxe.efi", Proxy: true, MAC: testMAC.String(), SameXIDClientID: true,
				Reason: "PXE client of architecture 7 (UEFI x86-64): ipxe.efi over TFTP"},
		},
		"iPXE's Information-request gets the script URL for its MAC": {
			req: edk2Solicit(t, dhcpv6.MessageTypeInformationRequest, "PXEClient:Arch:00007:UNDI:003010", iana.EFI_X86_64, ipxeUserClass), from: testLinkLocal, allow: allowTest,
			want: want{Type: dhcpv6.MessageTypeReply, Class: ClassPXE, URL: "http://[fd77::2]:8090/boot.ipxe?mac=52:54:00:12:34:56", Proxy: true, MAC: testMAC.String(), SameXIDClientID: true,
				Reason: "client already runs iPXE: its boot script"},
		},
		"a Request on the DHCPv6 port is the site's lease exchange": {
			req: edk2Solicit(t, dhcpv6.MessageTypeRequest, "PXEClient:Arch:00007:UNDI:003000", iana.EFI_X86_64), from: testLinkLocal, allow: allowTest,
			want: want{Reason: "REQUEST on port 547 is not a boot request", MAC: testMAC.String()},
		},
		"a machine not registered gets nothing": {
			req: edk2Solicit(t, dhcpv6.MessageTypeSolicit, "PXEClient:Arch:00007:UNDI:003000", iana.EFI_X86_64), from: testLinkLocal, allow: allowOnly(otherMAC),
			want: want{Reason: "machine not registered", MAC: testMAC.String()},
		},
		"a client without the vendor class is not booting": {
			req: edk2Solicit(t, dhcpv6.MessageTypeSolicit, "", iana.EFI_X86_64), from: testLinkLocal, allow: allowTest,
			want: want{Reason: "not a PXE or HTTP boot client (no vendor class of enterprise 343)", MAC: testMAC.String()},
		},
		"a BIOS architecture over DHCPv6 gets the BIOS binary's URL": {
			req: edk2Solicit(t, dhcpv6.MessageTypeSolicit, "PXEClient:Arch:00000:UNDI:002001", iana.INTEL_X86PC), from: testLinkLocal, allow: allowTest,
			want: want{Type: dhcpv6.MessageTypeAdvertise, Class: ClassPXE, URL: "tftp://[fd77::2]/undionly.kpxe", Proxy: true, MAC: testMAC.String(), SameXIDClientID: true,
				Reason: "PXE client of architecture 0 (BIOS): undionly.kpxe over TFTP"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			// Through the wire, as the server reads it.
			req, err := dhcpv6.MessageFromBytes(tc.req.ToBytes())
			if err != nil {
				t.Fatal(err)
			}
			resp, d := Reply6(req, tc.from, tc.on, testConfig6(), tc.allow)
			var got want
			got.Reason, got.Type = d.Reason, d.Type
			if d.Client.MAC != nil {
				got.MAC = d.Client.MAC.String()
			}
			if (resp == nil) != d.Ignored() {
				t.Fatalf("reply %v with decision %v", resp, d.Type)
			}
			if resp != nil {
				wire := resp.ToBytes()
				got.Class, got.URL, got.Proxy = edk2ProxyOffer(wire)
				back, err := dhcpv6.MessageFromBytes(wire)
				if err != nil {
					t.Fatal(err)
				}
				got.SameXIDClientID = back.TransactionID == req.TransactionID && back.MessageType == d.Type &&
					bytes.Equal(back.Options.ClientID().ToBytes(), req.Options.ClientID().ToBytes()) && back.Options.ServerID() != nil
				if d.Boot.File != got.URL {
					t.Errorf("decision's boot file %q, option 59 %q", d.Boot.File, got.URL)
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestConfig6Validate(t *testing.T) {
	for name, c := range map[string]Config6{
		"no address":           {ServerID: testConfig6().ServerID},
		"an IPv4 address":      {ServerIP: netip.MustParseAddr("192.0.2.10"), ServerID: testConfig6().ServerID},
		"a link-local address": {ServerIP: netip.MustParseAddr("fe80::2"), ServerID: testConfig6().ServerID},
		"no server DUID":       {ServerIP: testServerIP6},
	} {
		if err := c.Validate(); !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("%s: %v; want ErrInvalidConfig", name, err)
		}
	}
	if err := testConfig6().Validate(); err != nil {
		t.Errorf("a good configuration: %v", err)
	}
}

func FuzzReply6(f *testing.F) {
	for _, typ := range []dhcpv6.MessageType{dhcpv6.MessageTypeSolicit, dhcpv6.MessageTypeRequest, dhcpv6.MessageTypeInformationRequest} {
		b := edk2Solicit(f, typ, "PXEClient:Arch:00007:UNDI:003000", iana.EFI_X86_64).ToBytes()
		f.Add(b, false)
		f.Add(b, true)
		f.Add(b[:len(b)/2], false)
	}
	cfg := testConfig6()
	f.Fuzz(func(t *testing.T, pkt []byte, pxePort bool) {
		req, err := dhcpv6.MessageFromBytes(pkt)
		if err != nil {
			return
		}
		on := OnDHCPPort
		if pxePort {
			on = OnPXEPort
		}
		resp, d := Reply6(req, testLinkLocal, on, cfg, func(net.HardwareAddr) bool { return true })
		if resp == nil {
			if !d.Ignored() || d.Reason == "" {
				t.Fatalf("no reply but decision %v with reason %q", d.Type, d.Reason)
			}
			return
		}
		class, url, proxy := edk2ProxyOffer(resp.ToBytes())
		if !proxy || class == "" || url == "" || resp.TransactionID != req.TransactionID {
			t.Fatalf("reply breaks the proxy rules: %s", resp.Summary())
		}
	})
}
