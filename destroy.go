package plasmanode

import (
	"context"
	"fmt"
	"maps"

	"github.com/plasmactl/plasma-node/nodes"
	"github.com/plasmactl/plasma-node/providers"
	"github.com/plasmactl/plasma-node/tofu"
)

// DestroyOptions describe a destroy run.
type DestroyOptions struct {
	// Platform whose servers are destroyed. Required; it must exist.
	Platform string
	// Force skips the typed "yes" confirmation.
	Force bool
	// DryRun stops at the plan: OnPlan is given it, nothing is asked,
	// run or changed, and DestroyResult.Plan holds it. tofu does not
	// run: the servers are named from the node files.
	DryRun bool
	// KeepNodes keeps the node files of the destroyed servers.
	KeepNodes bool
	// Prompter asks for confirmation; nil without Force refuses, before
	// tofu runs, with [ErrNoPrompter].
	Prompter Prompter
	// OnPlan, when set, is given what is about to go before Prompter
	// asks (and before anything goes under Force), for a front end to
	// show it. It is not called when there is nothing to destroy.
	OnPlan func(DestroyPlan)
	// TofuOptions say which tofu runs, with what environment and where
	// its output goes.
	TofuOptions
	// ProvisionerDir is node-provisioner's state folder of a pxe
	// platform. Empty: [Project.ProvisionerDir]'s choice.
	ProvisionerDir string
	// op is the operation for the plan document: destroy, or delete
	// when [Project.Delete] destroys one server.
	op Operation
}

// DestroyResult is what a destroy run did.
type DestroyResult struct {
	// Summary is the classified destroy plan (empty for manual and pxe).
	Summary tofu.Summary
	// Plan is what goes, for people and programs; its Applied, Declined
	// and DryRun say what became of it. Empty when nothing was to go.
	Plan Plan
	// Destroyed reports whether servers were destroyed.
	Destroyed bool
	// Declined reports that the person declined.
	Declined bool
	// Removed are the hostnames whose node files were removed.
	Removed []string
	// Skipped are nodes with a server id that belong to no pool: neither
	// destroyed nor removed.
	Skipped []string
}

// DestroyAction says what [Project.Destroy] does to the nodes of a
// [DestroyPlan].
type DestroyAction string

// The actions of a [DestroyPlan].
const (
	// DestroyNodeFiles: the platform is manual; only its node files go.
	DestroyNodeFiles DestroyAction = "node files"
	// DestroyWithdraw: the provider makes its servers itself
	// ([providers.Direct], pxe); they are withdrawn: pending
	// registrations are removed, installed machines are not wiped.
	DestroyWithdraw DestroyAction = "withdraw"
	// DestroyServers: the servers are adopted and destroyed by tofu.
	DestroyServers DestroyAction = "destroy"
	// DestroyForget: only the node files go; no server is destroyed
	// ([Project.Delete] of a node without a server, or keeping it).
	DestroyForget DestroyAction = "forget"
)

// DestroyPlan is what [Project.Destroy] is about to do, given to
// DestroyOptions.OnPlan before it asks for confirmation.
type DestroyPlan struct {
	// Platform is the platform.
	Platform string
	// Action says what becomes of the nodes.
	Action DestroyAction
	// Nodes are the hostnames of the nodes whose servers go (for
	// [DestroyNodeFiles], whose files go).
	Nodes []string
	// Servers are the servers tofu adopted to destroy, with their
	// Address and ImportID; for [DestroyServers] only.
	Servers []tofu.Change
}

// PromptDestroy is the question destroy asks.
const PromptDestroy = `Destroy these servers? Type "yes" to confirm, anything else to abort: `

