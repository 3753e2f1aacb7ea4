package agent

import (
	"errors"
	"net/netip"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/plasmactl/plasma-node/pxe/bmc/ipmi"
)

// TestLANAddress: the replies of Get LAN Configuration Parameters for
// parameter 3 (IP address) and 4 (IP address source), each a completion
// code, the parameter revision and the data, give the BMC's LAN
// address; a failed, short or empty one gives none and says why.
func TestLANAddress(t *testing.T) {
	ok4 := []byte{0x00, 0x11, 2} // DHCP
	for _, tc := range []struct {
		name     string
		ip, src  []byte
		want     netip.Addr
		wantSrc  string
		wantErr  error
		wantText string
	}{
		{name: "static", ip: []byte{0x00, 0x11, 192, 0, 2, 61}, src: []byte{0x00, 0x11, 1}, want: netip.MustParseAddr("192.0.2.61"), wantSrc: "static"},
		{name: "dhcp", ip: []byte{0x00, 0x11, 10, 1, 2, 3}, src: ok4, want: netip.MustParseAddr("10.1.2.3"), wantSrc: "dhcp"},
		{name: "source high bits ignored", ip: []byte{0x00, 0x11, 10, 1, 2, 3}, src: []byte{0x00, 0x11, 0xf3}, want: netip.MustParseAddr("10.1.2.3"), wantSrc: "bios"},
		{name: "source unknown", ip: []byte{0x00, 0x11, 10, 1, 2, 3}, src: []byte{0x00, 0x11, 9}, want: netip.MustParseAddr("10.1.2.3"), wantSrc: "unknown"},
		{name: "source refused still gives the address", ip: []byte{0x00, 0x11, 10, 1, 2, 3}, src: []byte{0xc1}, want: netip.MustParseAddr("10.1.2.3"), wantSrc: "unknown"},
		{name: "longer reply: the first 4 bytes", ip: []byte{0x00, 0x11, 10, 1, 2, 3, 9, 9}, src: ok4, want: netip.MustParseAddr("10.1.2.3"), wantSrc: "dhcp"},
		{name: "zero address", ip: []byte{0x00, 0x11, 0, 0, 0, 0}, src: ok4, wantErr: errNoLANAddress, wantText: "0.0.0.0"},
		{name: "broadcast", ip: []byte{0x00, 0x11, 255, 255, 255, 255}, src: ok4, wantErr: errNoLANAddress, wantText: "255.255.255.255"},
		{name: "loopback", ip: []byte{0x00, 0x11, 127, 0, 0, 1}, src: ok4, wantErr: errNoLANAddress, wantText: "127.0.0.1"},
		{name: "invalid command", ip: []byte{0xc1}, src: ok4, wantErr: errIPMIReply, wantText: "completion code 0xc1"},
		{name: "parameter not supported", ip: []byte{0x80}, src: ok4, wantErr: errIPMIReply, wantText: "completion code 0x80"},
		{name: "timeout code", ip: []byte{0xc3, 0x11, 1, 2, 3, 4}, src: ok4, wantErr: errIPMIReply, wantText: "completion code 0xc3"},
		{name: "empty", ip: nil, src: ok4, wantErr: errIPMIReply, wantText: "0 bytes"},
		{name: "short", ip: []byte{0x00, 0x11, 10, 1, 2}, src: ok4, wantErr: errIPMIReply, wantText: "5 bytes"},
		{name: "no revision", ip: []byte{0x00}, src: ok4, wantErr: errIPMIReply, wantText: "1 bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, src, err := lanAddress(tc.ip, tc.src)
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("lanAddress = %v, %q, %v; want error %v", a, src, err, tc.wantErr)
			}
			if err != nil {
				if !strings.Contains(err.Error(), tc.wantText) {
					t.Errorf("error %q does not name %q", err, tc.wantText)
				}
				return
			}
			if diff := cmp.Diff([2]string{tc.want.String(), tc.wantSrc}, [2]string{a.String(), src}); diff != "" {
				t.Errorf("address, source (-want +got):\n%s", diff)
			}
		})
	}
}

