package pxe

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/insomniacslk/dhcp/dhcpv4"
	"github.com/insomniacslk/dhcp/iana"
)

var update = flag.Bool("update", false, "rewrite golden files")

var (
	testXID      = dhcpv4.TransactionID{0xde, 0xad, 0xbe, 0xef}
	testServerIP = netip.MustParseAddr("192.0.2.10")
	testUUID     = append([]byte{0}, bytes.Repeat([]byte{0xab}, 16)...)
	otherMAC     = net.HardwareAddr{0x52, 0x54, 0x00, 0xff, 0xff, 0xff}
)

func testProxyConfig() ProxyConfig {
	return ProxyConfig{ServerIP: testServerIP, Boot: testBootConfig()}
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
	biosPXE  = []dhcpv4.Modifier{class("PXEClient:Arch:00000:UNDI:002001"), arch(iana.INTEL_X86PC)}
	uefiPXE  = []dhcpv4.Modifier{class("PXEClient:Arch:00007:UNDI:003016"), arch(iana.EFI_X86_64), generic(97, testUUID)}
	httpBoot = []dhcpv4.Modifier{class("HTTPClient:Arch:00016:UNDI:003001"), arch(iana.EFI_X86_64_HTTP)}
	ipxeUC   = []dhcpv4.Modifier{class("PXEClient:Arch:00007:UNDI:003010"), arch(iana.EFI_X86_64), dhcpv4.WithUserClass("iPXE", false)}
	ipxe175  = []dhcpv4.Modifier{class("PXEClient:Arch:00000:UNDI:002001"), arch(iana.INTEL_X86PC), generic(175, []byte{19, 1, 1, 24, 1, 1})}
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

// replySummary is the part of a reply the tests assert.
type replySummary struct {
	Type                   dhcpv4.MessageType
	XID                    dhcpv4.TransactionID
	CHAddr                 string
	YIAddr, SIAddr, GIAddr string
	CIAddr                 string
	Broadcast              bool
	SName, File            string
	Opt54, Opt60, Opt67    string
	Opt97, Opt43, Opt82    []byte
}

func summarize(r *dhcpv4.DHCPv4) *replySummary {
	if r == nil {
		return nil
	}
	return &replySummary{
		Type: r.MessageType(), XID: r.TransactionID, CHAddr: r.ClientHWAddr.String(),
		YIAddr: r.YourIPAddr.String(), SIAddr: r.ServerIPAddr.String(), GIAddr: r.GatewayIPAddr.String(), CIAddr: r.ClientIPAddr.String(),
		Broadcast: r.IsBroadcast(), SName: r.ServerHostName, File: r.BootFileName,
		Opt54: r.ServerIdentifier().String(), Opt60: r.ClassIdentifier(), Opt67: r.BootFileNameOption(),
		Opt97: r.Options.Get(dhcpv4.OptionClientMachineIdentifier), Opt43: r.Options.Get(dhcpv4.OptionVendorSpecificInformation),
		Opt82: r.Options.Get(dhcpv4.OptionRelayAgentInformation),
	}
}

// offer is the summary of a reply of typ carrying file and class.
func offer(typ dhcpv4.MessageType, file, class string, opt43 []byte) *replySummary {
	return &replySummary{
		Type: typ, XID: testXID, CHAddr: testMAC.String(),
		YIAddr: "0.0.0.0", SIAddr: "192.0.2.10", GIAddr: "0.0.0.0", CIAddr: "0.0.0.0", Broadcast: true,
		SName: "192.0.2.10", File: file, Opt54: "192.0.2.10", Opt60: class, Opt67: file, Opt43: opt43,
	}
}

var discoveryControl = []byte{6, 1, 8, 255}

func TestReply(t *testing.T) {
	with := func(s *replySummary, f func(*replySummary)) *replySummary { f(s); return s }
	relay82 := dhcpv4.OptRelayAgentInfo(dhcpv4.OptGeneric(dhcpv4.AgentCircuitIDSubOption, []byte("port7")))
	tests := map[string]struct {
		req        *dhcpv4.DHCPv4
		on         Arrival
		allow      func(net.HardwareAddr) bool
		cfg        *ProxyConfig
		want       *replySummary
		wantReason string
		golden     string
	}{
		"BIOS gets undionly.kpxe with discovery control": {
			req:        packet(t, dhcpv4.MessageTypeDiscover, biosPXE...),
			want:       offer(dhcpv4.MessageTypeOffer, "undionly.kpxe", "PXEClient", discoveryControl),
			wantReason: "PXE client of architecture 0 (BIOS): undionly.kpxe over TFTP", golden: "bios-offer",
		},
		"UEFI x64 gets ipxe.efi": {
			req:        packet(t, dhcpv4.MessageTypeDiscover, uefiPXE...),
			want:       with(offer(dhcpv4.MessageTypeOffer, "ipxe.efi", "PXEClient", discoveryControl), func(s *replySummary) { s.Opt97 = testUUID }),
			wantReason: "PXE client of architecture 7 (UEFI x86-64): ipxe.efi over TFTP", golden: "uefi-x64-offer",
		},
		"UUID option 97 is echoed": {
			req:  packet(t, dhcpv4.MessageTypeDiscover, join(biosPXE, []dhcpv4.Modifier{generic(97, testUUID)})...),
			want: with(offer(dhcpv4.MessageTypeOffer, "undionly.kpxe", "PXEClient", discoveryControl), func(s *replySummary) { s.Opt97 = testUUID }),
		},
		"UEFI x64 without option 93 is read from its vendor class": {
			req:  packet(t, dhcpv4.MessageTypeDiscover, class("PXEClient:Arch:00009:UNDI:003016")),
			want: offer(dhcpv4.MessageTypeOffer, "ipxe.efi", "PXEClient", discoveryControl),
		},
		"HTTP boot gets an http URL and the HTTPClient class without option 43": {
			req:        packet(t, dhcpv4.MessageTypeDiscover, httpBoot...),
			want:       offer(dhcpv4.MessageTypeOffer, "http://192.0.2.10:8090/ipxe/ipxe.efi", "HTTPClient", nil),
			wantReason: "HTTP boot client of architecture 16 (UEFI x86-64 HTTP): ipxe.efi over HTTP", golden: "http-boot-offer",
		},
		"iPXE user class gets the script URL": {
			req:  packet(t, dhcpv4.MessageTypeDiscover, ipxeUC...),
			want: offer(dhcpv4.MessageTypeOffer, "http://192.0.2.10:8090/boot.ipxe?mac=52:54:00:12:34:56", "PXEClient", discoveryControl), golden: "ipxe-offer",
		},
		"iPXE option 175 gets the script URL": {
			req:  packet(t, dhcpv4.MessageTypeDiscover, ipxe175...),
			want: offer(dhcpv4.MessageTypeOffer, "http://192.0.2.10:8090/boot.ipxe?mac=52:54:00:12:34:56", "PXEClient", discoveryControl),
		},
		"relayed request is answered to the relay": {
			req: packet(t, dhcpv4.MessageTypeDiscover, join(uefiPXE, []dhcpv4.Modifier{dhcpv4.WithRelay(net.IPv4(198, 51, 100, 1)), dhcpv4.WithOption(relay82)})...),
			want: with(offer(dhcpv4.MessageTypeOffer, "ipxe.efi", "PXEClient", discoveryControl), func(s *replySummary) {
				s.GIAddr, s.Opt97, s.Opt82 = "198.51.100.1", testUUID, relay82.Value.ToBytes()
			}),
			golden: "relayed-offer",
		},
		"REQUEST on 4011 gets an ACK": {
			req: packet(t, dhcpv4.MessageTypeRequest, join(uefiPXE, []dhcpv4.Modifier{dhcpv4.WithClientIP(net.IPv4(192, 0, 2, 77)), dhcpv4.WithBroadcast(false)})...),
			on:  OnPXEPort,
			want: with(offer(dhcpv4.MessageTypeAck, "ipxe.efi", "PXEClient", nil), func(s *replySummary) {
				s.CIAddr, s.Broadcast, s.Opt97 = "192.0.2.77", false, testUUID
			}),
			golden: "uefi-x64-ack-4011",
		},
		"REQUEST on 4011 echoes the PXE boot item": {
			req: packet(t, dhcpv4.MessageTypeRequest, join(biosPXE, []dhcpv4.Modifier{generic(43, []byte{71, 4, 0x80, 0, 0, 0, 255})})...),
			on:  OnPXEPort,
			want: with(offer(dhcpv4.MessageTypeAck, "undionly.kpxe", "PXEClient", []byte{71, 4, 0x80, 0, 0, 0, 255}), func(s *replySummary) {
				s.Broadcast = true
			}),
		},
		"REQUEST on 67 naming this server gets an ACK": {
			req:  packet(t, dhcpv4.MessageTypeRequest, join(biosPXE, []dhcpv4.Modifier{dhcpv4.WithOption(dhcpv4.OptServerIdentifier(net.IP(testServerIP.AsSlice())))})...),
			want: offer(dhcpv4.MessageTypeAck, "undionly.kpxe", "PXEClient", discoveryControl),
		},
		"REQUEST on 67 for the site's DHCP server is ignored": {
			req:        packet(t, dhcpv4.MessageTypeRequest, join(biosPXE, []dhcpv4.Modifier{dhcpv4.WithOption(dhcpv4.OptServerIdentifier(net.IPv4(192, 0, 2, 1)))})...),
			wantReason: "REQUEST on port 67 for another DHCP server (192.0.2.1)",
		},
		"REQUEST on 67 without server identifier is ignored": {
			req:        packet(t, dhcpv4.MessageTypeRequest, biosPXE...),
			wantReason: "REQUEST on port 67 without a server identifier is for the site's DHCP server",
		},
		"DISCOVER on 4011 is ignored": {
			req: packet(t, dhcpv4.MessageTypeDiscover, biosPXE...), on: OnPXEPort,
			wantReason: "DISCOVER on port 4011 is not answered",
		},
		"INFORM is ignored": {
			req:        packet(t, dhcpv4.MessageTypeInform, biosPXE...),
			wantReason: "INFORM on port 67 is not answered",
		},
		"unknown MAC gets no offer": {
			req: packet(t, dhcpv4.MessageTypeDiscover, uefiPXE...), allow: allowOnly(otherMAC),
			wantReason: "machine 52:54:00:12:34:56 is not served by this window",
		},
		"a nil allow serves nobody": {
			req: packet(t, dhcpv4.MessageTypeDiscover, uefiPXE...), allow: func(net.HardwareAddr) bool { return false },
			wantReason: "machine 52:54:00:12:34:56 is not served by this window",
		},
		"non-PXE client is ignored": {
			req:        packet(t, dhcpv4.MessageTypeDiscover, class("MSFT 5.0")),
			wantReason: `not a PXE or HTTP boot client (vendor class "MSFT 5.0")`,
		},
		"client without vendor class is ignored": {
			req:        packet(t, dhcpv4.MessageTypeDiscover),
			wantReason: `not a PXE or HTTP boot client (vendor class "")`,
		},
		"arm64 without a staged binary is ignored": {
			req:        packet(t, dhcpv4.MessageTypeDiscover, class("PXEClient:Arch:00011:UNDI:003016"), arch(iana.EFI_ARM64)),
			wantReason: "PXE client of architecture 11 (UEFI arm64), but no arm64 iPXE binary is staged",
		},
		"a BOOTREPLY is ignored": {
			req:        packet(t, dhcpv4.MessageTypeOffer, join(biosPXE, []dhcpv4.Modifier{func(d *dhcpv4.DHCPv4) { d.OpCode = dhcpv4.OpcodeBootReply }})...),
			wantReason: "not a BOOTREQUEST (op 2)",
		},
		"a non-Ethernet client is ignored": {
			req:        packet(t, dhcpv4.MessageTypeDiscover, join(biosPXE, []dhcpv4.Modifier{dhcpv4.WithHwAddr(make(net.HardwareAddr, 16)), dhcpv4.WithHWType(iana.HWTypeInfiniband)})...),
			wantReason: "not an Ethernet client (hardware type 32, address length 16)",
		},
		"a boot URL too long for the file field is ignored": {
			req:        packet(t, dhcpv4.MessageTypeDiscover, httpBoot...),
			cfg:        &ProxyConfig{ServerIP: testServerIP, Boot: BootConfig{HTTPBase: "http://192.0.2.10/" + strings.Repeat("x", 110)}},
			wantReason: "is longer than the 127 bytes of the BOOTP file field",
		},
		"no server address answers nobody": {
			req:        packet(t, dhcpv4.MessageTypeDiscover, biosPXE...),
			cfg:        &ProxyConfig{Boot: testBootConfig()},
			wantReason: "no server address configured",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			allow := tc.allow
			if allow == nil {
				allow = allowOnly(testMAC)
			}
			cfg := testProxyConfig()
			if tc.cfg != nil {
				cfg = *tc.cfg
			}
			resp, d := Reply(tc.req, tc.on, cfg, allow)
			if diff := cmp.Diff(tc.want, summarize(resp)); diff != "" {
				t.Errorf("reply (-want +got):\n%s", diff)
			}
			if tc.want == nil && !d.Ignored() {
				t.Errorf("decision %s, want ignored", d.Action())
			}
			if tc.want != nil && d.Type != tc.want.Type {
				t.Errorf("decision type %s, want %s", d.Type, tc.want.Type)
			}
			if d.XID != testXID || !bytes.Equal(d.Client.MAC, tc.req.ClientHWAddr) {
				t.Errorf("decision names xid %s mac %s, want the request's", d.XID, d.Client.MAC)
			}
			if !strings.Contains(d.Reason, tc.wantReason) {
				t.Errorf("reason %q, want it to contain %q", d.Reason, tc.wantReason)
			}
			if resp != nil {
				// The reply survives the wire.
				back, err := dhcpv4.FromBytes(resp.ToBytes())
				if err != nil {
					t.Fatalf("reply does not parse back: %v", err)
				}
				if diff := cmp.Diff(summarize(resp), summarize(back)); diff != "" {
					t.Errorf("reply after a round trip (-sent +parsed):\n%s", diff)
				}
				// The server's fast path writes the same bytes.
				if got := appendReply(nil, tc.req, tc.on, cfg, d); !bytes.Equal(got, resp.ToBytes()) {
					t.Errorf("appendReply differs from Reply (-Reply +appendReply):\n%s", cmp.Diff(hex.Dump(resp.ToBytes()), hex.Dump(got)))
				}
			}
			if tc.golden != "" {
				checkGolden(t, filepath.Join("testdata", "dhcp", tc.golden+".bin"), resp.ToBytes())
			}
		})
	}
}

