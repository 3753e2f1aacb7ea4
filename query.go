package plasmanode

import (
	"context"
	"slices"

	"github.com/plasmactl/plasma-node/zones"
)

// QueryOptions select what Query looks for.
type QueryOptions struct {
	// Zone is the zone asked about; a path without "platform." gets it.
	// Required.
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
	// Zones are the node's zones that are the zone asked about or below
	// it.
	Zones []string `json:"zones" yaml:"zones"`
}

// QueryResult is Query's answer: {nodes: [{node, platform}]}.
type QueryResult struct {
	// Zone is the zone asked about, normalised.
	Zone string `json:"zone" yaml:"zone"`
	// Nodes are the nodes allocated to the zone or a zone below it,
	// sorted by platform, then hostname; never nil.
	Nodes []QueryNode `json:"nodes" yaml:"nodes"`
}

// Query returns the nodes a zone, or a zone below it, is allocated to,
// as plasmactl-zone's NodesForZone finds them. The zone must be valid
// and, when the project has topology.yaml, defined there (an error
// wrapping [zones.ErrUnknownZone] naming the nearest zones otherwise).
func (p *Project) Query(ctx context.Context, o QueryOptions) (QueryResult, error) {
	z, err := p.zone(o.Zone)
	if err != nil {
		return QueryResult{}, err
	}
	ns, err := p.list(ctx, ListOptions{Platform: o.Platform, Zone: z})
	if err != nil {
		return QueryResult{}, err
	}
	res := QueryResult{Zone: z, Nodes: []QueryNode{}}
	for _, n := range ns {
		var in []string
		for _, nz := range n.Zones {
			if zones.Contains(z, nz) {
				in = append(in, nz)
			}
		}
		slices.Sort(in)
		res.Nodes = append(res.Nodes, QueryNode{Node: n.Hostname, Platform: n.Platform, Zones: in})
	}
	return res, nil
}