// TestLANConfigRequest: the request's data is the channel, the
// parameter, set selector 0 and block selector 0 (the revision-only bit
// clear).
func TestLANConfigRequest(t *testing.T) {
	if diff := cmp.Diff([]byte{0x01, 0x03, 0x00, 0x00}, lanConfigRequest(1, lanParamIP)); diff != "" {
		t.Errorf("request (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]byte{0x0e, 0x04, 0x00, 0x00}, lanConfigRequest(0x1e, lanParamIPSource)); diff != "" {
		t.Errorf("request of channel 0x1e (only its 4 low bits) (-want +got):\n%s", diff)
	}
}

// TestLANChannels: Get Channel Info replies name the 802.3 LAN channels
// (medium type 04h) other than channel 1, which is always tried first.
func TestLANChannels(t *testing.T) {
	for _, tc := range []struct {
		name  string
		reply []byte
		want  bool
	}{
		{"lan", []byte{0x00, 0x02, 0x04, 0x01, 0x02, 0xf2, 0x1b, 0x00, 0x00, 0x00}, true},
		{"ipmb", []byte{0x00, 0x00, 0x01, 0x01, 0x02, 0xf2, 0x1b, 0x00, 0x00, 0x00}, false},
		{"lan, high bits of the medium byte set", []byte{0x00, 0x03, 0x84, 0x01}, true},
		{"refused", []byte{0xcc}, false},
		{"short", []byte{0x00, 0x02}, false},
	} {
		if got := isLANChannel(tc.reply); got != tc.want {
			t.Errorf("%s: isLANChannel(% x) = %v, want %v", tc.name, tc.reply, got, tc.want)
		}
	}
}

// FuzzLANAddress: no reply panics lanAddress, and an address it gives
// is one a site can reach (not 0.0.0.0, broadcast, loopback, multicast
// or link-local) read from a reply with completion code 0.
func FuzzLANAddress(f *testing.F) {
	f.Add([]byte{0x00, 0x11, 192, 0, 2, 61}, []byte{0x00, 0x11, 1})
	f.Add([]byte{0xc1}, []byte{})
	f.Add([]byte{0x00, 0x11, 0, 0, 0, 0}, []byte{0x00})
	f.Fuzz(func(t *testing.T, ip, src []byte) {
		a, _, err := lanAddress(ip, src)
		if err != nil {
			return
		}
		if len(ip) < 6 || ip[0] != 0 || !a.Is4() || a.IsUnspecified() || a.IsLoopback() || a.IsMulticast() || a.IsLinkLocalUnicast() || a == netip.AddrFrom4([4]byte{255, 255, 255, 255}) {
			t.Fatalf("lanAddress(% x) = %v", ip, a)
		}
	})
}

// TestIPMIModules: for an IPMI BMC the agent loads its system interface
// driver and the device interface by name, ipmi_msghandler first.
func TestIPMIModules(t *testing.T) {
	dep := "kernel/drivers/char/ipmi/ipmi_si.ko: kernel/drivers/char/ipmi/ipmi_msghandler.ko\n" +
		"kernel/drivers/char/ipmi/ipmi_ssif.ko: kernel/drivers/char/ipmi/ipmi_msghandler.ko\n" +
		"kernel/drivers/char/ipmi/ipmi_devintf.ko: kernel/drivers/char/ipmi/ipmi_msghandler.ko\n" +
		"kernel/drivers/char/ipmi/ipmi_msghandler.ko:\n"
	m, err := parseModules(strings.NewReader(""), strings.NewReader(dep))
	if err != nil {
		t.Fatal(err)
	}
	for iface, want := range map[string][]string{
		"kcs":  {"kernel/drivers/char/ipmi/ipmi_msghandler.ko", "kernel/drivers/char/ipmi/ipmi_si.ko", "kernel/drivers/char/ipmi/ipmi_devintf.ko"},
		"ssif": {"kernel/drivers/char/ipmi/ipmi_msghandler.ko", "kernel/drivers/char/ipmi/ipmi_ssif.ko", "kernel/drivers/char/ipmi/ipmi_devintf.ko"},
	} {
		if diff := cmp.Diff(want, m.Order(ipmiModules(iface), map[string]bool{})); diff != "" {
			t.Errorf("%s: modules loaded (-want +got):\n%s", iface, diff)
		}
	}
}

// TestIPMILANPort: the report's port for an address read in-band is the
// one the IPMI BMC driver dials.
func TestIPMILANPort(t *testing.T) {
	if ipmiLANPort != ipmi.DefaultPort {
		t.Errorf("ipmiLANPort %d, pxe/bmc/ipmi's DefaultPort %d", ipmiLANPort, ipmi.DefaultPort)
	}
}
