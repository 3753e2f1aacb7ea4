package nodecmd

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"

	"gopkg.in/yaml.v3"

	plasmanode "github.com/plasmactl/plasma-node"
	"github.com/plasmactl/plasma-node/internal/cli"
	"github.com/plasmactl/plasma-node/nodes"
	"github.com/plasmactl/plasma-node/tofu"
)

// checkOutput checks an -o value: table, json or yaml.
func checkOutput(o string) error {
	switch o {
	case "table", "json", "yaml":
		return nil
	}
	return cli.Usage(fmt.Errorf("--output %q: want table, json or yaml", o))
}

func encode(w io.Writer, format string, v any) error {
	if format == "json" {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		return enc.Encode(v)
	}
	enc := yaml.NewEncoder(w)
	enc.SetIndent(2)
	if err := enc.Encode(v); err != nil {
		return err
	}
	return enc.Close()
}

// listed is a node with its platform, for YAML output (the node type keeps
// the platform out of its file).
type listed struct {
	Platform     string `yaml:"platform"`
	InstallState string `yaml:"install_state,omitempty"`
	nodes.Node   `yaml:",inline"`
}

func withPlatform(ns []*nodes.Node) []listed {
	out := make([]listed, len(ns))
	for i, n := range ns {
		out[i] = listed{Platform: n.Platform, InstallState: n.InstallState, Node: *n}
	}
	return out
}

