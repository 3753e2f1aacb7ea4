package plasmanode

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/plasmactl/plasma-node/nodes"
	"github.com/plasmactl/plasma-node/providers"
)

// ErrNoPool: a node has a server id but its zones match none of the
// platform's pools, so its server cannot be adopted to be destroyed.
var ErrNoPool = errors.New("the node's zones match no pool")

// DeleteOptions describe the removal of one node.
type DeleteOptions struct {
	// Hostname of the node. Required.
	Hostname string
	// Platform holding the node. Default: the one platform that has a
	// node of that name.
	Platform string
	// KeepServer only forgets the node: its file goes and its pool's
	// count is lowered by one, its server stays as it is, untouched.
	KeepServer bool
	// Force skips the typed "yes" confirmation before a server is
	// destroyed.
	Force bool
	// Prompter asks for confirmation; nil without Force refuses, before
	// tofu runs, with [ErrNoPrompter]. Removing a node without a server
	// asks nothing.
	Prompter Prompter
	// OnPlan, when set, is given what is about to go before Prompter
	// asks, as [DestroyOptions.OnPlan]; not called when only the node
	// file goes.
	OnPlan func(DestroyPlan)
	// TofuOptions say which tofu runs, with what environment and where
	// its output goes.
	TofuOptions
	// ProvisionerDir is node-provisioner's state folder of a pxe
	// platform. Empty: [Project.ProvisionerDir]'s choice.
	ProvisionerDir string
}

// DeleteResult is what [Project.Delete] did.
type DeleteResult struct {
	// Hostname and Platform name the node.
	Hostname, Platform string
	// ServerID is the node's server id; empty for a node without one.
	ServerID string
	// Destroyed reports that its server was destroyed, or for a
	// [providers.Direct] provider withdrawn (then Withdrawn is set too).
	Destroyed, Withdrawn bool
	// Declined reports that the person declined; nothing changed.
	Declined bool
	// Removed reports that the node file was removed.
	Removed bool
	// Pool is the pool whose count was lowered by one; empty when none
	// was.
	Pool string
}