// checkGolden compares got with a golden file, or rewrites it under -update.
func checkGolden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read golden file (run go test -update to create it): %v", err)
	}
	if !bytes.Equal(want, got) {
		t.Errorf("reply differs from %s (-want +got):\n%s", path, cmp.Diff(hex.Dump(want), hex.Dump(got)))
	}
}

func TestParseClient(t *testing.T) {
	tests := map[string]struct {
		req  *dhcpv4.DHCPv4
		want Client
	}{
		"a UEFI PXE client": {
			req:  packet(t, dhcpv4.MessageTypeDiscover, uefiPXE...),
			want: Client{MAC: testMAC, Class: ClassPXE, VendorClass: "PXEClient:Arch:00007:UNDI:003016", Archs: []iana.Arch{iana.EFI_X86_64}},
		},
		"an RFC 3004 user class iPXE counts as iPXE": {
			req:  packet(t, dhcpv4.MessageTypeDiscover, class("PXEClient"), dhcpv4.WithUserClass("iPXE", true)),
			want: Client{MAC: testMAC, Class: ClassPXE, VendorClass: "PXEClient", IPXE: true},
		},
		"another user class is not iPXE": {
			req:  packet(t, dhcpv4.MessageTypeDiscover, class("PXEClient"), dhcpv4.WithUserClass("plasma", false)),
			want: Client{MAC: testMAC, Class: ClassPXE, VendorClass: "PXEClient"},
		},
		"a relayed client names its relay": {
			req:  packet(t, dhcpv4.MessageTypeDiscover, class("HTTPClient"), dhcpv4.WithRelay(net.IPv4(198, 51, 100, 1))),
			want: Client{MAC: testMAC, Class: ClassHTTP, VendorClass: "HTTPClient", Relay: netip.MustParseAddr("198.51.100.1")},
		},
		"an odd-length option 93 falls back to the vendor class": {
			req:  packet(t, dhcpv4.MessageTypeDiscover, class("PXEClient:Arch:00000:UNDI:002001"), generic(93, []byte{0, 7, 0})),
			want: Client{MAC: testMAC, Class: ClassPXE, VendorClass: "PXEClient:Arch:00000:UNDI:002001", Archs: []iana.Arch{iana.INTEL_X86PC}},
		},
		"a garbled vendor-class architecture is none": {
			req:  packet(t, dhcpv4.MessageTypeDiscover, class("PXEClient:Arch:x7")),
			want: Client{MAC: testMAC, Class: ClassPXE, VendorClass: "PXEClient:Arch:x7"},
		},
		"a lower-case class is not a boot class": {
			req:  packet(t, dhcpv4.MessageTypeDiscover, class("pxeclient")),
			want: Client{MAC: testMAC, VendorClass: "pxeclient"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, ParseClient(tc.req), cmp.Comparer(func(a, b netip.Addr) bool { return a == b })); diff != "" {
				t.Errorf("ParseClient (-want +got):\n%s", diff)
			}
		})
	}
}

