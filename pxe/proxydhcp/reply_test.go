package proxydhcp

import (
	"bytes"
	"encoding/hex"
	"errors"
	"flag"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"

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

func testProxyConfig() Config {
	return Config{ServerIP: testServerIP, Boot: testBootConfig()}
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
	sb := testProxyConfig()
	sb.Boot.SecureBoot = true
	sbFor := testProxyConfig()
	sbFor.Boot.SecureBootFor = func(mac net.HardwareAddr) bool { return mac.String() == testMAC.String() }
	tests := map[string]struct {
		req        *dhcpv4.DHCPv4
		on         Arrival
		allow      func(net.HardwareAddr) bool
		cfg        *Config
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
		"a Secure Boot window offers UEFI x64 the shim": {
			req:        packet(t, dhcpv4.MessageTypeDiscover, uefiPXE...),
			cfg:        &sb,
			want:       with(offer(dhcpv4.MessageTypeOffer, "shimx64.efi", "PXEClient", discoveryControl), func(s *replySummary) { s.Opt97 = testUUID }),
			wantReason: "PXE client of architecture 7 (UEFI x86-64): shimx64.efi over TFTP",
		},
		"a Secure Boot window offers BIOS undionly.kpxe as before": {
			req:        packet(t, dhcpv4.MessageTypeDiscover, biosPXE...),
			cfg:        &sb,
			want:       offer(dhcpv4.MessageTypeOffer, "undionly.kpxe", "PXEClient", discoveryControl),
			wantReason: "PXE client of architecture 0 (BIOS): undionly.kpxe over TFTP",
		},
		"a Secure Boot window offers HTTP boot the shim's URL": {
			req:        packet(t, dhcpv4.MessageTypeDiscover, httpBoot...),
			cfg:        &sb,
			want:       offer(dhcpv4.MessageTypeOffer, "http://192.0.2.10:8090/ipxe/shimx64.efi", "HTTPClient", nil),
			wantReason: "HTTP boot client of architecture 16 (UEFI x86-64 HTTP): shimx64.efi over HTTP",
		},
		"a Secure Boot window gives a stranger booting by PXE no offer": {
			req: packet(t, dhcpv4.MessageTypeDiscover, uefiPXE...), allow: allowOnly(otherMAC), cfg: &sb,
			wantReason: "machine 52:54:00:12:34:56 is not served by this window",
		},
		"a Secure Boot window gives a stranger HTTP booting no offer": {
			req: packet(t, dhcpv4.MessageTypeDiscover, httpBoot...), allow: allowOnly(otherMAC), cfg: &sb,
			wantReason: "machine 52:54:00:12:34:56 is not served by this window",
		},
		"a Secure Boot window gives iPXE its script as before": {
			req:  packet(t, dhcpv4.MessageTypeDiscover, ipxeUC...),
			cfg:  &sb,
			want: offer(dhcpv4.MessageTypeOffer, "http://192.0.2.10:8090/boot.ipxe?mac=52:54:00:12:34:56", "PXEClient", discoveryControl),
		},
		"a machine registered for Secure Boot gets the shim on 4011": {
			req: packet(t, dhcpv4.MessageTypeRequest, join(uefiPXE, []dhcpv4.Modifier{dhcpv4.WithClientIP(net.IPv4(192, 0, 2, 77)), dhcpv4.WithBroadcast(false)})...),
			on:  OnPXEPort,
			cfg: &sbFor,
			want: with(offer(dhcpv4.MessageTypeAck, "shimx64.efi", "PXEClient", nil), func(s *replySummary) {
				s.CIAddr, s.Broadcast, s.Opt97 = "192.0.2.77", false, testUUID
			}),
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
			cfg:        &Config{ServerIP: testServerIP, Boot: BootConfig{HTTPBase: "http://192.0.2.10/" + strings.Repeat("x", 110)}},
			wantReason: "is longer than the 127 bytes of the BOOTP file field",
		},
		"no server address answers nobody": {
			req:        packet(t, dhcpv4.MessageTypeDiscover, biosPXE...),
			cfg:        &Config{Boot: testBootConfig()},
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
				if got := AppendReply(nil, tc.req, tc.on, cfg, d); !bytes.Equal(got, resp.ToBytes()) {
					t.Errorf("appendReply differs from Reply (-Reply +appendReply):\n%s", cmp.Diff(hex.Dump(resp.ToBytes()), hex.Dump(got)))
				}
			}
			if tc.golden != "" {
				checkGolden(t, filepath.Join("testdata", tc.golden+".bin"), resp.ToBytes())
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

func TestConfigValidate(t *testing.T) {
	tests := map[string]struct {
		cfg     Config
		wantErr bool
	}{
		"a server IP and boot config are valid": {cfg: testProxyConfig()},
		"a missing server IP is refused":        {cfg: Config{Boot: testBootConfig()}, wantErr: true},
		"an IPv6 server IP is refused":          {cfg: Config{ServerIP: netip.MustParseAddr("2001:db8::1")}, wantErr: true},
		"0.0.0.0 is refused":                    {cfg: Config{ServerIP: netip.IPv4Unspecified()}, wantErr: true},
		"a bad boot config is refused":          {cfg: Config{ServerIP: testServerIP, Boot: BootConfig{ScriptURL: "boot.ipxe"}}, wantErr: true},
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
		if got := AppendReply([]byte("prefix"), req, on, cfg, d); !bytes.Equal(got[6:], wire) || string(got[:6]) != "prefix" {
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
