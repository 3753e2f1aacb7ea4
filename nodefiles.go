package plasmanode

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/plasmactl/plasma-node/nodes"
	"github.com/plasmactl/plasma-node/providers"
)

// writeServers creates or updates the node file of each server: the
// node with the server's id or hostname, else a new one.
func (p *Project) writeServers(ctx context.Context, plat *nodes.Platform, provName string, servers []providers.Server, existing []*nodes.Node) ([]*nodes.Node, error) {
	all := slices.Clone(existing)
	var out []*nodes.Node
	for _, s := range servers {
		var cur *nodes.Node
		for _, n := range all {
			if (s.ServerID != "" && n.ProviderMetadata.ServerID == s.ServerID) || n.Hostname == s.Hostname {
				cur = n
				break
			}
		}
		fill := func(n *nodes.Node) error { return fillNode(n, s, plat, provName, all) }
		var n *nodes.Node
		var err error
		if cur != nil {
			n, err = p.Store.UpdateNode(ctx, plat.Name, cur.Hostname, fill)
		} else {
			n = &nodes.Node{Hostname: s.Hostname, Platform: plat.Name}
			if err = fill(n); err == nil {
				err = p.Store.CreateNode(ctx, n)
			}
			all = append(all, n)
		}
		if err != nil {
			return out, fmt.Errorf("write node %s (server %s): %w", s.Hostname, s.ServerID, err)
		}
		if cur != nil && n == nil {
			n = cur
		}
		out = append(out, n)
	}
	slices.SortFunc(out, func(a, b *nodes.Node) int { return strings.Compare(a.Hostname, b.Hostname) })
	return out, nil
}

// fillNode sets what server s of provider provName tells of node n: the
// zones and machine of its pool, addresses, provider metadata and zone
// labels. A node without a private IP gets the lowest one of its pool's
// address pool that no node of all uses.
func fillNode(n *nodes.Node, s providers.Server, plat *nodes.Platform, provName string, all []*nodes.Node) error {
	pool := plat.Pools[s.Pool]
	before := n.Zones
	if len(pool.Zones) > 0 {
		n.Zones = slices.Sorted(slices.Values(pool.Zones))
	}
	n.Machine = s.Machine
	if n.Machine == "" {
		n.Machine = pool.Machine
	}
	if s.PublicIP != "" {
		n.Network.PublicIP = s.PublicIP
	}
	if s.PrivateIP != "" {
		n.Network.PrivateIP = s.PrivateIP
	}
	if n.Network.PrivateIP == "" {
		ipp, err := poolFor(plat, pool.IPPool)
		if err != nil {
			return err
		}
		got, err := ipp.Allocate(usedPrivateIPs(all), 1)
		if err != nil {
			return fmt.Errorf("platform %s: %w", plat.Name, err)
		}
		n.Network.PrivateIP = got[0].String()
	}
	m := &n.ProviderMetadata
	m.Provider, m.ServerID, m.Zone, m.Machine = provName, s.ServerID, s.Zone, n.Machine
	for _, f := range []struct {
		dst *string
		v   string
	}{
		{&m.Region, s.Region}, {&m.Datacenter, s.Datacenter}, {&m.OfferID, s.OfferID}, {&n.Network.PrivateMAC, s.MAC},
		{&n.Network.PublicMAC, s.PublicMAC},
	} {
		if f.v != "" {
			*f.dst = f.v
		}
	}
	if len(s.Disks) > 0 {
		n.Disks = slices.Clone(s.Disks)
	}
	n.K8sLabels = zoneLabels(n.K8sLabels, before, n.Zones)
	return nil
}