func TestProxyConfigValidate(t *testing.T) {
	tests := map[string]struct {
		cfg     ProxyConfig
		wantErr bool
	}{
		"a server IP and boot config are valid": {cfg: testProxyConfig()},
		"a missing server IP is refused":        {cfg: ProxyConfig{Boot: testBootConfig()}, wantErr: true},
		"an IPv6 server IP is refused":          {cfg: ProxyConfig{ServerIP: netip.MustParseAddr("2001:db8::1")}, wantErr: true},
		"0.0.0.0 is refused":                    {cfg: ProxyConfig{ServerIP: netip.IPv4Unspecified()}, wantErr: true},
		"a bad boot config is refused":          {cfg: ProxyConfig{ServerIP: testServerIP, Boot: BootConfig{ScriptURL: "boot.ipxe"}}, wantErr: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			err := tc.cfg.Validate()
			if tc.wantErr != errors.Is(err, ErrInvalidConfig) || (!tc.wantErr && err != nil) {
				t.Errorf("Validate = %v, want error: %v", err, tc.wantErr)
			}
		})
	}
}

// rawDiscover is a BIOS PXE DISCOVER on the wire.
func rawDiscover(t testing.TB) []byte {
	return packet(t, dhcpv4.MessageTypeDiscover, biosPXE...).ToBytes()
}

