package plasmanode

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/plasmactl/plasma-node/nodes"
	"github.com/plasmactl/plasma-node/zones"
)

// DeallocateOptions describe zones taken from a node, as plasmactl-node's
// node:deallocate takes them.
type DeallocateOptions struct {
	// Hostname of the node. Required.
	Hostname string
	// Platform holding the node. Default: the one platform that has a
	// node of that name.
	Platform string
	// Zones to remove, at least one; a path without "platform." gets it.
	Zones []string
	// Recursive also removes the zones below each of Zones that the node
	// holds (platform.foundation takes platform.foundation.cluster.control
	// with it). Without it a zone the node does not hold itself is an
	// error.
	Recursive bool
}

// DeallocateResult is what Deallocate removed.
type DeallocateResult struct {
	// Hostname is the node's name.
	Hostname string `json:"hostname" yaml:"hostname"`
	// Platform is the platform holding the node.
	Platform string `json:"platform" yaml:"platform"`
	// Removed are the zones taken from the node, sorted, never nil.
	Removed []string `json:"removed" yaml:"removed"`
	// Zones are the node's zones after the change, never nil.
	Zones []string `json:"zones" yaml:"zones"`
	// Modified reports whether the node file changed.
	Modified bool `json:"modified" yaml:"modified"`
}

// Deallocate removes zones from a node and rewrites its file (labels of
// the removed zones go too), keeping everything else as written. A zone
// the node holds neither itself nor, with Recursive, below it is an
// error wrapping [zones.ErrNotAllocated] naming the node's zones, and
// nothing is written.
func (p *Project) Deallocate(ctx context.Context, o DeallocateOptions) (DeallocateResult, error) {
	if len(o.Zones) == 0 {
		return DeallocateResult{}, fmt.Errorf("deallocate %s: %w: no zone given", o.Hostname, zones.ErrInvalidZone)
	}
	var want []string
	for _, z := range o.Zones {
		n, err := zones.Normalize(z)
		if err != nil {
			return DeallocateResult{}, err
		}
		want = append(want, n)
	}
	platform, err := p.platformOf(ctx, o.Platform, o.Hostname)
	if err != nil {
		return DeallocateResult{}, err
	}
	unlock, err := p.lock(ctx, platform, "deallocate")
	if err != nil {
		return DeallocateResult{}, err
	}
	defer unlock()
	var removed []string
	n, err := p.Store.UpdateNode(ctx, platform, o.Hostname, func(n *nodes.Node) error {
		gone, err := zonesToRemove(n.Zones, want, o.Recursive)
		if err != nil {
			return fmt.Errorf("node %s: %w", n, err)
		}
		removed = gone
		if len(gone) > 0 {
			kept := slices.DeleteFunc(slices.Clone(n.Zones), func(z string) bool { return slices.Contains(gone, z) })
			n.K8sLabels = zoneLabels(n.K8sLabels, n.Zones, kept)
			n.Zones = kept
		}
		return nil
	})
	if err != nil {
		return DeallocateResult{}, err
	}
	if len(removed) > 0 {
		p.log.Info("zones deallocated", "node", n.String(), "removed", removed)
	}
	return DeallocateResult{Hostname: n.Hostname, Platform: platform, Removed: nonNil(removed), Zones: nonNil(n.Zones), Modified: len(removed) > 0}, nil
}

// zonesToRemove returns the zones of have that want takes: each zone
// itself, and with recursive the zones below it, sorted.
func zonesToRemove(have, want []string, recursive bool) ([]string, error) {
	var gone []string
	for _, w := range want {
		found := false
		for _, h := range have {
			if h == w || (recursive && zones.Contains(w, h)) {
				gone = append(gone, h)
				found = true
			}
		}
		if !found {
			below := !recursive && slices.ContainsFunc(have, func(h string) bool { return zones.Contains(w, h) })
			return nil, &ZoneNotHeldError{Zone: w, Held: slices.Clone(have), Below: below}
		}
	}
	slices.Sort(gone)
	return slices.Compact(gone), nil
}

// ZoneNotHeldError is [Project.Deallocate]'s refusal of a zone the node
// does not hold. It wraps [zones.ErrNotAllocated].
type ZoneNotHeldError struct {
	// Zone is the zone asked for, normalised.
	Zone string
	// Held are the node's zones.
	Held []string
	// Below reports that the node holds zones below Zone, which a
	// recursive deallocate ([DeallocateOptions.Recursive]) would remove.
	Below bool
}

// Error says which zone the node does not hold and which it has.
func (e *ZoneNotHeldError) Error() string {
	held := "it has no zones"
	if len(e.Held) > 0 {
		held = "it has " + strings.Join(e.Held, ", ")
	}
	if e.Below {
		return fmt.Sprintf("zone %q is not allocated to the node itself, only zones below it (%s)", e.Zone, held)
	}
	return fmt.Sprintf("zone %q is not allocated to the node (%s)", e.Zone, held)
}

// Unwrap returns [zones.ErrNotAllocated].
func (e *ZoneNotHeldError) Unwrap() error { return zones.ErrNotAllocated }