// Destroy destroys the platform's servers: every node with a server id
// in one of the platform's pools is adopted with an import block, then
// destroyed, after a typed "yes" unless Force; then its node file is
// removed unless KeepNodes. For a manual platform it only removes node
// files. A run already in progress for the platform makes it fail at
// once.
//
// For a [providers.Direct] provider (pxe) the servers are withdrawn
// from the provider (pending registrations removed) instead.
//
// Errors: [nodes.ErrLocked], [ErrNoPrompter], [ErrProvisionerUnreachable]
// (pxe registrations that cannot be read where the platform keeps
// them; nothing changed), and those of tofu.
func (p *Project) Destroy(ctx context.Context, o DestroyOptions) (DestroyResult, error) {
	var res DestroyResult
	plat, unlock, err := p.openPlatform(ctx, o.Platform, "destroy", false)
	if err != nil {
		return res, err
	}
	defer unlock()
	ns, err := p.Store.Nodes(ctx, o.Platform)
	if err != nil {
		return res, err
	}
	// Nothing to go until a plan says otherwise.
	res.Plan = newPlan(OpDestroy, plat, SourceFiles)
	res.Plan.DryRun = o.DryRun
	if isManual(plat) {
		return p.destroyNodeFiles(ctx, o, plat, ns, res)
	}
	prov, err := p.provider(plat, "destroy")
	if err != nil {
		return res, err
	}
	pools := maps.Clone(plat.Pools)
	existing := adopt(o.Platform, pools, ns)
	hosts := p.adoptedHosts(ns, existing, &res)
	if len(existing) == 0 {
		return res, nil
	}
	in := providers.Input{Platform: plat, Pools: pools, Existing: existing, ImportOnly: true}
	if d, ok := prov.(providers.Direct); ok {
		at, err := p.Provisioner(plat, o.ProvisionerDir)
		if err != nil {
			return res, err
		}
		din := providers.DirectInput{Input: in, Location: at, Logger: p.log}
		return p.withdraw(ctx, o, d, din, hosts, res)
	}
	return p.destroyServers(ctx, o, prov, in, hosts, res)
}

// isManual reports whether plat's servers are made by hand.
func isManual(plat *nodes.Platform) bool {
	m := plat.Infrastructure.MetalProvider
	return m == "manual" || m == ""
}

// adoptedHosts returns the hostnames of the nodes of ns whose servers are
// adopted (in existing); the nodes with a server id of no pool go to
// res.Skipped.
func (p *Project) adoptedHosts(ns []*nodes.Node, existing []providers.Existing, res *DestroyResult) []string {
	adopted := map[string]bool{}
	for _, e := range existing {
		adopted[e.ServerID] = true
	}
	var hosts []string
	for _, n := range ns {
		switch id := n.ProviderMetadata.ServerID; {
		case id == "":
		case adopted[id]:
			hosts = append(hosts, n.Hostname)
		default:
			res.Skipped = append(res.Skipped, n.Hostname)
			p.log.Warn("node has a server id but its zones match no pool: not destroyed", "node", n.Hostname, "server_id", id)
		}
	}
	return hosts
}

// confirm puts plan into res.Plan and reports it to OnPlan, then asks
// for a typed "yes" unless Force; a dry run stops there, not
// confirmed. existing are the servers adopted, naming their nodes.
func (o DestroyOptions) confirm(ctx context.Context, plat *nodes.Platform, plan DestroyPlan, existing []providers.Existing, res *DestroyResult) (bool, error) {
	res.Plan = plan.document(o, plat, existing)
	if o.OnPlan != nil {
		o.OnPlan(plan)
	}
	if o.DryRun {
		return false, nil
	}
	if o.Force {
		return true, nil
	}
	ok, err := ask(ctx, o.Prompter, PromptDestroy, "yes")
	res.Declined = err == nil && !ok
	res.Plan.Declined = res.Declined
	return ok, err
}

// destroyNodeFiles is Destroy of a manual platform: its node files go.
func (p *Project) destroyNodeFiles(ctx context.Context, o DestroyOptions, plat *nodes.Platform, ns []*nodes.Node, res DestroyResult) (DestroyResult, error) {
	if o.KeepNodes || len(ns) == 0 {
		return res, nil
	}
	var names []string
	for _, n := range ns {
		names = append(names, n.Hostname)
	}
	ok, err := o.confirm(ctx, plat, DestroyPlan{Platform: o.Platform, Action: DestroyNodeFiles, Nodes: names}, nil, &res)
	if err != nil || !ok {
		return res, err
	}
	res.Plan.Applied = true
	return res, p.removeNodes(ctx, o.Platform, names, &res)
}

