package nodecmd

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"

	plasmanode "github.com/plasmactl/plasma-node"
	"github.com/plasmactl/plasma-node/internal/cli"
	"github.com/plasmactl/plasma-node/nodes"
)

// ListView is how list prints its nodes, kubectl's way.
type ListView struct {
	// Output is -o: table (the default), wide (with provider, server id,
	// pool, machine and install state), name (hostname@platform, one a
	// line), json or yaml.
	Output string
	// NoHeaders leaves out the table's header line.
	NoHeaders bool
	// SortBy is a column to sort by (--sort-by), as its header in lower
	// case with '-' for spaces (private-ip); empty: platform, then
	// hostname.
	SortBy string
}

// listColumn is one column of list's table.
type listColumn struct {
	name string
	wide bool // only in -o wide
	get  func(n *nodes.Node, pool string) string
}

var listColumns = []listColumn{
	{"platform", false, func(n *nodes.Node, _ string) string { return n.Platform }},
	{"hostname", false, func(n *nodes.Node, _ string) string { return n.Hostname }},
	{"public-ip", false, func(n *nodes.Node, _ string) string { return n.Network.PublicIP }},
	{"private-ip", false, func(n *nodes.Node, _ string) string { return n.Network.PrivateIP }},
	{"zones", false, func(n *nodes.Node, _ string) string { return strings.Join(n.Zones, ",") }},
	{"provider", true, func(n *nodes.Node, _ string) string { return n.ProviderMetadata.Provider }},
	{"server-id", true, func(n *nodes.Node, _ string) string { return n.ProviderMetadata.ServerID }},
	{"pool", true, func(_ *nodes.Node, pool string) string { return pool }},
	{"machine", true, func(n *nodes.Node, _ string) string { return n.Machine }},
	{"install", true, func(n *nodes.Node, _ string) string { return n.InstallState }},
}

// check refuses an -o or --sort-by value list does not know.
func (v ListView) check() error {
	switch v.Output {
	case "table", "wide", "name", "json", "yaml":
	default:
		return cli.Usage(fmt.Errorf("--output %q: want table, wide, name, json or yaml", v.Output))
	}
	if v.SortBy != "" && v.column() == nil {
		var names []string
		for _, c := range listColumns {
			names = append(names, c.name)
		}
		return cli.Usage(fmt.Errorf("--sort-by %q: want one of %s", v.SortBy, strings.Join(names, ", ")))
	}
	return nil
}

func (v ListView) column() *listColumn {
	key := strings.ToLower(strings.NewReplacer(" ", "-", "_", "-").Replace(strings.TrimSpace(v.SortBy)))
	for i := range listColumns {
		if listColumns[i].name == key {
			return &listColumns[i]
		}
	}
	return nil
}

// pools returns the pool of each node, by its platform's pools.
func pools(ctx context.Context, p *plasmanode.Project, ns []*nodes.Node) map[*nodes.Node]string {
	plats := map[string]*nodes.Platform{}
	out := map[*nodes.Node]string{}
	for _, n := range ns {
		plat, ok := plats[n.Platform]
		if !ok {
			plat, _ = p.Store.Platform(ctx, n.Platform)
			plats[n.Platform] = plat
		}
		if plat != nil {
			out[n] = plasmanode.PoolOf(plat, n)
		}
	}
	return out
}

// print writes ns (sorted as v says) and the broken files.
func (v ListView) print(w io.Writer, ns []*nodes.Node, pool map[*nodes.Node]string, broken []nodes.BrokenFile) error {
	if c := v.column(); c != nil {
		slices.SortStableFunc(ns, func(a, b *nodes.Node) int { return strings.Compare(c.get(a, pool[a]), c.get(b, pool[b])) })
	}
	switch v.Output {
	case "json", "yaml":
		return printNodes(w, v.Output, ns)
	case "name":
		for _, n := range ns {
			fmt.Fprintln(w, n.String())
		}
		return nil
	}
	if v.Output == "table" && !v.NoHeaders {
		return printNodes(w, "table", ns, broken...)
	}
	if len(ns) == 0 && len(broken) == 0 {
		fmt.Fprintln(w, "No nodes.")
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	var cols []listColumn
	state := slices.ContainsFunc(ns, func(n *nodes.Node) bool { return n.InstallState != "" })
	for _, c := range listColumns {
		if !c.wide || v.Output == "wide" || (c.name == "install" && state) {
			cols = append(cols, c)
		}
	}
	if !v.NoHeaders {
		var head []string
		for _, c := range cols {
			head = append(head, strings.ToUpper(strings.ReplaceAll(c.name, "-", " ")))
		}
		fmt.Fprintln(tw, strings.Join(head, "\t"))
	}
	for _, n := range ns {
		var cells []string
		for _, c := range cols {
			cells = append(cells, dash(c.get(n, pool[n])))
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t"))
	}
	for _, f := range broken {
		msg, _, _ := strings.Cut(f.Err.Error(), "\n")
		fmt.Fprintf(tw, "%s\t%s\t-\t-\tBROKEN: %s\n", f.Platform, strings.TrimSuffix(filepath.Base(f.File), ".yaml"), msg)
	}
	return tw.Flush()
}