// Delete removes one node. When it has a server of one of the
// platform's pools, the server is adopted and destroyed through tofu
// (withdrawn for a [providers.Direct] provider) after a typed "yes"
// unless Force, exactly as [Project.Destroy] does for the whole platform,
// and the pool's count in platform.yaml is lowered by one so that a later
// provision does not make it again. Then the node file goes. A node
// without a server and a node of a manual platform only lose their file;
// under KeepServer the server stays and its pool's count is lowered.
//
// Errors: [nodes.ErrNodeNotFound] and [nodes.ErrAmbiguousNode] (through
// the store), [nodes.ErrLocked], [ErrNoPrompter], [ErrNoPool], and those
// of tofu.
func (p *Project) Delete(ctx context.Context, o DeleteOptions) (DeleteResult, error) {
	res := DeleteResult{Hostname: o.Hostname, Platform: o.Platform}
	var err error
	if res.Platform, err = p.platformOf(ctx, o.Platform, o.Hostname); err != nil {
		return res, err
	}
	// Unknown keys are refused below, once a server is to be deleted:
	// forgetting a node or keeping its server does not.
	plat, unlock, err := p.lockPlatform(ctx, res.Platform, "delete", false)
	if err != nil {
		return res, err
	}
	defer unlock()
	n, err := p.Store.Node(ctx, res.Platform, o.Hostname)
	if err != nil {
		return res, err
	}
	res.ServerID = n.ProviderMetadata.ServerID
	if res.ServerID == "" || isManual(plat) {
		return res, p.forget(ctx, &res)
	}
	if o.KeepServer {
		// The server stays, outside the inventory: the pool counts one
		// server fewer, or the next provision would make a second one
		// under the same hostname.
		return res, p.keepServer(ctx, plat, &res)
	}
	if err := refuseUnknownKeys(plat); err != nil {
		return res, err
	}
	prov, err := p.provider(plat, "delete")
	if err != nil {
		return res, err
	}
	ns, err := p.Store.Nodes(ctx, res.Platform)
	if err != nil {
		return res, err
	}
	// The slots are laid out over all nodes, as provision lays them out,
	// and only this node's server is kept.
	pools := maps.Clone(plat.Pools)
	var existing []providers.Existing
	for _, e := range adopt(res.Platform, pools, ns) {
		if e.ServerID == res.ServerID {
			existing = append(existing, e)
			res.Pool = e.Pool
		}
	}
	if len(existing) == 0 {
		return res, fmt.Errorf("delete node %s@%s with server %s: %w (pools: %v)", o.Hostname, res.Platform, res.ServerID, ErrNoPool, poolNames(pools))
	}
	do := DestroyOptions{Platform: res.Platform, Force: o.Force, Prompter: o.Prompter, OnPlan: o.OnPlan,
		TofuOptions: o.TofuOptions, ProvisionerDir: o.ProvisionerDir, KeepNodes: true}
	in := providers.Input{Platform: plat, Pools: pools, Existing: existing, ImportOnly: true}
	hosts := []string{o.Hostname}
	var dr DestroyResult
	if d, ok := prov.(providers.Direct); ok {
		at, err := p.Provisioner(plat, o.ProvisionerDir)
		if err != nil {
			return res, err
		}
		dr, err = p.withdraw(ctx, do, d, providers.DirectInput{Input: in, Location: at, Logger: p.log}, hosts, DestroyResult{})
		if err != nil || dr.Declined {
			res.Declined = dr.Declined
			return res, err
		}
		res.Withdrawn = true
	} else {
		dr, err = p.destroyServers(ctx, do, prov, in, hosts, DestroyResult{})
		if err != nil || dr.Declined {
			res.Declined = dr.Declined
			return res, err
		}
	}
	res.Destroyed = dr.Destroyed
	if err := p.lowerCount(ctx, res.Platform, res.Pool); err != nil {
		return res, err
	}
	p.log.Info("server deleted", "node", o.Hostname, "platform", res.Platform, "server_id", res.ServerID, "pool", res.Pool)
	return res, p.forget(ctx, &res)
}

// forget removes the node file of res.
func (p *Project) forget(ctx context.Context, res *DeleteResult) error {
	if err := p.Store.DeleteNode(ctx, res.Platform, res.Hostname); err != nil {
		return fmt.Errorf("remove node file of %s@%s: %w", res.Hostname, res.Platform, err)
	}
	res.Removed = true
	return nil
}

// lowerCount takes one from the count of pool in platform.yaml, for a
// server deleted from it, as [Project.Join] adds one.
func (p *Project) lowerCount(ctx context.Context, platform, pool string) error {
	if _, err := p.Store.UpdatePlatform(ctx, platform, func(pl *nodes.Platform) error {
		pp, ok := pl.Pools[pool]
		if !ok || pp.Count == 0 {
			return nil
		}
		pp.Count--
		pl.Pools[pool] = pp
		return nil
	}); err != nil {
		return fmt.Errorf("lower the count of pool %s in platform.yaml for the deleted server: %w", pool, err)
	}
	return nil
}

// poolNames returns the names of pools, sorted.
func poolNames(pools map[string]nodes.Pool) []string {
	return slices.Sorted(maps.Keys(pools))
}

// keepServer is Delete under KeepServer of a node with a server: its
// pool's count is lowered by one (when its server is one of a pool's
// slots) and its node file goes.
func (p *Project) keepServer(ctx context.Context, plat *nodes.Platform, res *DeleteResult) error {
	ns, err := p.Store.Nodes(ctx, res.Platform)
	if err != nil {
		return err
	}
	for _, e := range adopt(res.Platform, maps.Clone(plat.Pools), ns) {
		if e.ServerID == res.ServerID {
			res.Pool = e.Pool
		}
	}
	if res.Pool != "" {
		if err := p.lowerCount(ctx, res.Platform, res.Pool); err != nil {
			return err
		}
	}
	return p.forget(ctx, res)
}
