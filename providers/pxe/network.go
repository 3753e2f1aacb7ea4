package pxe

import (
	"fmt"
	"net/netip"
	"slices"

	"github.com/plasmactl/plasma-node/ipam"
	"github.com/plasmactl/plasma-node/providers"
	"github.com/plasmactl/plasma-node/pxe/registry"
)

// installNet is a platform's install network (networking.install_network):
// the ip pool its machines' static addresses come from, with the prefix
// length, gateway and DNS server their answers carry.
type installNet struct {
	name    string
	bits    int
	gateway string
	dns     string
}

// installNetwork returns the platform's install network, nil when it
// names none. Every pool of in must take its addresses from it, and new
// servers need in.Allocate to have them before they are registered.
//
// Errors: [providers.ErrInvalidInput].
func installNetwork(in providers.DirectInput) (*installNet, error) {
	plat := in.Platform
	name := plat.Networking.InstallNetwork
	if name == "" {
		return nil, nil
	}
	where := plat.File()
	if where == "" {
		where = "platform.yaml"
	}
	c, ok := plat.Networking.IPPools[name]
	if !ok {
		return nil, fmt.Errorf("%s networking.install_network %q: %w: no such networking.ip_pools entry", where, name, providers.ErrInvalidInput)
	}
	p, err := ipam.ParseCIDR(c.CIDR)
	if err != nil {
		return nil, fmt.Errorf("%s networking.ip_pools.%s: %w: %w", where, name, providers.ErrInvalidInput, err)
	}
	n := &installNet{name: name, bits: p.Bits(), gateway: c.Gateway, dns: c.DNS}
	for _, f := range []struct{ key, v string }{{"gateway", c.Gateway}, {"dns", c.DNS}} {
		if a, err := netip.ParseAddr(f.v); err != nil || a.Is4() != p.Addr().Is4() {
			return nil, fmt.Errorf("%s networking.ip_pools.%s.%s %q: %w: the install network's machines need one %s address", where, name, f.key, f.v, providers.ErrInvalidInput, family(p))
		}
	}
	for _, pool := range sortedKeys(in.Pools) {
		if got := in.Pools[pool].IPPool; got != name {
			from := "networking.private_network"
			if got != "" {
				from = "ip pool " + got
			}
			return nil, fmt.Errorf("%s pools.%s: %w: its addresses come from %s, not the install network %s; set pools.%s.ip_pool: %s", where, pool, providers.ErrInvalidInput, from, name, pool, name)
		}
	}
	if in.Allocate == nil {
		return nil, fmt.Errorf("platform %s: install network %s: %w: no address allocator given", plat.Name, name, providers.ErrInvalidInput)
	}
	return n, nil
}

func family(p netip.Prefix) string {
	if p.Addr().Is4() {
		return "IPv4"
	}
	return "IPv6"
}

// static sets r's static network to addr on the install network, its
// management interface mgmt (one of r's MACs; empty: the first). A
// registration that pins no MAC cannot have one: the answer selects the
// interface by MAC.
func (n *installNet) static(r *registry.Registration, addr netip.Addr, mgmt string) error {
	if len(r.MACs) == 0 {
		return fmt.Errorf("node %s: %w: the install network %s gives it a static address, which needs its MAC pinned (macs in the hardware list)", r.Name, ErrInvalidHardware, n.name)
	}
	mac := ""
	if slices.Contains(r.MACs, mgmt) {
		mac = mgmt
	}
	r.Network = &registry.Network{CIDR: netip.PrefixFrom(addr, n.bits).String(), Gateway: n.gateway, DNS: n.dns, MAC: mac}
	return r.Validate()
}
