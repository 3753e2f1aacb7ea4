package registry

import (
	"github.com/plasmactl/plasma-node/answer"

	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func staticReg() Registration {
	return Registration{
		Name: "pve1", MACs: []string{"52:54:00:12:34:56", "a0:36:9f:0a:b3:82"},
		BootDisk: answer.BootDisk{Kind: answer.BootDiskSerial, Value: "S4EVNX0R123456"},
		Created:  time.Date(2026, 7, 6, 12, 0, 0, 0, time.UTC),
		Network:  &Network{CIDR: "10.20.0.11/24", Gateway: "10.20.0.1", DNS: "10.20.0.53"},
	}
}

// TestBuildStaticNetwork: a registration with a static network gets a
// from-answer [network] with its address, gateway and DNS and a filter on
// its management MAC (the first pinned, or the one it names); without one,
// from-dhcp. Every answer passes the installer's rules of 8.2, 8.3 and
// 9.2, and renders as the golden files under testdata/answers.
func TestBuildStaticNetwork(t *testing.T) {
	named := staticReg()
	named.Network.MAC = "a0:36:9f:0a:b3:82"
	dhcp := staticReg()
	dhcp.Network = nil
	v6 := staticReg()
	v6.Network = &Network{CIDR: "2001:db8:20::11/64", Gateway: "2001:db8:20::1", DNS: "2001:db8:20::53"}
	tests := map[string]struct {
		reg  Registration
		want answer.Network
	}{
		"static-first-mac": {staticReg(), answer.Network{Source: answer.NetworkFromAnswer, CIDR: "10.20.0.11/24", Gateway: "10.20.0.1", DNS: "10.20.0.53",
			Filter: map[string]string{"ID_NET_NAME_MAC": "*525400123456"}}},
		"static-named-mac": {named, answer.Network{Source: answer.NetworkFromAnswer, CIDR: "10.20.0.11/24", Gateway: "10.20.0.1", DNS: "10.20.0.53",
			Filter: map[string]string{"ID_NET_NAME_MAC": "*a0369f0ab382"}}},
		"dhcp": {dhcp, answer.Network{Source: answer.NetworkFromDHCP}},
		"static-ipv6": {v6, answer.Network{Source: answer.NetworkFromAnswer, CIDR: "2001:db8:20::11/64", Gateway: "2001:db8:20::1", DNS: "2001:db8:20::53",
			Filter: map[string]string{"ID_NET_NAME_MAC": "*525400123456"}}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if err := tc.reg.Validate(); err != nil {
				t.Fatalf("Validate: %v", err)
			}
			a, err := Build(tc.reg, BuildOptions{RootPassword: "probe-password", RootPasswordHash: "$6$salt$hash"})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, a.Network); diff != "" {
				t.Errorf("network (-want +got):\n%s", diff)
			}
			for _, v := range []answer.Version{answer.Version82, answer.Version83, answer.Version92} {
				b := *a
				if v >= answer.Version83 {
					b.Global.RootPassword = ""
				} else {
					b.Global.RootPasswordHashed = ""
				}
				if err := answer.Validate(&b, v); err != nil {
					t.Errorf("%s: the installer's rules refuse it: %v", v, err)
				}
				out, err := answer.Render(&b, v, answer.RenderOptions{})
				if err != nil {
					t.Fatalf("%s: render: %v", v, err)
				}
				back, err := answer.Decode(out, v)
				if err != nil {
					t.Fatalf("%s: the rendered answer does not decode: %v\n%s", v, err, out)
				}
				if diff := cmp.Diff(tc.want, back.Network); diff != "" {
					t.Errorf("%s: network read back (-want +got):\n%s", v, diff)
				}
				if name != "dhcp" {
					goldenAnswer(t, name+"-"+v.String()+".toml", out)
				}
			}
		})
	}
}

// goldenAnswer compares got with testdata/answers/name, rewriting it
// under -update.
func goldenAnswer(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", "answers", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s differs (-golden +got):\n%s", path, diff)
	}
}