func TestMalformedPackets(t *testing.T) {
	good := rawDiscover(t)
	end := bytes.LastIndexByte(bytes.TrimRight(good, "\x00"), 255)
	huge := packet(t, dhcpv4.MessageTypeDiscover, join(biosPXE, []dhcpv4.Modifier{
		generic(97, bytes.Repeat([]byte{1}, 600)), generic(43, bytes.Repeat([]byte{71}, 300)), generic(200, bytes.Repeat([]byte{7}, 2000)),
	})...).ToBytes()
	tests := map[string]struct {
		pkt       []byte
		on        Arrival
		wantParse bool
		wantReply bool
	}{
		"an empty datagram does not parse":          {pkt: nil},
		"a truncated header does not parse":         {pkt: good[:100]},
		"a packet cut before its end option fails":  {pkt: good[:end]},
		"a bad magic cookie does not parse":         {pkt: append(append(append([]byte{}, good[:236]...), 1, 2, 3, 4), good[240:]...)},
		"an option overrunning the packet fails":    {pkt: append(append([]byte{}, good[:end]...), 60, 200, 'P')},
		"the intact packet parses and is answered":  {pkt: good, wantParse: true, wantReply: true},
		"an oversized packet is answered, bounded":  {pkt: huge, wantParse: true, wantReply: true},
		"a hardware length over 16 is clamped":      {pkt: append([]byte{1, 1, 200}, good[3:]...), wantParse: true},
		"trailing garbage after the end is ignored": {pkt: append(append([]byte{}, good...), 1, 2, 3), wantParse: true, wantReply: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			req, err := dhcpv4.FromBytes(tc.pkt)
			if (err == nil) != tc.wantParse {
				t.Fatalf("FromBytes err = %v, want parse %v", err, tc.wantParse)
			}
			if err != nil {
				return
			}
			resp, d := Reply(req, tc.on, testProxyConfig(), allowOnly(testMAC))
			if (resp != nil) != tc.wantReply {
				t.Fatalf("reply %v (%s), want reply %v", resp != nil, d.Reason, tc.wantReply)
			}
			if resp != nil {
				out := resp.ToBytes()
				if len(out) > 576 {
					t.Errorf("reply is %d bytes, want at most the 576 every client accepts", len(out))
				}
				if v := resp.Options.Get(dhcpv4.OptionClientMachineIdentifier); v != nil {
					t.Errorf("an over-long option 97 of %d bytes was echoed", len(v))
				}
			}
		})
	}
}