// withdraw is Destroy for a [providers.Direct] provider.
func (p *Project) withdraw(ctx context.Context, o DestroyOptions, d providers.Direct, in providers.DirectInput, hosts []string, res DestroyResult) (DestroyResult, error) {
	if err := reachable(ctx, o.Platform, d, in.Location, hosts); err != nil {
		return res, err
	}
	ok, err := o.confirm(ctx, in.Platform, DestroyPlan{Platform: o.Platform, Action: DestroyWithdraw, Nodes: hosts}, in.Existing, &res)
	if err != nil || !ok {
		return res, err
	}
	if _, err := d.Remove(ctx, in); err != nil {
		return res, fmt.Errorf("withdraw servers of platform %s: %w", o.Platform, err)
	}
	res.Destroyed, res.Plan.Applied = true, true
	if o.KeepNodes {
		return res, nil
	}
	return res, p.removeNodes(ctx, o.Platform, hosts, &res)
}

// destroyServers is Destroy through tofu: an import-only plan adopts the
// servers of in, confirmed, then a destroy plan removes them.
func (p *Project) destroyServers(ctx context.Context, o DestroyOptions, prov providers.Provider, in providers.Input, hosts []string, res DestroyResult) (DestroyResult, error) {
	if err := canAsk(o.Prompter, o.Force || o.DryRun, "destroy"); err != nil {
		return res, err
	}
	cfg, err := prov.Configure(in)
	if err != nil {
		return res, fmt.Errorf("configure %s: %w", prov.Name(), err)
	}
	if o.DryRun {
		var servers []tofu.Change
		for _, im := range cfg.Imports {
			servers = append(servers, tofu.Change{Address: im.To, ImportID: im.ID})
		}
		_, err := o.confirm(ctx, in.Platform, DestroyPlan{Platform: o.Platform, Action: DestroyServers, Nodes: hosts, Servers: servers}, in.Existing, &res)
		return res, err
	}
	run, err := p.startTofu(ctx, in.Platform, prov, o.TofuOptions)
	if err != nil {
		return res, err
	}
	defer run.close()
	sp, sum, err := run.plan(ctx, cfg, tofu.PlanOptions{})
	if err != nil {
		return res, err
	}
	if len(sum.Creates)+len(sum.Deletes)+len(sum.Replacements) > 0 {
		return res, fmt.Errorf("adopt servers of platform %s: import plan is not import only (%s): %w", o.Platform, sum, ErrDestructivePlan)
	}
	ok, err := o.confirm(ctx, in.Platform, DestroyPlan{Platform: o.Platform, Action: DestroyServers, Nodes: hosts, Servers: sum.Imports}, in.Existing, &res)
	if err != nil || !ok {
		return res, err
	}
	if err := run.r.Apply(ctx, sp); err != nil {
		return res, fmt.Errorf("adopt servers of platform %s: %w", o.Platform, err)
	}
	sp, sum, err = run.plan(ctx, nil, tofu.PlanOptions{Destroy: true})
	if err != nil {
		return res, err
	}
	res.Summary = sum
	if err := run.r.Apply(ctx, sp); err != nil {
		return res, fmt.Errorf("destroy servers of platform %s: %w", o.Platform, err)
	}
	res.Destroyed, res.Plan.Applied = true, true
	if o.KeepNodes {
		return res, nil
	}
	return res, p.removeNodes(ctx, o.Platform, hosts, &res)
}

func (p *Project) removeNodes(ctx context.Context, platform string, hosts []string, res *DestroyResult) error {
	for _, h := range hosts {
		if err := p.Store.DeleteNode(ctx, platform, h); err != nil {
			return fmt.Errorf("remove node file of %s: %w", h, err)
		}
		res.Removed = append(res.Removed, h)
	}
	return nil
}
