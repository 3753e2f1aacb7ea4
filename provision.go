package plasmanode

import (
	"context"
	"errors"
	"fmt"
	"github.com/plasmactl/plasma-node/ipam"
	"maps"
	"net/netip"
	"time"

	"github.com/plasmactl/plasma-node/nodes"
	"github.com/plasmactl/plasma-node/providers"
	"github.com/plasmactl/plasma-node/tofu"
)

// ErrNoPools: provision got no specs and the platform has no pools.
var ErrNoPools = errors.New("no pools configured")

// ProvisionOptions describe a provision run.
type ProvisionOptions struct {
	// Platform to provision. Required; it must exist.
	Platform string
	// Specs are zone:type:count specs; each becomes (or updates) a pool.
	// None means the platform's pools as they are.
	Specs []string
	// DryRun stops after the plan: nothing is written, nothing applied.
	// Without the provider's credentials (or the state backend's, or
	// tofu) the plan is derived offline from the pools and the node
	// files ([SourceOffline]), with no tofu run and no network.
	DryRun bool
	// AutoApprove applies a plan that destroys nothing without asking.
	AutoApprove bool
	// AllowDestructive lets AutoApprove apply destructive updates.
	AllowDestructive bool
	// AllowDelete lets AutoApprove delete the servers a lowered count
	// leaves out. Without AutoApprove those deletes need a typed "yes";
	// AutoApprove alone never deletes a server.
	AllowDelete bool
	// Prompter asks for confirmation; nil with no AutoApprove (and no
	// DryRun) refuses at once, before tofu runs, with [ErrNoPrompter].
	Prompter Prompter
	// OnPlan, when set, is given the classified plan before it is
	// confirmed or applied (on a dry run too), for a front end to show
	// it before Prompter asks. An offline plan (a dry run without
	// credentials or tofu) is not given to it: it is only
	// ProvisionResult.Plan.
	OnPlan func(tofu.Summary)
	// TofuOptions say which tofu runs, with what environment and where
	// its output goes.
	TofuOptions
	// ProvisionerDir is node-provisioner's state folder, where a pxe
	// platform's registrations go. Empty: [Project.ProvisionerDir]'s choice.
	ProvisionerDir string
	// HardwareFile lists the bare-metal machines new servers of a pxe
	// platform are taken from (format: providers/pxe.ParseHardware).
	HardwareFile string
	// Boot starts the servers this run creates once they are registered
	// (pxe: a one-time PXE boot and power on through each machine's BMC).
	// Only a [providers.Starter] can; others fail with [ErrCannotStart].
	Boot bool
	// Wait, with Boot, follows the started servers until each is ready
	// (pxe: installed), one cannot be started, WaitTimeout passes or ctx
	// ends; anything short of all ready is a [*NotReadyError]. The
	// ready servers' node files then get what their installers reported
	// (ProvisionResult.Refreshed, [Project.Refresh]).
	Wait bool
	// WaitTimeout bounds Wait. Default: [DefaultWaitTimeout].
	WaitTimeout time.Duration
	// OnProgress, when set, is given each step of each started server as
	// it happens, for a front end to show.
	OnProgress func(providers.Progress)
}

// ProvisionResult is what a provision run did.
type ProvisionResult struct {
	// Summary is the classified plan; empty for an offline plan.
	Summary tofu.Summary
	// Plan is the plan for people and programs: tofu's classified plan,
	// a [providers.Direct] provider's, or on a dry run without the
	// provider's credentials or tofu, the offline plan derived from the
	// files ([SourceOffline]).
	Plan Plan
	// Pools are the pools the run configured.
	Pools map[string]nodes.Pool
	// Applied reports whether the plan was applied.
	Applied bool
	// Declined reports that the person declined the plan.
	Declined bool
	// Nodes are the node files written, sorted by hostname.
	Nodes []*nodes.Node
	// Removed are the hostnames whose servers a lowered count deleted and
	// whose node files were removed, sorted.
	Removed []string
	// Started are the servers Boot started; Ready those of them that
	// became ready (with Wait), each in hostname order.
	Started, Ready []string
	// Refreshed are the installed nodes whose files Wait refreshed
	// with what their installers reported ([Project.Refresh]).
	Refreshed []Refreshed
}

// Provision makes the platform's servers match its pools, after
// turning Specs into pools: existing nodes are adopted by server id, the
// plan is classified and confirmed ([Gate]), applied, and each server
// becomes a node file. With the default local backend state is
// transient: it is removed after the run, node files being the truth;
// with infrastructure.state backend pg or s3 it is kept there, under
// tofu's own lock (credentials from PG_CONN_STR or AWS_* only). A run already in progress for the platform
// makes it fail at once (an error wrapping [nodes.ErrLocked] naming the
// holder).
//
// A [providers.Direct] provider (pxe) is planned and applied by itself
// instead of by tofu, through the same gate: for pxe every new server is
// a machine of the hardware lists registered with node-provisioner in
// ProvisionerDir, then a node file.
//
// Errors: [zones.ErrInvalidSpec] (nothing written), [ErrNoPools],
// [providers.ErrNoInfrastructure] for manual, [ErrDestructivePlan],
// [ErrNoPrompter], [nodes.ErrLocked], and those of tofu; with Boot,
// [ErrCannotStart] and [*NotReadyError].
//
// With Boot the servers this run created are started once written, and
// with Wait followed, after the platform's lock is released (a wait of
// 45 minutes blocks no other command).
func (p *Project) Provision(ctx context.Context, o ProvisionOptions) (ProvisionResult, error) {
	var start func(*ProvisionResult) error
	res, err := p.provision(ctx, o, &start)
	if err != nil || start == nil {
		return res, err
	}
	return res, start(&res)
}

