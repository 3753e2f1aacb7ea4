package main

import (
	"maps"
	"slices"

	"github.com/spf13/cobra"

	plasmanode "github.com/plasmactl/plasma-node"
	"github.com/plasmactl/plasma-node/providers/builtin"
)

// Dynamic shell completion: platforms, nodes, zones, providers, pools
// and -o values, read from the project --dir names.

type completer func(p *plasmanode.Project, cmd *cobra.Command, args []string) []string

// complete returns a completion function listing what f finds in the
// project; none when the project cannot be opened.
func (a *app) complete(f completer) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
		p, err := a.env(cmd).Project(cmd.Context())
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return f(p, cmd, args), cobra.ShellCompDirectiveNoFileComp
	}
}

func platforms(p *plasmanode.Project, cmd *cobra.Command, _ []string) []string {
	ps, _ := p.Store.Platforms(cmd.Context())
	return ps
}

func hostnames(p *plasmanode.Project, cmd *cobra.Command, _ []string) []string {
	ns, _ := p.List(cmd.Context(), plasmanode.ListOptions{})
	var out []string
	for _, n := range ns {
		out = append(out, n.Hostname)
	}
	return slices.Compact(slices.Sorted(slices.Values(out)))
}

// zoneNames are the zones of topology.yaml and of every node.
func zoneNames(p *plasmanode.Project, cmd *cobra.Command, _ []string) []string {
	out := p.Topology.Paths()
	ns, _ := p.List(cmd.Context(), plasmanode.ListOptions{})
	for _, n := range ns {
		out = append(out, n.Zones...)
	}
	return slices.Compact(slices.Sorted(slices.Values(out)))
}

// poolNames are the pools of the platform named by the first argument.
func poolNames(p *plasmanode.Project, cmd *cobra.Command, args []string) []string {
	if len(args) == 0 {
		return nil
	}
	plat, err := p.Store.Platform(cmd.Context(), args[0])
	if err != nil {
		return nil
	}
	var out []string
	for name := range plat.Pools {
		out = append(out, name)
	}
	slices.Sort(out)
	return out
}

// ipPoolNames are the networking.ip_pools of the platform named by the
// first argument.
func ipPoolNames(p *plasmanode.Project, cmd *cobra.Command, args []string) []string {
	if len(args) == 0 {
		return nil
	}
	plat, err := p.Store.Platform(cmd.Context(), args[0])
	if err != nil {
		return nil
	}
	return slices.Sorted(maps.Keys(plat.Networking.IPPools))
}

// firstThen completes the first argument with first and the others with
// rest (nil: nothing).
func (a *app) firstThen(first, rest completer) cobra.CompletionFunc {
	return a.complete(func(p *plasmanode.Project, cmd *cobra.Command, args []string) []string {
		if len(args) == 0 {
			return first(p, cmd, args)
		}
		if rest == nil {
			return nil
		}
		return rest(p, cmd, args)
	})
}

// addCompletion gives each command of root its argument and flag
// completions.
func (a *app) addCompletion(root *cobra.Command) {
	both := func(p *plasmanode.Project, cmd *cobra.Command, args []string) []string {
		return append(platforms(p, cmd, args), hostnames(p, cmd, args)...)
	}
	args := map[string]cobra.CompletionFunc{
		"add": a.firstThen(platforms, nil), "register": a.firstThen(platforms, nil), "provision": a.firstThen(platforms, nil),
		"join": a.firstThen(platforms, nil), "destroy": a.firstThen(platforms, nil), "list": a.firstThen(platforms, nil),
		"allocate": a.firstThen(hostnames, zoneNames), "deallocate": a.firstThen(hostnames, zoneNames),
		"delete": a.firstThen(hostnames, nil),
		"show":   a.firstThen(both, nil), "validate": a.firstThen(both, nil), "query": a.firstThen(zoneNames, nil),
	}
	fixed := func(vals ...string) cobra.CompletionFunc {
		return cobra.FixedCompletions(vals, cobra.ShellCompDirectiveNoFileComp)
	}
	for _, c := range root.Commands() {
		if f, ok := args[c.Name()]; ok {
			c.ValidArgsFunction = f
		}
		flags := map[string]cobra.CompletionFunc{
			"env": a.complete(platforms), "zone": a.complete(zoneNames), "pool": a.complete(poolNames), "ip-pool": a.complete(ipPoolNames),
			"provider": fixed(builtin.Set().Names()...), "output": fixed("table", "json", "yaml"),
		}
		if c.Name() == "list" {
			flags["output"] = fixed("table", "wide", "name", "json", "yaml")
		}
		for name, f := range flags {
			if c.Flags().Lookup(name) != nil {
				_ = c.RegisterFlagCompletionFunc(name, f)
			}
		}
	}
}
