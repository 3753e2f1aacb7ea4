package nodes

import (
	"maps"
	"reflect"
	"slices"
)

func cloneNode(n *Node) *Node {
	c := *n
	c.Zones = slices.Clone(n.Zones)
	c.Disks = slices.Clone(n.Disks)
	c.Labels = maps.Clone(n.Labels)
	c.K8sLabels = maps.Clone(n.K8sLabels)
	c.SSHHostKeys = slices.Clone(n.SSHHostKeys)
	return &c
}

func equalNodeValues(a, b *Node) bool { return reflect.DeepEqual(a, b) }

func clonePlatform(p *Platform) *Platform {
	c := *p
	c.Pools = maps.Clone(p.Pools)
	for k, v := range c.Pools {
		v.Zones = slices.Clone(v.Zones)
		v.Hardware = slices.Clone(v.Hardware)
		for i, m := range v.Hardware {
			m.MACs = slices.Clone(m.MACs)
			m.DataPools = slices.Clone(m.DataPools)
			v.Hardware[i] = m
		}
		c.Pools[k] = v
	}
	c.Networking.IPPools = maps.Clone(p.Networking.IPPools)
	for k, v := range c.Networking.IPPools {
		v.Exclude = slices.Clone(v.Exclude)
		c.Networking.IPPools[k] = v
	}
	c.Defaults.Capabilities = slices.Clone(p.Defaults.Capabilities)
	return &c
}