// provision is [Provision] under the platform's lock; a Direct
// provider's start is left in *start, to run once the lock is released.
func (p *Project) provision(ctx context.Context, o ProvisionOptions, start *func(*ProvisionResult) error) (ProvisionResult, error) {
	var res ProvisionResult
	specPools, err := p.specPools(o.Specs)
	if err != nil {
		return res, err
	}
	plat, unlock, err := p.openPlatform(ctx, o.Platform, "provision", false)
	if err != nil {
		return res, err
	}
	defer unlock()
	pools, err := mergePools(o.Platform, plat.Pools, specPools)
	if err != nil {
		return res, err
	}
	res.Pools = pools
	existingNodes, err := p.Store.Nodes(ctx, o.Platform)
	if err != nil {
		return res, err
	}
	if err := checkAddresses(plat, pools, existingNodes); err != nil {
		return res, err
	}
	cplat := *plat
	cplat.Pools = pools
	in := providers.Input{Platform: &cplat, Pools: pools, Existing: adopt(o.Platform, pools, existingNodes)}
	prov, err := p.provider(plat, "provision")
	if err != nil && o.DryRun && isManual(plat) {
		return p.offline(o, in, plat, existingNodes, res, "provider manual makes no servers, so provision refuses: each server is made and registered as a node by hand", false)
	}
	if err != nil {
		return res, err
	}
	if _, ok := prov.(providers.Starter); o.Boot && !ok {
		return res, fmt.Errorf("platform %s: provider %s: %w: only bare-metal (pxe) machines are booted through their BMCs", o.Platform, prov.Name(), ErrCannotStart)
	}
	if d, ok := prov.(providers.Direct); ok {
		at, err := p.Provisioner(plat, o.ProvisionerDir)
		if err != nil && o.DryRun && errors.Is(err, providers.ErrNoCredentials) {
			return p.offline(o, in, plat, existingNodes, res, fmt.Sprintf("the provider's own plan needs its credentials (%v)", err), false)
		}
		if err != nil {
			return res, err
		}
		din := providers.DirectInput{Input: in, Location: at, HardwareFile: o.HardwareFile, Logger: p.log, Allocate: allocator(plat, existingNodes)}
		res, err = p.provisionDirect(ctx, o, d, din, plat, existingNodes, res)
		if err == nil && o.Boot && res.Applied {
			made := res.Nodes
			*start = func(r *ProvisionResult) error { return p.start(ctx, o, d, at, existingNodes, made, r) }
		}
		return res, err
	}
	return p.provisionTofu(ctx, o, prov, in, plat, existingNodes, res)
}

// mergePools returns the platform's pools with those of the specs over
// them; a spec's pool keeps the address pool and hardware of the pool it
// replaces.
//
// Errors: [ErrNoPools] when there is none.
func mergePools(platform string, current, specPools map[string]nodes.Pool) (map[string]nodes.Pool, error) {
	pools := maps.Clone(current)
	if pools == nil {
		pools = map[string]nodes.Pool{}
	}
	for name, sp := range specPools {
		if old, ok := pools[name]; ok {
			sp.IPPool = old.IPPool
			sp.Hardware = old.Hardware
		}
		pools[name] = sp
	}
	if len(pools) == 0 {
		return nil, fmt.Errorf("platform %s: %w: give zone:type:count specs, or pools in platform.yaml", platform, ErrNoPools)
	}
	return pools, nil
}

