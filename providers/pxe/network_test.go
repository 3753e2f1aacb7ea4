package pxe

import (
	"github.com/plasmactl/plasma-node/pxe/registry"
	"github.com/plasmactl/plasma-node/pxe/store/folder"

	"context"
	"errors"
	"net/netip"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/plasmactl/plasma-node/nodes"
	"github.com/plasmactl/plasma-node/providers"
)

// staticInput is input's platform with the install network "mgmt"
// (10.20.0.0/24, gateway .1, DNS .53), its pool taking addresses from it,
// and an allocator handing out .10, .11, ... in turn.
func staticInput(t *testing.T, dir string, count int) providers.DirectInput {
	t.Helper()
	return staticInputOn(t, dir, count, nodes.IPPool{CIDR: "10.20.0.0/24", Gateway: "10.20.0.1", DNS: "10.20.0.53"}, "10.20.0.10")
}

// staticInputOn is input's platform with the install network "mgmt" of
// pool, the control pool taking addresses from it, and an allocator
// handing out first and the addresses after it in turn.
func staticInputOn(t *testing.T, dir string, count int, pool nodes.IPPool, first string) providers.DirectInput {
	t.Helper()
	in := input(t, dir, count)
	in.Platform.Networking = nodes.Networking{InstallNetwork: "mgmt", IPPools: map[string]nodes.IPPool{"mgmt": pool}}
	c := in.Pools["control"]
	c.IPPool = "mgmt"
	in.Pools["control"] = c
	next := netip.MustParseAddr(first)
	in.Allocate = func(pool string) (netip.Addr, error) {
		if pool != "mgmt" {
			t.Errorf("Allocate(%q); want mgmt", pool)
		}
		a := next
		next = next.Next()
		return a, nil
	}
	return in
}

