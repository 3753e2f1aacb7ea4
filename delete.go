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
	// Force skips the typed "yes" confirmation, asked as
	// [Project.Destroy] asks, whether a server is destroyed or only the
	// node file goes.
	Force bool
	// DryRun stops at the plan: OnPlan is given it, nothing is asked,
	// run or changed, and DeleteResult.Plan holds it.
	DryRun bool
	// Prompter asks for confirmation; nil without Force (or DryRun)
	// refuses, before anything is read from a provider, with
	// [ErrNoPrompter].
	Prompter Prompter
	// OnPlan, when set, is given what is about to go before Prompter
	// asks, as [DestroyOptions.OnPlan].
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
	// Plan is what goes, for people and programs.
	Plan Plan
}

// Delete removes one node. When it has a server of one of the
// platform's pools, the server is adopted and destroyed through tofu
// (withdrawn for a [providers.Direct] provider) after a typed "yes"
// unless Force, exactly as [Project.Destroy] does for the whole platform,
// and the pool's count in platform.yaml is lowered by one so that a later
// provision does not make it again. Then the node file goes. A node
// without a server and a node of a manual platform only lose their file;
// under KeepServer the server stays and its pool's count is lowered.
// Either way the typed "yes" is asked first, unless Force.
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
	if err := canAsk(o.Prompter, o.Force || o.DryRun, "delete"); err != nil {
		return res, err
	}
	res.ServerID = n.ProviderMetadata.ServerID
	if res.ServerID == "" || isManual(plat) || o.KeepServer {
		return res, p.deleteFile(ctx, o, plat, &res)
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
	do := o.destroyOptions(res.Platform)
	in := providers.Input{Platform: plat, Pools: pools, Existing: existing, ImportOnly: true}
	hosts := []string{o.Hostname}
	var dr DestroyResult
	if d, ok := prov.(providers.Direct); ok {
		var at providers.Location
		if at, err = p.Provisioner(plat, o.ProvisionerDir); err != nil {
			return res, err
		}
		dr, err = p.withdraw(ctx, do, d, providers.DirectInput{Input: in, Location: at, Logger: p.log}, hosts, DestroyResult{})
	} else {
		dr, err = p.destroyServers(ctx, do, prov, in, hosts, DestroyResult{})
	}
	res.Plan = dr.Plan
	res.Plan.Changes = append([]PlanChange{lowerPool(plat, res.Pool)}, res.Plan.Changes...)
	if err != nil || dr.Declined || o.DryRun {
		res.Declined = dr.Declined
		return res, err
	}
	_, res.Withdrawn = prov.(providers.Direct)
	res.Destroyed = dr.Destroyed
	if err := p.lowerCount(ctx, res.Platform, res.Pool); err != nil {
		return res, err
	}
	res.Plan.Applied = true
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

// destroyOptions are the options of the destroy of the node's server
// on platform.
func (o DeleteOptions) destroyOptions(platform string) DestroyOptions {
	return DestroyOptions{Platform: platform, Force: o.Force, DryRun: o.DryRun, Prompter: o.Prompter, OnPlan: o.OnPlan,
		TofuOptions: o.TofuOptions, ProvisionerDir: o.ProvisionerDir, KeepNodes: true, op: OpDelete}
}

// deleteFile is Delete of a node whose server, if it has one, stays: a
// manual platform's, one without a server id, or under KeepServer. After
// the typed "yes" (unless Force), the pool of a kept server counts one
// fewer (when its server is one of a pool's slots: the server stays,
// outside the inventory, and the next provision must not make a second
// one under the same hostname), and the node file goes.
func (p *Project) deleteFile(ctx context.Context, o DeleteOptions, plat *nodes.Platform, res *DeleteResult) error {
	action := DestroyForget
	if isManual(plat) {
		action = DestroyNodeFiles
	} else if res.ServerID != "" {
		ns, err := p.Store.Nodes(ctx, res.Platform)
		if err != nil {
			return err
		}
		for _, e := range adopt(res.Platform, maps.Clone(plat.Pools), ns) {
			if e.ServerID == res.ServerID {
				res.Pool = e.Pool
			}
		}
	}
	var dr DestroyResult
	ok, err := o.destroyOptions(res.Platform).confirm(ctx, plat, DestroyPlan{Platform: res.Platform, Action: action, Nodes: []string{res.Hostname}}, nil, &dr)
	res.Plan, res.Declined = dr.Plan, dr.Declined
	if res.Pool != "" {
		res.Plan.Changes = append([]PlanChange{lowerPool(plat, res.Pool)}, res.Plan.Changes...)
	}
	if err != nil || !ok {
		return err
	}
	if res.Pool != "" {
		if err := p.lowerCount(ctx, res.Platform, res.Pool); err != nil {
			return err
		}
	}
	res.Plan.Applied = true
	return p.forget(ctx, res)
}
