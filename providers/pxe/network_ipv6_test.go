package pxe

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/plasmactl/plasma-node/nodes"
	"github.com/plasmactl/plasma-node/providers"
	"github.com/plasmactl/plasma-node/pxe/store/folder"
)

// staticInput6 is staticInput on an IPv6 install network: 2001:db8:20::/64,
// gateway ::1, DNS dns, addresses from ::10 on.
func staticInput6(t *testing.T, dir string, count int, dns string) providers.DirectInput {
	t.Helper()
	return staticInputOn(t, dir, count, nodes.IPPool{CIDR: "2001:db8:20::/64", Gateway: "2001:db8:20::1", DNS: dns}, "2001:db8:20::10")
}

// TestPlanGivesStaticIPv6Addresses: an IPv6 install network gives each
// new machine its allocated IPv6 address with the /64, the gateway and
// the DNS server, which its answer carries as from-answer; a DNS server
// of the other family is refused naming the pool.
func TestPlanGivesStaticIPv6Addresses(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	p, err := (&Provider{}).Plan(ctx, staticInput6(t, dir, 1, "2001:db8:20::53"))
	if err != nil {
		t.Fatal(err)
	}
	servers, err := p.Apply(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(servers) != 1 || servers[0].PrivateIP != "2001:db8:20::10" {
		t.Errorf("servers: %+v; want one at 2001:db8:20::10", servers)
	}
	g, _ := folder.OpenRegistrations(dir, nil)
	r, err := g.Get(ctx, "metal-control-001")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff("2001:db8:20::10/64 via 2001:db8:20::1 dns 2001:db8:20::53", r.Network.CIDR+" via "+r.Network.Gateway+" dns "+r.Network.DNS); diff != "" {
		t.Errorf("registration's network (-want +got):\n%s", diff)
	}
	_, err = (&Provider{}).Plan(ctx, staticInput6(t, t.TempDir(), 1, "10.20.0.53"))
	if !errors.Is(err, providers.ErrInvalidInput) || !strings.Contains(err.Error(), "networking.ip_pools.mgmt.dns") || !strings.Contains(err.Error(), "IPv6") {
		t.Errorf("an IPv4 DNS server on an IPv6 install network: %v", err)
	}
}
