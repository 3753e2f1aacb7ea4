package registry

import (
	"errors"
	"net/netip"
	"slices"
	"strings"

	"github.com/plasmactl/plasma-node/answer"
)

// ErrInvalidNetwork: a registration's static network that is not an
// address with its prefix, a gateway and one DNS server of its family, or
// that names no pinned MAC as its management interface.
var ErrInvalidNetwork = errors.New("invalid static network")

// Network is a registration's static addressing: its answer then says
// network.source = "from-answer" with this address, gateway and DNS
// server, on the management interface selected by its MAC, instead of
// leaving the address to the site's DHCP server. Its JSON keys are those
// of the installer's [network] table (cidr, gateway, dns) and mac.
type Network struct {
	// CIDR is the node's address with its prefix length, "10.0.0.5/24".
	CIDR string `json:"cidr"`
	// Gateway is the default gateway, inside CIDR's network.
	Gateway string `json:"gateway"`
	// DNS is one DNS server's address (the installer takes one).
	DNS string `json:"dns"`
	// MAC is the management interface's MAC, one of the registration's
	// MACs; empty means the first of them.
	MAC string `json:"mac,omitempty"`
}

// ManagementMAC returns the MAC of the interface r's static network is
// set on: its network's MAC, else r's first pinned MAC; empty when r has
// no static network or pins no MAC.
func (r Registration) ManagementMAC() string {
	if r.Network == nil {
		return ""
	}
	if r.Network.MAC != "" {
		return r.Network.MAC
	}
	if len(r.MACs) > 0 {
		return r.MACs[0]
	}
	return ""
}

// validateNetwork checks r's static network: an address with its prefix
// (not the network's or, in IPv4, its broadcast address), a gateway in
// that network other than the address, one DNS server of the same family,
// and a management MAC that r pins. Static addressing needs a MAC pin: the
// answer selects the interface by it. Errors wrap [ErrInvalidNetwork].
func (r Registration) validateNetwork() error {
	n := r.Network
	if len(r.MACs) == 0 {
		return invalid(ErrInvalidNetwork, "registration %s: static addressing needs a MAC pin: the answer selects the management interface by its MAC; pin the machine's MAC", r.Name)
	}
	p, err := netip.ParsePrefix(n.CIDR)
	if err != nil || !p.Addr().IsValid() || p.Addr().Zone() != "" {
		return invalid(ErrInvalidNetwork, "registration %s: static address %q: want an address with its prefix length such as 10.0.0.5/24", r.Name, n.CIDR)
	}
	if a := p.Addr(); a == p.Masked().Addr() && p.Bits() < a.BitLen()-1 || a.Is4() && p.Bits() < 31 && a == lastOf(p) {
		return invalid(ErrInvalidNetwork, "registration %s: static address %s is its network's own or broadcast address", r.Name, n.CIDR)
	}
	gw, err := netip.ParseAddr(n.Gateway)
	switch {
	case err != nil || gw.Zone() != "":
		return invalid(ErrInvalidNetwork, "registration %s: gateway %q: want an IP address such as 10.0.0.1", r.Name, n.Gateway)
	case !p.Masked().Contains(gw) || gw == p.Addr():
		return invalid(ErrInvalidNetwork, "registration %s: gateway %s is not another address of %s's network %s", r.Name, gw, n.CIDR, p.Masked())
	}
	dns, err := netip.ParseAddr(n.DNS)
	switch {
	case err != nil || dns.Zone() != "":
		return invalid(ErrInvalidNetwork, "registration %s: DNS server %q: want one IP address such as 10.0.0.1", r.Name, n.DNS)
	case dns.Unmap().Is4() != p.Addr().Is4():
		// The installer's own rule (its network form): "host and DNS IP
		// address version must not differ".
		return invalid(ErrInvalidNetwork, "registration %s: DNS server %s is not an %s address as %s is", r.Name, n.DNS, ipFamily(p.Addr()), n.CIDR)
	}
	if n.MAC != "" && !slices.Contains(r.MACs, n.MAC) {
		return invalid(ErrInvalidNetwork, "registration %s: management MAC %s is not one of its MACs (%s)", r.Name, n.MAC, strings.Join(r.MACs, ", "))
	}
	return nil
}

// ipFamily is "IPv4" or "IPv6".
func ipFamily(a netip.Addr) string {
	if a.Is4() {
		return "IPv4"
	}
	return "IPv6"
}

// lastOf is the last address of p's network (IPv4's broadcast).
func lastOf(p netip.Prefix) netip.Addr {
	b := p.Masked().Addr().As4()
	host := 32 - p.Bits()
	for i := 3; i >= 0 && host > 0; i-- {
		n := min(host, 8)
		b[i] |= byte(1<<n - 1)
		host -= n
	}
	return netip.AddrFrom4(b)
}

// answerNetwork is the installer's [network] table of r: from-answer on
// its management MAC when r has a static network, else from-dhcp. The
// interface is selected by udev's ID_NET_NAME_MAC ("enx" and the MAC's
// hex digits), which the installer globs against every NIC.
func answerNetwork(r Registration) answer.Network {
	mac := r.ManagementMAC()
	if r.Network == nil || mac == "" {
		return answer.Network{Source: answer.NetworkFromDHCP}
	}
	return answer.Network{
		Source:  answer.NetworkFromAnswer,
		CIDR:    r.Network.CIDR,
		Gateway: r.Network.Gateway,
		DNS:     r.Network.DNS,
		Filter:  map[string]string{"ID_NET_NAME_MAC": "*" + strings.ReplaceAll(mac, ":", "")},
	}
}
