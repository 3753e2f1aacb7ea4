package plasmanode

import (
	"context"
	"slices"
	"strings"

	"github.com/plasmactl/plasma-node/zones"
)

// QueryOptions select what Query looks for.
type QueryOptions struct {
	// Zone is the zone asked about (a path without "platform." gets it),
	// or a component attached to zones in a layer playbook (see
	// [zones.ComponentZones]): a name that is no zone of topology.yaml,
	// does not start with "platform." and is attached somewhere asks for
	// the nodes the component lands on. Required.
	Zone string
	// Platform limits the answer to one platform. Default: all.
	Platform string
}

// QueryNode is one node Query found, in plasmactl-node's node:query
// result.
type QueryNode struct {
	// Node is the node's hostname.
	Node string `json:"node" yaml:"node"`
	// Platform is the platform holding it.
	Platform string `json:"platform" yaml:"platform"`
	// Zones are the node's zones that are the zone asked about (or one
	// the component is attached to) or below it.
	Zones []string `json:"zones" yaml:"zones"`
}

// QueryResult is Query's answer: {nodes: [{node, platform}]}.
type QueryResult struct {
	// Zone is the zone asked about, normalised; empty for a component.
	Zone string `json:"zone,omitempty" yaml:"zone,omitempty"`
	// Component is the component asked about, and AttachedTo the zones
	// it is attached to; empty for a zone.
	Component  string   `json:"component,omitempty" yaml:"component,omitempty"`
	AttachedTo []string `json:"attached_to,omitempty" yaml:"attached_to,omitempty"`
	// Nodes are the nodes allocated to the zone or a zone below it,
	// sorted by platform, then hostname; never nil.
	Nodes []QueryNode `json:"nodes" yaml:"nodes"`
}

// Query returns the nodes a zone, or a zone below it, is allocated to,
// as plasmactl-zone's NodesForZone finds them. The zone must be valid
// and, when the project has topology.yaml, defined there (an error
// wrapping [zones.ErrUnknownZone] naming the nearest zones otherwise).
//
// A component ([QueryOptions.Zone]) gives the nodes allocated to a zone
// it is attached to, or below one; a layer playbook that cannot be read
// is an error wrapping [zones.ErrInvalidPlaybook].
func (p *Project) Query(ctx context.Context, o QueryOptions) (QueryResult, error) {
	res := QueryResult{Nodes: []QueryNode{}}
	attached, err := p.componentZones(o.Zone)
	if err != nil {
		return res, err
	}
	var want []string
	if len(attached) > 0 {
		res.Component, res.AttachedTo, want = o.Zone, attached, attached
	} else {
		z, err := p.zone(o.Zone)
		if err != nil {
			return res, err
		}
		res.Zone, want = z, []string{z}
	}
	ns, err := p.list(ctx, ListOptions{Platform: o.Platform})
	if err != nil {
		return res, err
	}
	for _, n := range ns {
		var in []string
		for _, nz := range n.Zones {
			if slices.ContainsFunc(want, func(z string) bool { return zones.Contains(z, nz) }) {
				in = append(in, nz)
			}
		}
		if len(in) > 0 {
			slices.Sort(in)
			res.Nodes = append(res.Nodes, QueryNode{Node: n.Hostname, Platform: n.Platform, Zones: in})
		}
	}
	return res, nil
}

// componentZones returns the zones name is attached to when it names a
// component rather than a zone: not under "platform.", not a zone of
// topology.yaml, attached in a layer playbook. None otherwise.
func (p *Project) componentZones(name string) ([]string, error) {
	if strings.HasPrefix(name, "platform.") || name == "platform" {
		return nil, nil
	}
	if z, err := zones.Normalize(name); err == nil && p.Topology != nil && p.Topology.Has(z) {
		return nil, nil
	}
	return zones.ComponentZones(p.Store.Dir(), name)
}