// TestStaticNetworkRefusals: a static network needs a MAC pin, an address
// with its prefix (neither the network's nor its broadcast), a gateway of
// that network and one DNS server, and a management MAC the registration
// pins; each refusal names the node and wraps ErrInvalidNetwork.
func TestStaticNetworkRefusals(t *testing.T) {
	tests := map[string]struct {
		edit func(r *Registration)
		want string
	}{
		"no MAC pin":                  {func(r *Registration) { r.MACs = nil; r.Serial = "CZ2D1A0BC3" }, "registration pve1: static addressing needs a MAC pin"},
		"no prefix":                   {func(r *Registration) { r.Network.CIDR = "10.20.0.11" }, `static address "10.20.0.11": want an address with its prefix length`},
		"network address":             {func(r *Registration) { r.Network.CIDR = "10.20.0.0/24" }, "10.20.0.0/24 is its network's own or broadcast address"},
		"broadcast address":           {func(r *Registration) { r.Network.CIDR = "10.20.0.255/24" }, "10.20.0.255/24 is its network's own or broadcast address"},
		"gateway elsewhere":           {func(r *Registration) { r.Network.Gateway = "10.30.0.1" }, "gateway 10.30.0.1 is not another address of 10.20.0.11/24's network 10.20.0.0/24"},
		"gateway is the node":         {func(r *Registration) { r.Network.Gateway = "10.20.0.11" }, "gateway 10.20.0.11 is not another address"},
		"bad gateway":                 {func(r *Registration) { r.Network.Gateway = "router" }, `gateway "router": want an IP address`},
		"two DNS servers":             {func(r *Registration) { r.Network.DNS = "10.20.0.53,1.1.1.1" }, `DNS server "10.20.0.53,1.1.1.1": want one IP address`},
		"no DNS":                      {func(r *Registration) { r.Network.DNS = "" }, `DNS server "": want one IP address`},
		"management MAC unpinned":     {func(r *Registration) { r.Network.MAC = "52:54:00:99:99:99" }, "management MAC 52:54:00:99:99:99 is not one of its MACs"},
		"an IPv6 DNS server for IPv4": {func(r *Registration) { r.Network.DNS = "2001:db8::53" }, "DNS server 2001:db8::53 is not an IPv4 address as 10.20.0.11/24 is"},
		"an IPv4 DNS server for IPv6": {func(r *Registration) {
			r.Network.CIDR, r.Network.Gateway, r.Network.DNS = "2001:db8:20::11/64", "2001:db8:20::1", "10.20.0.53"
		}, "DNS server 10.20.0.53 is not an IPv6 address as 2001:db8:20::11/64 is"},
		"the IPv6 network's own address": {func(r *Registration) {
			r.Network.CIDR, r.Network.Gateway, r.Network.DNS = "2001:db8:20::/64", "2001:db8:20::1", "2001:db8:20::53"
		}, "2001:db8:20::/64 is its network's own or broadcast address"},
		"an IPv6 gateway outside the /64": {func(r *Registration) {
			r.Network.CIDR, r.Network.Gateway, r.Network.DNS = "2001:db8:20::11/64", "2001:db8:21::1", "2001:db8:20::53"
		}, "gateway 2001:db8:21::1 is not another address of 2001:db8:20::11/64's network 2001:db8:20::/64"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			r := staticReg()
			n := *r.Network
			r.Network = &n
			tc.edit(&r)
			err := r.Validate()
			if !errors.Is(err, ErrInvalidNetwork) || !errors.Is(err, ErrInvalidRegistration) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Validate: %v; want ErrInvalidNetwork saying %q", err, tc.want)
			}
		})
	}
}

// TestStaticNetworkRoundTrips: the registration file keeps the network
// (its MAC normalised) and reads it back unchanged.
func TestStaticNetworkRoundTrips(t *testing.T) {
	r := staticReg()
	r.Network.MAC = "A0-36-9F-0A-B3-82"
	data, err := EncodeRegistration(r)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), `"network": {`) || !strings.Contains(string(data), `"cidr": "10.20.0.11/24"`) {
		t.Errorf("the file lacks the network:\n%s", data)
	}
	back, err := DecodeRegistration(data, "pve1")
	if err != nil {
		t.Fatal(err)
	}
	want := staticReg()
	want.Network.MAC = "a0:36:9f:0a:b3:82"
	if diff := cmp.Diff(want, back); diff != "" {
		t.Errorf("read back (-want +got):\n%s", diff)
	}
	c := back.Clone()
	c.Network.CIDR = "10.20.0.12/24"
	if back.Network.CIDR != "10.20.0.11/24" {
		t.Error("Clone shares the network")
	}
}
