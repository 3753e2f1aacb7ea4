package plasmanode

import (
	"context"
	"fmt"
	"io"
	"maps"
	"strings"

	"github.com/plasmactl/plasma-node/providers"
	"github.com/plasmactl/plasma-node/tofu"
)

// DestroyOptions describe a destroy run.
type DestroyOptions struct {
	// Platform whose servers are destroyed. Required; it must exist.
	Platform string
	// Force skips the typed "yes" confirmation.
	Force bool
	// KeepNodes keeps the node files of the destroyed servers.
	KeepNodes bool
	// Prompter asks for confirmation; nil without Force refuses.
	Prompter Prompter
	// Stdout and Stderr receive tofu's output and the list of what goes;
	// nil discards them.
	Stdout, Stderr io.Writer
	// TofuPath is an explicit tofu or terraform binary.
	TofuPath string
	// Getenv reads credentials from the environment; nil means os.Getenv.
	Getenv func(string) string
	// Env is added to tofu's environment.
	Env map[string]string
	// ProvisionerDir is node-provisioner's state folder of a pxe
	// platform. Empty: [Project.ProvisionerDir]'s choice.
	ProvisionerDir string
}

// DestroyResult is what a destroy run did.
type DestroyResult struct {
	// Summary is the classified destroy plan (empty for manual).
	Summary tofu.Summary
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
// Errors: [nodes.ErrLocked], [ErrNoPrompter], and those of tofu.
func (p *Project) Destroy(ctx context.Context, o DestroyOptions) (DestroyResult, error) {
	var res DestroyResult
	l, err := p.Store.Lock(ctx, o.Platform, "plasma-node destroy", false)
	if err != nil {
		return res, err
	}
	defer l.Unlock()
	plat, err := p.Store.Platform(ctx, o.Platform)
	if err != nil {
		return res, err
	}
	ns, err := p.Store.Nodes(ctx, o.Platform)
	if err != nil {
		return res, err
	}
	gate := GateOptions{Prompter: o.Prompter}
	if m := plat.Infrastructure.MetalProvider; m == "manual" || m == "" {
		if o.KeepNodes || len(ns) == 0 {
			return res, nil
		}
		var names []string
		for _, n := range ns {
			names = append(names, n.Hostname)
		}
		if o.Stdout != nil {
			fmt.Fprintf(o.Stdout, "Platform %s is manual: only its node files go: %s\n", o.Platform, strings.Join(names, ", "))
		}
		if !o.Force {
			ok, err := ask(gate, PromptDestroy, "yes")
			if err != nil || !ok {
				res.Declined = !ok
				return res, err
			}
		}
		return res, p.removeNodes(ctx, o.Platform, names, &res)
	}
	prov, err := p.provider(plat, "destroy")
	if err != nil {
		return res, err
	}
	pools := maps.Clone(plat.Pools)
	existing := adopt(o.Platform, pools, ns)
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
	if len(existing) == 0 {
		if o.Stdout != nil {
			fmt.Fprintf(o.Stdout, "Platform %s has no servers to destroy\n", o.Platform)
		}
		return res, nil
	}
	if d, ok := prov.(providers.Direct); ok {
		if o.Stdout != nil {
			fmt.Fprintf(o.Stdout, "Nodes of platform %s to withdraw (pending registrations are removed; installed machines are not wiped):\n  %s\n",
				o.Platform, strings.Join(hosts, "\n  "))
		}
		if !o.Force {
			ok, err := ask(gate, PromptDestroy, "yes")
			if err != nil || !ok {
				res.Declined = !ok
				return res, err
			}
		}
		in := providers.DirectInput{Input: providers.Input{Platform: plat, Pools: pools, Existing: existing, ImportOnly: true},
			Dir: p.ProvisionerDir(plat, o.ProvisionerDir), Logger: p.log}
		if _, err := d.Remove(ctx, in); err != nil {
			return res, fmt.Errorf("withdraw servers of platform %s: %w", o.Platform, err)
		}
		res.Destroyed = true
		if o.KeepNodes {
			return res, nil
		}
		return res, p.removeNodes(ctx, o.Platform, hosts, &res)
	}
	cfg, err := prov.Configure(providers.Input{Platform: plat, Pools: pools, Existing: existing, ImportOnly: true})
	if err != nil {
		return res, fmt.Errorf("configure %s: %w", prov.Name(), err)
	}
	run, err := p.startTofu(ctx, plat, prov, runOptions{TofuPath: o.TofuPath, Getenv: o.Getenv, Env: o.Env, Stdout: o.Stdout, Stderr: o.Stderr})
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
	if o.Stdout != nil {
		fmt.Fprintf(o.Stdout, "Servers of platform %s to destroy:\n", o.Platform)
		for _, c := range sum.Imports {
			fmt.Fprintf(o.Stdout, "  %s (id %s)\n", c.Address, c.ImportID)
		}
	}
	if !o.Force {
		ok, err := ask(gate, PromptDestroy, "yes")
		if err != nil || !ok {
			res.Declined = !ok
			return res, err
		}
	}
	if err := run.r.Apply(ctx, sp); err != nil {
		return res, fmt.Errorf("adopt servers of platform %s: %w", o.Platform, err)
	}
	sp, sum, err = run.plan(ctx, nil, tofu.PlanOptions{Destroy: true})
	if err != nil {
		return res, err
	}
	res.Summary = sum
	printSummary(o.Stdout, sum)
	if err := run.r.Apply(ctx, sp); err != nil {
		return res, fmt.Errorf("destroy servers of platform %s: %w", o.Platform, err)
	}
	res.Destroyed = true
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