func TestReplyToNilRequest(t *testing.T) {
	resp, d := Reply(nil, OnDHCPPort, testProxyConfig(), allowOnly(testMAC))
	if resp != nil || !d.Ignored() {
		t.Fatalf("Reply(nil) = %v, %+v; want nothing", resp, d)
	}
}

func FuzzReply(f *testing.F) {
	for _, mods := range [][]dhcpv4.Modifier{biosPXE, uefiPXE, httpBoot, ipxeUC, ipxe175,
		join(uefiPXE, []dhcpv4.Modifier{dhcpv4.WithRelay(net.IPv4(198, 51, 100, 1)), generic(43, []byte{71, 4, 0x80, 0, 0, 0, 255})})} {
		for _, typ := range []dhcpv4.MessageType{dhcpv4.MessageTypeDiscover, dhcpv4.MessageTypeRequest} {
			b := packet(f, typ, mods...).ToBytes()
			f.Add(b, false)
			f.Add(b, true)
			f.Add(b[:len(b)/2], false)
		}
	}
	f.Add([]byte{}, false)
	cfg := testProxyConfig()
	cfg.Boot.ARM64Binary = "snp-arm64.efi"
	f.Fuzz(func(t *testing.T, pkt []byte, pxePort bool) {
		req, err := dhcpv4.FromBytes(pkt)
		if err != nil {
			return
		}
		on := OnDHCPPort
		if pxePort {
			on = OnPXEPort
		}
		resp, d := Reply(req, on, cfg, func(net.HardwareAddr) bool { return true })
		if resp == nil {
			if !d.Ignored() || d.Reason == "" {
				t.Fatalf("no reply but decision %s with reason %q", d.Action(), d.Reason)
			}
			return
		}
		if d.Ignored() {
			t.Fatal("a reply for an ignored request")
		}
		wire := resp.ToBytes()
		if got := appendReply([]byte("prefix"), req, on, cfg, d); !bytes.Equal(got[6:], wire) || string(got[:6]) != "prefix" {
			t.Fatalf("appendReply differs from Reply (-Reply +appendReply):\n%s", cmp.Diff(hex.Dump(wire), hex.Dump(got[6:])))
		}
		back, err := dhcpv4.FromBytes(wire)
		if err != nil {
			t.Fatalf("reply does not parse back: %v", err)
		}
		if back.TransactionID != req.TransactionID || !back.YourIPAddr.Equal(net.IPv4zero) || back.ServerIdentifier().String() != "192.0.2.10" {
			t.Fatalf("reply breaks the proxy rules: %s", back.Summary())
		}
		if back.BootFileName != d.Boot.File {
			t.Fatalf("file field %q, decision %q", back.BootFileName, d.Boot.File)
		}
	})
}

// --- the socket server ---

// testClient is a UDP socket standing for PXE clients and relays.
type testClient struct {
	conn *net.UDPConn
	port int
}

func newTestClient(t *testing.T) *testClient {
	t.Helper()
	c, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4zero})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &testClient{conn: c, port: c.LocalAddr().(*net.UDPAddr).Port}
}

// exchange sends req to addr until a reply with its xid arrives, or
// returns nil after wait.
func (c *testClient) exchange(t *testing.T, req []byte, addr *net.UDPAddr, xid dhcpv4.TransactionID, wait time.Duration) (*dhcpv4.DHCPv4, *net.UDPAddr) {
	t.Helper()
	deadline := time.Now().Add(wait)
	buf := make([]byte, 2048)
	for time.Now().Before(deadline) {
		if _, err := c.conn.WriteToUDP(req, addr); err != nil {
			t.Fatal(err)
		}
		c.conn.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
		for {
			n, from, err := c.conn.ReadFromUDP(buf)
			if err != nil {
				break
			}
			resp, err := dhcpv4.FromBytes(buf[:n])
			if err == nil && resp.TransactionID == xid && resp.OpCode == dhcpv4.OpcodeBootReply {
				return resp, from
			}
		}
	}
	return nil, nil
}

