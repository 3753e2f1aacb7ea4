package enrol

import (
	"net/netip"
	"strconv"

	"github.com/plasmactl/plasma-node/ipam"
	"github.com/plasmactl/plasma-node/pxe/registry"
)

// pool returns the address pool a defines.
func (a Address) pool() (*ipam.Pool, error) {
	return ipam.New(ipam.Config{Name: a.Pool, CIDR: a.CIDR, Range: a.Range, Exclude: a.Exclude, Gateway: a.Gateway})
}

// network returns the static network of addr from a, on the interface
// of mac.
func (a Address) network(addr netip.Addr, mac string) *registry.Network {
	p, _ := ipam.ParseCIDR(a.CIDR)
	return &registry.Network{CIDR: addr.String() + "/" + strconv.Itoa(p.Bits()), Gateway: a.Gateway, DNS: a.DNS, MAC: mac}
}

// addressOf returns the address of a registration's static network.
func addressOf(n *registry.Network) (netip.Addr, bool) {
	if n == nil {
		return netip.Addr{}, false
	}
	p, err := netip.ParsePrefix(n.CIDR)
	if err != nil {
		return netip.Addr{}, false
	}
	return p.Addr(), true
}
