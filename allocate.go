package plasmanode

import (
	"context"
	"slices"
	"strings"

	"github.com/plasmactl/plasma-node/nodes"
	"github.com/plasmactl/plasma-node/zones"
)

// AllocateOptions describe a change of a node's zones.
type AllocateOptions struct {
	// Hostname of the node. Required.
	Hostname string
	// Platform holding the node. Default: the one platform that has a node
	// of that name (an error wrapping [nodes.ErrAmbiguous] when several
	// do).
	Platform string
	// Ops are kubectl-style operations: "X" adds, "X-" removes, "old/new"
	// replaces. None shows the node's zones and changes nothing.
	Ops []string
}

// AllocateResult is the node's allocation after Allocate.
type AllocateResult struct {
	// Hostname is the node's name.
	Hostname string `json:"hostname" yaml:"hostname"`
	// Platform is the platform holding the node.
	Platform string `json:"platform" yaml:"platform"`
	// Zones are the node's zones after the change, never nil.
	Zones []string `json:"zones" yaml:"zones"`
	// Modified reports whether the node file changed.
	Modified bool `json:"modified" yaml:"modified"`
}

// Allocate applies zone operations to a node and rewrites its file,
// keeping everything else as written. The operations are parsed and the
// added zones checked against topology.yaml before anything is read; the
// change is made under the platform's lock against the file as it is
// then, so concurrent allocations on one node all survive. Removing a
// zone the node does not have is an error wrapping
// [zones.ErrNotAllocated], and leaves the file as it was.
func (p *Project) Allocate(ctx context.Context, o AllocateOptions) (AllocateResult, error) {
	ops, err := zones.ParseOps(o.Ops)
	if err != nil {
		return AllocateResult{}, err
	}
	for _, op := range ops {
		added := op.Zone
		if op.Kind == zones.Replace {
			added = op.New
		}
		if op.Kind != zones.Remove {
			if err := p.Topology.Check(added); err != nil {
				return AllocateResult{}, err
			}
		}
	}
	platform, err := p.platformOf(ctx, o.Platform, o.Hostname)
	if err != nil {
		return AllocateResult{}, err
	}
	var added []string
	for _, op := range ops {
		switch op.Kind {
		case zones.Add:
			added = append(added, op.Zone)
		case zones.Replace:
			added = append(added, op.New)
		}
	}
	// Zones new to the platform are warned of once the change is made:
	// a refused one fails with its error alone.
	warnNew := p.newZoneWarnings(ctx, platform, added)
	if len(ops) == 0 {
		n, err := p.Store.Node(ctx, platform, o.Hostname)
		if err != nil {
			return AllocateResult{}, err
		}
		return AllocateResult{Hostname: n.Hostname, Platform: platform, Zones: nonNil(n.Zones)}, nil
	}
	unlock, err := p.lock(ctx, platform, "allocate")
	if err != nil {
		return AllocateResult{}, err
	}
	defer unlock()
	var changed bool
	n, err := p.Store.UpdateNode(ctx, platform, o.Hostname, func(n *nodes.Node) error {
		result, ch, err := zones.Apply(n.Zones, ops)
		if err != nil {
			return err
		}
		changed = ch
		if ch {
			n.K8sLabels = zoneLabels(n.K8sLabels, n.Zones, result)
			n.Zones = result
		}
		return nil
	})
	if err != nil {
		return AllocateResult{}, err
	}
	if changed {
		warnNew()
		p.log.Info("zones allocated", "node", n.String(), "zones", n.Zones)
	}
	return AllocateResult{Hostname: n.Hostname, Platform: platform, Zones: nonNil(n.Zones), Modified: changed}, nil
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return slices.Clone(s)
}

// warnNewZones warns, when the project has no topology.yaml to check
// zones against, of each zone of added that no node of the platform
// has: a misspelt zone would otherwise pass unnoticed. The warning names
// the zones the platform already uses.
func (p *Project) warnNewZones(ctx context.Context, platform string, added []string) {
	p.newZoneWarnings(ctx, platform, added)()
}

// newZoneWarnings is warnNewZones as of now, to be logged later by the
// returned func (after a change that adds the zones).
func (p *Project) newZoneWarnings(ctx context.Context, platform string, added []string) func() {
	if p.Topology != nil || len(added) == 0 {
		return func() {}
	}
	ns, _, err := p.Store.ScanNodes(ctx, platform)
	if err != nil {
		return func() {}
	}
	var used []string
	for _, n := range ns {
		used = append(used, n.Zones...)
	}
	slices.Sort(used)
	used = slices.Compact(used)
	if len(used) == 0 {
		return func() {} // a platform's first zones: nothing to compare with
	}
	return func() {
		for _, z := range added {
			if !slices.Contains(used, z) {
				p.log.Warn("zone is new to the platform and there is no "+topologyFile+" to check it", "zone", z, "platform", platform,
					"zones_in_use", strings.Join(used, ", "))
			}
		}
	}
}