// printNodes prints ns as format says; in a table, each broken file is a
// row of its own saying why it could not be read.
func printNodes(w io.Writer, format string, ns []*nodes.Node, broken ...nodes.BrokenFile) error {
	switch format {
	case "json":
		if ns == nil {
			ns = []*nodes.Node{}
		}
		return encode(w, format, ns)
	case "yaml":
		return encode(w, format, withPlatform(ns))
	}
	if len(ns) == 0 && len(broken) == 0 {
		fmt.Fprintln(w, "No nodes.")
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	state := slices.ContainsFunc(ns, func(n *nodes.Node) bool { return n.InstallState != "" })
	head := "PLATFORM\tHOSTNAME\tPUBLIC IP\tPRIVATE IP\tZONES"
	if state {
		head += "\tINSTALL"
	}
	fmt.Fprintln(tw, head)
	for _, n := range ns {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s", n.Platform, n.Hostname, dash(n.Network.PublicIP), dash(n.Network.PrivateIP), dash(strings.Join(n.Zones, ",")))
		if state {
			fmt.Fprintf(tw, "\t%s", dash(n.InstallState))
		}
		fmt.Fprintln(tw)
	}
	for _, f := range broken {
		msg, _, _ := strings.Cut(f.Err.Error(), "\n")
		name := strings.TrimSuffix(filepath.Base(f.File), ".yaml")
		if filepath.Base(f.File) == "platform.yaml" {
			name = "(platform.yaml)"
		}
		fmt.Fprintf(tw, "%s\t%s\t-\t-\tBROKEN: %s\n", f.Platform, name, msg)
	}
	return tw.Flush()
}

func printNode(w io.Writer, format string, n *nodes.Node) error {
	switch format {
	case "json":
		return encode(w, format, n)
	case "yaml":
		return encode(w, format, listed{Platform: n.Platform, Node: *n})
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	row := func(k, v string) {
		if v != "" {
			fmt.Fprintf(tw, "%s:\t%s\n", k, v)
		}
	}
	row("Hostname", n.Hostname)
	row("Platform", n.Platform)
	row("File", n.File())
	row("Machine", n.Machine)
	row("Zones", strings.Join(n.Zones, ", "))
	row("Public IP", n.Network.PublicIP)
	row("Private IP", n.Network.PrivateIP)
	row("Failover IP", n.Network.FailoverIP)
	row("Public MAC", n.Network.PublicMAC)
	row("Private MAC", n.Network.PrivateMAC)
	row("Provider", n.ProviderMetadata.Provider)
	row("Server ID", n.ProviderMetadata.ServerID)
	row("Install", n.InstallState)
	row("Disks", strings.Join(n.Disks, ", "))
	return tw.Flush()
}

func printPlatform(w io.Writer, format string, v *plasmanode.PlatformView) error {
	view := *v
	view.Platform = v.Platform.Redacted()
	if view.Nodes == nil {
		view.Nodes = []*nodes.Node{}
	}
	switch format {
	case "json":
		return encode(w, format, view)
	case "yaml":
		return encode(w, format, struct {
			Platform *nodes.Platform `yaml:"platform"`
			Nodes    []listed        `yaml:"nodes"`
		}{view.Platform, withPlatform(view.Nodes)})
	}
	p := view.Platform
	fmt.Fprintf(w, "Platform:  %s\nFile:      %s\nProvider:  %s\n", p.Name, p.File(), p.Infrastructure.MetalProvider)
	if p.DNS.Domain != "" {
		fmt.Fprintf(w, "Domain:    %s\n", p.DNS.Domain)
	}
	network := p.Networking.PrivateNetwork
	if network == "" {
		network = "192.168.0.0/16 (default)"
	}
	fmt.Fprintf(w, "Network:   %s\n", network)
	if len(p.Pools) > 0 {
		fmt.Fprintln(w, "Pools:")
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		for _, name := range sortedKeys(p.Pools) {
			pool := p.Pools[name]
			fmt.Fprintf(tw, "  %s\t%s x%d\t%s\n", name, pool.Machine, pool.Count, strings.Join(pool.Zones, ","))
		}
		tw.Flush()
	}
	fmt.Fprintf(w, "Nodes:     %d\n", len(view.Nodes))
	if len(view.Nodes) == 0 {
		return nil
	}
	return printNodes(w, "table", view.Nodes)
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// nodeNames names the node each planned change is: an import by the
// node holding its server id, anything else by its resource name as a
// hostname (hcloud_server.demo_web_003 becomes demo-web-003, the name
// provision gives a new server).
type nodeNames map[string]string // server id → hostname

// namesOf returns the names of the platform's nodes; none when they
// cannot be read (the operation reports that itself).
func namesOf(ctx context.Context, p *plasmanode.Project, platform string) nodeNames {
	m := nodeNames{}
	ns, _ := p.Store.Nodes(ctx, platform)
	for _, n := range ns {
		if id := n.ProviderMetadata.ServerID; id != "" {
			m[id] = n.Hostname
		}
	}
	return m
}

// of returns the node name of c.
func (m nodeNames) of(c tofu.Change) string {
	if h, ok := m[c.ImportID]; ok && c.ImportID != "" {
		return h
	}
	name, _, _ := strings.Cut(c.Address, " (") // a pxe change's note may hold dots
	if i := strings.IndexByte(name, '['); i >= 0 {
		name = name[:i]
	}
	name = name[strings.LastIndexByte(name, '.')+1:]
	return strings.ReplaceAll(name, "_", "-")
}

// writeSummary writes a classified plan for people: its counts, then one
// line per change: what happens, to which node, through which resource.
func writeSummary(w io.Writer, s tofu.Summary, names nodeNames) {
	fmt.Fprintf(w, "Plan: %s\n", s)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	list := func(kind string, cs []tofu.Change) {
		for _, c := range cs {
			extra := ""
			if c.ImportID != "" {
				extra = " (id " + c.ImportID + ")"
			}
			if len(c.DestructiveAttrs) > 0 {
				extra += " (" + strings.Join(c.DestructiveAttrs, ", ") + ")"
			}
			fmt.Fprintf(tw, "  %s\t%s\t%s%s\n", kind, names.of(c), c.Address, extra)
		}
	}
	list("import", s.Imports)
	list("create", s.Creates)
	list("update", s.Updates)
	list("destructive update", s.DestructiveUpdates)
	list("replace", s.Replacements)
	list("delete", s.Deletes)
	list("forget", s.Forgets)
	tw.Flush()
}

// writeDestroyPlan writes what destroy is about to remove.
func writeDestroyPlan(w io.Writer, p plasmanode.DestroyPlan) {
	switch p.Action {
	case plasmanode.DestroyNodeFiles:
		fmt.Fprintf(w, "Platform %s is manual: only its node files go: %s\n", p.Platform, strings.Join(p.Nodes, ", "))
	case plasmanode.DestroyForget:
		fmt.Fprintf(w, "Node files of platform %s to remove (no server is destroyed): %s\n", p.Platform, strings.Join(p.Nodes, ", "))
	case plasmanode.DestroyWithdraw:
		fmt.Fprintf(w, "Nodes of platform %s to withdraw (pending registrations are removed; installed machines are not wiped):\n  %s\n",
			p.Platform, strings.Join(p.Nodes, "\n  "))
	default:
		fmt.Fprintf(w, "Servers of platform %s to destroy:\n", p.Platform)
		for _, c := range p.Servers {
			fmt.Fprintf(w, "  %s (id %s)\n", c.Address, c.ImportID)
		}
	}
}

// writePlan writes a plan that is not tofu's for people: its counts,
// one line per change, then its notes.
func writePlan(w io.Writer, p plasmanode.Plan) {
	count := map[plasmanode.Action]int{}
	for _, c := range p.Changes {
		if c.Object != plasmanode.ObjectPool {
			count[c.Action]++
		}
	}
	fmt.Fprintf(w, "Plan (%s): %d to create, %d to adopt, %d to update, %d to delete\n", p.Source,
		count[plasmanode.ActionCreate], count[plasmanode.ActionAdopt], count[plasmanode.ActionUpdate]+count[plasmanode.ActionDestructiveUpdate], count[plasmanode.ActionDelete])
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, c := range p.Changes {
		what := c.Node
		if c.Object != plasmanode.ObjectServer && c.Object != plasmanode.ObjectNode {
			what = string(c.Object) + " " + c.Pool
		}
		var extra []string
		if c.Object == plasmanode.ObjectServer && c.Pool != "" {
			extra = append(extra, "pool "+c.Pool)
		}
		if c.Machine != "" {
			extra = append(extra, c.Machine)
		}
		if c.ServerID != "" {
			extra = append(extra, "id "+c.ServerID)
		}
		if c.Detail != "" {
			extra = append(extra, c.Detail)
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\n", c.Action, what, strings.Join(extra, "; "))
	}
	tw.Flush()
	for _, n := range p.Notes {
		fmt.Fprintf(w, "Note: %s.\n", n)
	}
}
