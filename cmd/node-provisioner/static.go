package main

import (
	"fmt"

	"github.com/spf13/pflag"

	"github.com/plasmactl/plasma-node/pxe/registry"
)

// staticFlags are register's static addressing flags.
type staticFlags struct{ address, gateway, dns, mac string }

func (s *staticFlags) bind(f *pflag.FlagSet) {
	f.StringVar(&s.address, "address", "", "install the node with this static address and prefix (10.20.0.11/24) instead of the site DHCP server's lease; needs --gateway, --dns and a --mac")
	f.StringVar(&s.gateway, "gateway", "", "the static address's default gateway")
	f.StringVar(&s.dns, "dns", "", "the static address's DNS server (one address)")
	f.StringVar(&s.mac, "management-mac", "", "the NIC the static address goes on, one of --mac (default: the first)")
}

// network returns the static network the flags give, nil without
// --address (then none of the others may be given).
func (s *staticFlags) network(f *pflag.FlagSet) (*registry.Network, error) {
	if s.address == "" {
		for _, n := range []string{"gateway", "dns", "management-mac"} {
			if f.Changed(n) {
				return nil, usageError(fmt.Errorf("--%s needs --address", n))
			}
		}
		return nil, nil
	}
	n := &registry.Network{CIDR: s.address, Gateway: s.gateway, DNS: s.dns}
	if s.mac != "" {
		m, err := registry.NormalizeMAC(s.mac)
		if err != nil {
			return nil, fmt.Errorf("--management-mac: %w", err)
		}
		n.MAC = m
	}
	return n, nil
}