type eventLog struct {
	mu     sync.Mutex
	events []Event
}

func (l *eventLog) add(e Event) { l.mu.Lock(); l.events = append(l.events, e); l.mu.Unlock() }
func (l *eventLog) kinds() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var k []string
	for _, e := range l.events {
		k = append(k, string(e.Kind)+" "+e.MAC.String()+" "+e.File)
	}
	return k
}

// loopbackConn opens a DHCP socket on an ephemeral port bound to lo.
func loopbackConn(t *testing.T) (net.PacketConn, *net.UDPAddr) {
	t.Helper()
	c, err := ListenDHCP("lo", 0)
	if err != nil {
		skipOrFail(t, "cannot bind a UDP socket to lo: %v", err)
	}
	return c, &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: c.LocalAddr().(*net.UDPAddr).Port}
}

func skipOrFail(t *testing.T, format string, args ...any) {
	t.Helper()
	if os.Getenv("PLASMA_E2E") == "1" {
		t.Fatalf(format, args...)
	}
	t.Skipf(format, args...)
}

func withXID(t *testing.T, xid byte, typ dhcpv4.MessageType, mods ...dhcpv4.Modifier) ([]byte, dhcpv4.TransactionID) {
	id := dhcpv4.TransactionID{0, 0, 0, xid}
	return packet(t, typ, append(mods, dhcpv4.WithTransactionID(id))...).ToBytes(), id
}

func TestDHCPServerOnLoopback(t *testing.T) {
	dc, dhcpAddr := loopbackConn(t)
	pc, pxeAddr := loopbackConn(t)
	client := newTestClient(t)
	relay := newTestClient(t)
	var events eventLog
	s := &DHCPServer{
		Proxy: testProxyConfig(), Allow: allowOnly(testMAC),
		DHCPConn: dc, PXEConn: pc, ClientPort: client.port, RelayPort: relay.port,
		OnEvent: events.add,
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	errc := make(chan error, 1)
	go func() { errc <- s.Serve(ctx) }()

	// Garbage first: the server must survive it.
	for _, junk := range [][]byte{{1, 2, 3}, bytes.Repeat([]byte{0xff}, maxDatagram+1000), rawDiscover(t)[:200]} {
		if _, err := client.conn.WriteToUDP(junk, dhcpAddr); err != nil {
			t.Fatal(err)
		}
	}

	t.Run("a broadcast DISCOVER gets a broadcast OFFER", func(t *testing.T) {
		req, xid := withXID(t, 1, dhcpv4.MessageTypeDiscover, uefiPXE...)
		resp, _ := client.exchange(t, req, dhcpAddr, xid, 3*time.Second)
		if resp == nil {
			t.Fatal("no OFFER")
		}
		if resp.MessageType() != dhcpv4.MessageTypeOffer || resp.BootFileName != "ipxe.efi" {
			t.Errorf("got %s file %q, want OFFER of ipxe.efi", resp.MessageType(), resp.BootFileName)
		}
	})
	t.Run("REQUEST on 4011 gets an ACK to its sender", func(t *testing.T) {
		req, xid := withXID(t, 2, dhcpv4.MessageTypeRequest, join(uefiPXE, []dhcpv4.Modifier{dhcpv4.WithClientIP(net.IPv4(127, 0, 0, 1))})...)
		resp, from := client.exchange(t, req, pxeAddr, xid, 3*time.Second)
		if resp == nil {
			t.Fatal("no ACK")
		}
		if resp.MessageType() != dhcpv4.MessageTypeAck || from.Port != pxeAddr.Port {
			t.Errorf("got %s from %s, want ACK from port %d", resp.MessageType(), from, pxeAddr.Port)
		}
	})
	t.Run("relayed request is answered to the relay", func(t *testing.T) {
		req, xid := withXID(t, 3, dhcpv4.MessageTypeDiscover, join(biosPXE, []dhcpv4.Modifier{dhcpv4.WithRelay(net.IPv4(127, 0, 0, 1))})...)
		// The relay forwards the request and waits on its own port.
		if _, err := relay.conn.WriteToUDP(req, dhcpAddr); err != nil {
			t.Fatal(err)
		}
		resp, _ := relay.exchange(t, req, dhcpAddr, xid, 3*time.Second)
		if resp == nil {
			t.Fatal("the relay got no OFFER")
		}
		if resp.BootFileName != "undionly.kpxe" || !resp.GatewayIPAddr.Equal(net.IPv4(127, 0, 0, 1)) {
			t.Errorf("file %q giaddr %s, want undionly.kpxe via 127.0.0.1", resp.BootFileName, resp.GatewayIPAddr)
		}
	})
	t.Run("unknown MAC gets no offer", func(t *testing.T) {
		req, xid := withXID(t, 4, dhcpv4.MessageTypeDiscover, join(uefiPXE, []dhcpv4.Modifier{dhcpv4.WithHwAddr(otherMAC)})...)
		if resp, _ := client.exchange(t, req, dhcpAddr, xid, 400*time.Millisecond); resp != nil {
			t.Fatalf("got %s for an unknown MAC", resp.MessageType())
		}
	})
	t.Run("non-PXE client gets nothing", func(t *testing.T) {
		req, xid := withXID(t, 5, dhcpv4.MessageTypeDiscover, class("MSFT 5.0"))
		if resp, _ := client.exchange(t, req, dhcpAddr, xid, 400*time.Millisecond); resp != nil {
			t.Fatalf("got %s for a non-PXE client", resp.MessageType())
		}
	})

	cancel()
	select {
	case err := <-errc:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Serve = %v, want context.Canceled", err)
		}
	case <-time.After(3 * time.Second):
		t.Fatal("Serve did not stop with its context")
	}
	if _, err := dc.WriteTo([]byte{1}, dhcpAddr); err == nil {
		t.Error("Serve left its DHCP socket open")
	}
	// Retries may repeat an event; each kind must be there, the non-PXE
	// client must not be.
	got := map[string]bool{}
	for _, k := range events.kinds() {
		got[k] = true
	}
	want := map[string]bool{
		"dhcp-offer 52:54:00:12:34:56 ipxe.efi":      true,
		"dhcp-ack 52:54:00:12:34:56 ipxe.efi":        true,
		"dhcp-offer 52:54:00:12:34:56 undionly.kpxe": true,
		"dhcp-ignored 52:54:00:ff:ff:ff ":            true,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

// freeUDPPort finds a UDP port free on all addresses.
func freeUDPPort(t *testing.T) int {
	t.Helper()
	c, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4zero})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	return c.LocalAddr().(*net.UDPAddr).Port
}