// provisionTofu is Provision through tofu: the surplus servers of a
// lowered count are adopted into state, the configuration is planned,
// confirmed and applied, the servers' node files are written and those
// of the deleted surplus servers removed.
func (p *Project) provisionTofu(ctx context.Context, o ProvisionOptions, prov providers.Provider, in providers.Input,
	plat *nodes.Platform, existingNodes []*nodes.Node, res ProvisionResult) (ProvisionResult, error) {
	if err := canAsk(o.Prompter, o.AutoApprove || o.DryRun, "provision"); err != nil {
		return res, err
	}
	if o.DryRun {
		why, err := p.offlineReason(ctx, plat, prov, o.TofuOptions)
		if err != nil || why != "" {
			if err == nil {
				res, err = p.offline(o, in, plat, existingNodes, res, why, true)
			}
			return res, err
		}
	}
	cfg, err := prov.Configure(in)
	if err != nil {
		return res, fmt.Errorf("configure %s: %w", prov.Name(), err)
	}
	run, err := p.startTofu(ctx, plat, prov, o.TofuOptions)
	if err != nil {
		return res, err
	}
	defer run.close()
	surplus := providers.Surplus(in)
	deletes, missing, err := run.adoptSurplus(ctx, in.Platform, in.Pools, surplus, o.DryRun)
	if err != nil {
		return res, err
	}
	sp, sum, err := run.plan(ctx, cfg, tofu.PlanOptions{})
	if err != nil {
		return res, err
	}
	// A dry run against a persistent backend does not record the surplus
	// servers in state: their deletes are listed from the node files.
	sum.Deletes = append(sum.Deletes, missing...)
	res.Plan = provisionPlan(SourceTofu, sum, in, plat.Pools, existingNodes, o.DryRun)
	if ok, err := o.confirm(ctx, sum, run.statePath(), deletes, &res); !ok || err != nil {
		return res, err
	}
	if err := p.savePools(ctx, o.Platform, plat, in.Pools); err != nil {
		return res, err
	}
	if err := run.r.Apply(ctx, sp); err != nil {
		return res, fmt.Errorf("apply plan of platform %s: %w", o.Platform, err)
	}
	res.Applied, res.Plan.Applied = true, true
	servers, err := run.servers(ctx)
	if err != nil {
		return res, err
	}
	if res.Nodes, err = p.writeServers(ctx, plat, prov.Name(), servers, existingNodes); err != nil {
		return res, err
	}
	res.Removed, err = p.removeSurplus(ctx, o.Platform, surplus, existingNodes)
	return res, err
}

// confirm gives sum to OnPlan and reports whether to apply it: not on a
// dry run, at once when it changes nothing, else as [Gate] decides (a
// decline sets res.Declined). deletes are the addresses planned to be
// deleted on purpose.
func (o ProvisionOptions) confirm(ctx context.Context, sum tofu.Summary, statePath string, deletes []string, res *ProvisionResult) (bool, error) {
	res.Summary = sum
	if o.OnPlan != nil {
		o.OnPlan(sum)
	}
	if o.DryRun {
		return false, nil
	}
	if sum.Empty() {
		return true, nil
	}
	ok, err := Gate(ctx, sum, GateOptions{Command: "provision", AutoApprove: o.AutoApprove, AllowDestructive: o.AllowDestructive,
		Prompter: o.Prompter, StatePath: statePath, Deletes: deletes, AllowDelete: o.AllowDelete})
	res.Declined = err == nil && !ok
	res.Plan.Declined = res.Declined
	return ok, err
}

// savePools writes pools into the platform's platform.yaml, and into
// plat, when they differ from plat's.
func (p *Project) savePools(ctx context.Context, platform string, plat *nodes.Platform, pools map[string]nodes.Pool) error {
	if maps.EqualFunc(plat.Pools, pools, poolEqual) {
		return nil
	}
	if _, err := p.Store.UpdatePlatform(ctx, platform, func(pl *nodes.Platform) error {
		pl.Pools = pools
		return nil
	}); err != nil {
		return fmt.Errorf("write pools: %w", err)
	}
	plat.Pools = pools
	return nil
}

// allocator hands out the private addresses of a platform's ip pools that
// none of its nodes ns uses, each once.
func allocator(plat *nodes.Platform, ns []*nodes.Node) func(string) (netip.Addr, error) {
	used := usedPrivateIPs(ns)
	return func(name string) (netip.Addr, error) {
		ipp, err := poolFor(plat, name)
		if err != nil {
			return netip.Addr{}, err
		}
		got, err := ipp.Allocate(used, 1)
		if err != nil {
			return netip.Addr{}, fmt.Errorf("platform %s: %w", plat.Name, err)
		}
		used.Add(got[0])
		return got[0], nil
	}
}

// checkAddresses refuses pools whose new servers the platform's private
// address pools cannot number, before anything is planned or written:
// each machine pool's servers beyond those it has take one address of
// its ip pool.
func checkAddresses(plat *nodes.Platform, pools map[string]nodes.Pool, existing []*nodes.Node) error {
	have := map[string]int{} // machine pool -> nodes it has
	for _, e := range adopt(plat.Name, maps.Clone(pools), existing) {
		have[e.Pool]++
	}
	need := map[string]int{} // ip pool -> new addresses
	for name, pl := range pools {
		if n := pl.Count - have[name]; n > 0 {
			need[pl.IPPool] += n
		}
	}
	used := usedPrivateIPs(existing)
	for ipName, n := range need {
		ipp, err := poolFor(plat, ipName)
		if err != nil {
			return err
		}
		if n > ipam.MaxAllocate {
			return fmt.Errorf("platform %s: %d new servers need %d private addresses of %s: %w", plat.Name, n, n, ipp, ipam.ErrExhausted)
		}
		if _, err := ipp.Allocate(used, n); err != nil {
			return fmt.Errorf("platform %s: %d new servers need as many private addresses: %w", plat.Name, n, err)
		}
	}
	return nil
}