// TestPlanGivesStaticAddresses: on a platform with an install network,
// each new machine's registration carries its allocated address with the
// network's prefix, gateway and DNS on its first MAC, and the server
// returned has that address as its private IP, so the node file, the
// answer and the machine agree.
func TestPlanGivesStaticAddresses(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	p, err := (&Provider{}).Plan(ctx, staticInput(t, dir, 2))
	if err != nil {
		t.Fatal(err)
	}
	var creates []string
	for _, c := range p.Summary().Creates {
		creates = append(creates, c.Address)
	}
	wantCreates := []string{
		"node-provisioner_registration.metal-control-001 (mac 52:54:00:00:00:01; boot disk sda; static address 10.20.0.10/24)",
		"node-provisioner_registration.metal-control-002 (mac 52:54:00:00:00:02; boot disk 25414A800205; static address 10.20.0.11/24)",
	}
	if diff := cmp.Diff(wantCreates, creates); diff != "" {
		t.Errorf("plan (-want +got):\n%s", diff)
	}
	servers, err := p.Apply(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var ips []string
	for _, s := range servers {
		ips = append(ips, s.Hostname+"="+s.PrivateIP)
	}
	if diff := cmp.Diff([]string{"metal-control-001=10.20.0.10", "metal-control-002=10.20.0.11"}, ips); diff != "" {
		t.Errorf("servers' private IPs (-want +got):\n%s", diff)
	}
	g, _ := folder.OpenRegistrations(dir, nil)
	r, err := g.Get(ctx, "metal-control-002")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(&registry.Network{CIDR: "10.20.0.11/24", Gateway: "10.20.0.1", DNS: "10.20.0.53"}, r.Network); diff != "" {
		t.Errorf("registration's network (-want +got):\n%s", diff)
	}
	if r.ManagementMAC() != "52:54:00:00:00:02" {
		t.Errorf("management MAC %q", r.ManagementMAC())
	}
	// Again: the registrations exist, and their servers keep the address.
	p, err = (&Provider{}).Plan(ctx, staticInput(t, dir, 2))
	if err != nil {
		t.Fatal(err)
	}
	servers, err = p.Apply(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(servers) != 2 || servers[1].PrivateIP != "10.20.0.11" {
		t.Errorf("servers of the existing registrations: %+v", servers)
	}
}

// TestPlanStaticManagementMAC: a machine of two NICs whose hardware
// entry names the second as management_mac gets its static address there.
func TestPlanStaticManagementMAC(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	in := staticInput(t, dir, 1)
	c := in.Pools["control"]
	c.Hardware = []nodes.Machine{{MACs: []string{"52:54:00:00:00:41", "52:54:00:00:00:42"}, ManagementMAC: "52:54:00:00:00:42", BootDisk: "sda"}}
	in.Pools["control"] = c
	p, err := (&Provider{}).Plan(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	servers, err := p.Apply(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(servers) != 1 || servers[0].MAC != "52:54:00:00:00:42" {
		t.Errorf("servers %+v; want the management NIC's MAC as the node's private_mac", servers)
	}
	g, _ := folder.OpenRegistrations(dir, nil)
	r, err := g.Get(ctx, "metal-control-001")
	if err != nil {
		t.Fatal(err)
	}
	if r.ManagementMAC() != "52:54:00:00:00:42" || r.Network.MAC != "52:54:00:00:00:42" {
		t.Errorf("management MAC %q (network %+v); want the second NIC", r.ManagementMAC(), r.Network)
	}
}

// TestPlanStaticRefusals: an install network that is no ip pool, lacks a
// gateway or DNS server, a pool taking its addresses elsewhere, and a
// machine pinned by serial alone are refused before anything is written,
// each naming what to fix.
func TestPlanStaticRefusals(t *testing.T) {
	tests := map[string]struct {
		mutate func(*providers.DirectInput)
		want   error
		msg    string
	}{
		"no such ip pool": {func(in *providers.DirectInput) { in.Platform.Networking.InstallNetwork = "lab" },
			providers.ErrInvalidInput, `networking.install_network "lab": invalid input: no such networking.ip_pools entry`},
		"no gateway": {func(in *providers.DirectInput) {
			in.Platform.Networking.IPPools = map[string]nodes.IPPool{"mgmt": {CIDR: "10.20.0.0/24", DNS: "10.20.0.53"}}
		}, providers.ErrInvalidInput, `networking.ip_pools.mgmt.gateway "": invalid input: the install network's machines need one IPv4 address`},
		"two DNS servers": {func(in *providers.DirectInput) {
			in.Platform.Networking.IPPools = map[string]nodes.IPPool{"mgmt": {CIDR: "10.20.0.0/24", Gateway: "10.20.0.1", DNS: "10.20.0.53 1.1.1.1"}}
		}, providers.ErrInvalidInput, `networking.ip_pools.mgmt.dns "10.20.0.53 1.1.1.1"`},
		"a pool on private_network": {func(in *providers.DirectInput) { c := in.Pools["control"]; c.IPPool = ""; in.Pools["control"] = c },
			providers.ErrInvalidInput, "pools.control: invalid input: its addresses come from networking.private_network, not the install network mgmt; set pools.control.ip_pool: mgmt"},
		"a management MAC the machine does not pin": {func(in *providers.DirectInput) {
			c := in.Pools["control"]
			c.Hardware = []nodes.Machine{{MACs: []string{"52:54:00:00:00:31"}, ManagementMAC: "52:54:00:00:00:32", BootDisk: "sda"}}
			in.Pools["control"] = c
		}, ErrInvalidHardware, "platform.yaml pools.control.hardware[0]: invalid hardware list: management_mac 52:54:00:00:00:32 is not one of the machine's macs"},
		"a machine with no MAC": {func(in *providers.DirectInput) {
			c := in.Pools["control"]
			c.Hardware = []nodes.Machine{{Serial: "CZ2D1A0BC9", BootDisk: "sda"}}
			in.Pools["control"] = c
		}, ErrInvalidHardware, "platform.yaml pools.control.hardware[0]: node metal-control-001: invalid hardware list: the install network mgmt gives it a static address, which needs its MAC pinned"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			in := staticInput(t, t.TempDir(), 2)
			tc.mutate(&in)
			_, err := (&Provider{}).Plan(context.Background(), in)
			if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("error %v, want %v containing %q", err, tc.want, tc.msg)
			}
		})
	}
}