// serveByPort runs a DHCPServer that opens its own sockets and checks that
// a DISCOVER to port gets an OFFER on clientPort.
func serveByPort(t *testing.T, s *DHCPServer, port int, client *testClient) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- s.Serve(ctx) }()
	req, xid := withXID(t, 9, dhcpv4.MessageTypeDiscover, biosPXE...)
	resp, _ := client.exchange(t, req, &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: port}, xid, 3*time.Second)
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Errorf("Serve = %v, want context.Canceled", err)
	}
	if resp == nil || resp.MessageType() != dhcpv4.MessageTypeOffer || resp.BootFileName != BIOSBinary {
		t.Fatalf("reply %v, want an OFFER of %s", resp, BIOSBinary)
	}
}

func TestDHCPServerListensOnConfiguredPorts(t *testing.T) {
	client := newTestClient(t)
	port := freeUDPPort(t)
	s := &DHCPServer{Proxy: testProxyConfig(), Allow: allowOnly(testMAC), Interface: "lo",
		Port: port, PXEPort: -1, ClientPort: client.port}
	if c, err := ListenDHCP("lo", 0); err != nil {
		skipOrFail(t, "cannot bind a UDP socket to lo: %v", err)
	} else {
		c.Close()
	}
	serveByPort(t, s, port, client)
}

func TestDHCPServerOnPort67(t *testing.T) {
	if os.Geteuid() != 0 {
		skipOrFail(t, "port 67 and 68 need root")
	}
	client, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4zero, Port: DHCPClientPort})
	if err != nil {
		skipOrFail(t, "port 68 is taken: %v", err)
	}
	t.Cleanup(func() { client.Close() })
	s := &DHCPServer{Proxy: testProxyConfig(), Allow: allowOnly(testMAC), Interface: "lo"}
	serveByPort(t, s, DHCPPort, &testClient{conn: client, port: DHCPClientPort})
}

func TestDHCPServerRefusesBadConfig(t *testing.T) {
	s := &DHCPServer{Proxy: ProxyConfig{Boot: testBootConfig()}}
	if err := s.Serve(context.Background()); !errors.Is(err, ErrInvalidConfig) {
		t.Fatalf("Serve = %v, want ErrInvalidConfig", err)
	}
}

func TestDHCPServerReportsAMissingInterface(t *testing.T) {
	s := &DHCPServer{Proxy: testProxyConfig(), Port: freeUDPPort(t), PXEPort: -1, Interface: "no-such-if0"}
	err := s.Serve(context.Background())
	if err == nil || !strings.Contains(err.Error(), "interface no-such-if0") {
		t.Fatalf("Serve = %v, want an error naming the interface", err)
	}
}

func TestReplyAddr(t *testing.T) {
	s := &DHCPServer{}
	peer := &net.UDPAddr{IP: net.IPv4(192, 0, 2, 77), Port: 4321}
	tests := map[string]struct {
		req  *dhcpv4.DHCPv4
		on   Arrival
		want string
	}{
		"a client without address gets a broadcast to port 68": {
			req: packet(t, dhcpv4.MessageTypeDiscover), want: "255.255.255.255:68",
		},
		"a relayed request goes to the relay's port 67": {
			req: packet(t, dhcpv4.MessageTypeDiscover, dhcpv4.WithRelay(net.IPv4(198, 51, 100, 1))), want: "198.51.100.1:67",
		},
		"a client with an address gets a unicast to port 68": {
			req: packet(t, dhcpv4.MessageTypeRequest, dhcpv4.WithClientIP(net.IPv4(192, 0, 2, 77))), want: "192.0.2.77:68",
		},
		"a request on 4011 is answered to its sender": {
			req: packet(t, dhcpv4.MessageTypeRequest, dhcpv4.WithRelay(net.IPv4(198, 51, 100, 1))), on: OnPXEPort, want: "192.0.2.77:4321",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := s.replyAddr(tc.req, tc.on, peer).String(); got != tc.want {
				t.Errorf("reply goes to %s, want %s", got, tc.want)
			}
		})
	}
}

func ExampleReply() {
	req, _ := dhcpv4.New(
		dhcpv4.WithHwAddr(net.HardwareAddr{0x52, 0x54, 0x00, 0x12, 0x34, 0x56}),
		dhcpv4.WithMessageType(dhcpv4.MessageTypeDiscover),
		dhcpv4.WithOption(dhcpv4.OptClassIdentifier("PXEClient:Arch:00007:UNDI:003016")),
		dhcpv4.WithOption(dhcpv4.OptClientArch(iana.EFI_X86_64)),
	)
	cfg := ProxyConfig{
		ServerIP: netip.MustParseAddr("192.0.2.10"),
		Boot:     BootConfig{ScriptURL: "http://192.0.2.10:8090/boot.ipxe"},
	}
	everyone := func(net.HardwareAddr) bool { return true }
	offer, d := Reply(req, OnDHCPPort, cfg, everyone)
	fmt.Println(d.Action(), offer.BootFileName, "from", offer.ServerIPAddr)
	fmt.Println(d.Reason)

	// The same machine, now running iPXE, asks again.
	dhcpv4.WithUserClass("iPXE", false)(req)
	offer, _ = Reply(req, OnDHCPPort, cfg, everyone)
	fmt.Println(offer.BootFileName)
	// Output:
	// offer ipxe.efi from 192.0.2.10
	// PXE client of architecture 7 (UEFI x86-64): ipxe.efi over TFTP
	// http://192.0.2.10:8090/boot.ipxe?mac=52:54:00:12:34:56
}

func TestLogBudgetCountsWhatItDrops(t *testing.T) {
	b := logBudget{per: 3}
	t0 := time.Unix(1_700_000_000, 0)
	var ok int
	for i := range 10 {
		if took, dropped := b.take(t0.Add(time.Duration(i) * time.Millisecond)); took {
			ok++
			if dropped != 0 {
				t.Errorf("line %d: %d dropped reported within the first second", i, dropped)
			}
		}
	}
	if ok != 3 {
		t.Errorf("%d lines let through in one second, want 3", ok)
	}
	took, dropped := b.take(t0.Add(time.Second))
	if !took || dropped != 7 {
		t.Errorf("first line of the next second: took %v, dropped %d; want true, 7", took, dropped)
	}
	if n := b.flush(); n != 0 {
		t.Errorf("flush after the report = %d, want 0", n)
	}
	unlimited := logBudget{per: -1}
	for range 100 {
		if took, _ := unlimited.take(t0); !took {
			t.Fatal("a negative budget dropped a line")
		}
	}
}

// TestDHCPServerKeepsToItsLogBudget sends ten DISCOVERs to a server whose
// budget is two lines a second: every one is answered, two are logged, and
// the eight others are counted and reported when it stops.
func TestDHCPServerKeepsToItsLogBudget(t *testing.T) {
	dc, dhcpAddr := loopbackConn(t)
	client := newTestClient(t)
	var logs lockedLog
	s := &DHCPServer{Proxy: testProxyConfig(), Allow: allowOnly(testMAC), DHCPConn: dc, PXEPort: -1, ClientPort: client.port,
		LogBudget: 2, Logger: slog.New(slog.NewTextHandler(&logs, nil))}
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- s.Serve(ctx) }()
	start := time.Now()
	for i := range 10 {
		req, xid := withXID(t, byte(100+i), dhcpv4.MessageTypeDiscover, uefiPXE...)
		if resp, _ := client.exchange(t, req, dhcpAddr, xid, 3*time.Second); resp == nil {
			t.Fatalf("DISCOVER %d got no OFFER", i)
		}
	}
	if time.Since(start) > 900*time.Millisecond {
		t.Skip("the machine is too slow to send ten DISCOVERs within one budget second")
	}
	cancel()
	<-errc
	out := logs.String()
	if n := strings.Count(out, `msg="DHCP offer"`); n != 2 {
		t.Errorf("%d offers logged, want 2:\n%s", n, out)
	}
	if !strings.Contains(out, `msg="DHCP log lines dropped" dropped=8`) {
		t.Errorf("no report of 8 dropped lines:\n%s", out)
	}
	if n := s.LogsDropped(); n != 8 {
		t.Errorf("LogsDropped = %d, want 8", n)
	}
}

// lockedLog is a log sink for several goroutines.
type lockedLog struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
