package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"

	plasmanode "github.com/plasmactl/plasma-node"
	"github.com/plasmactl/plasma-node/nodes"
	"github.com/plasmactl/plasma-node/providers"
	"github.com/plasmactl/plasma-node/providers/builtin"
	"github.com/plasmactl/plasma-node/tofu"
)

func main() {
	tofuPath := flag.String("tofu", os.Getenv("PLASMA_TOFU"), "tofu or terraform binary (default: $PLASMA_TOFU, else tofu, then terraform, on PATH)")
	keep := flag.Bool("keep", false, "keep the temporary project folder and print its path")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	dir, err := os.MkdirTemp("", "plasma-node-custom-provider-")
	if err == nil {
		err = run(ctx, dir, *tofuPath, nil, os.Stdout)
		if *keep {
			fmt.Println("project kept in", dir)
		} else {
			os.RemoveAll(dir)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "custom-provider:", err)
		os.Exit(1)
	}
}

// run provisions a pool of two servers on the file cloud in project dir;
// env is added to tofu's environment.
func run(ctx context.Context, dir, tofuPath string, env map[string]string, out io.Writer) error {
	step := func(format string, args ...any) { fmt.Fprintf(out, "==> "+format+"\n", args...) }
	// The project's providers: the built-in ones and the file cloud.
	set, err := providers.NewSet(append(builtin.Providers(), fileCloud{})...)
	if err != nil {
		return err
	}
	p, err := plasmanode.OpenProject(ctx, dir, plasmanode.Options{Providers: set})
	if err != nil {
		return err
	}
	step("providers known: %v", set.Names())
	step("plasma-node add demo --provider %s", Name)
	if _, err := p.Scaffold(ctx, plasmanode.ScaffoldOptions{Platform: "demo", Provider: Name}); err != nil {
		return err
	}
	cloud := filepath.Join(dir, "cloud")
	if _, err := p.Store.UpdatePlatform(ctx, "demo", func(pl *nodes.Platform) error {
		pl.Infrastructure.API.URI = cloud
		return nil
	}); err != nil {
		return err
	}

	step("the configuration the provider renders for web:small:2")
	plat, err := p.Store.Platform(ctx, "demo")
	if err != nil {
		return err
	}
	prov, err := p.Providers().Get(Name)
	if err != nil {
		return err
	}
	pools := map[string]nodes.Pool{"web": {Zones: []string{"platform.interaction.web"}, Machine: "small", Count: 2}}
	cfg, err := prov.Configure(providers.Input{Platform: plat, Pools: pools})
	if err != nil {
		return err
	}
	hcl, err := cfg.Render()
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "%s", hcl)

	o := plasmanode.ProvisionOptions{Platform: "demo", Specs: []string{"interaction.web:small:2"}, TofuOptions: plasmanode.TofuOptions{TofuPath: tofuPath, Env: env, Stdout: out},
		OnPlan: func(s tofu.Summary) { printPlan(out, s) }}
	step("plasma-node provision demo -z interaction.web:small:2 --dry-run")
	o.DryRun = true
	if _, err := p.Provision(ctx, o); err != nil {
		return err
	}
	step("plasma-node provision demo -z interaction.web:small:2 --auto-approve")
	o.DryRun, o.AutoApprove, o.Stdout, o.OnPlan = false, true, io.Discard, nil
	res, err := p.Provision(ctx, o)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "Plan: %s\n", res.Summary)
	for _, n := range res.Nodes {
		fmt.Fprintf(out, "    node %s: server %s, private IP %s\n", n, n.ProviderMetadata.ServerID, n.Network.PrivateIP)
	}
	files, err := filepath.Glob(filepath.Join(cloud, "*.json"))
	if err != nil {
		return err
	}
	step("the cloud now holds %d servers", len(files))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "    %s: %s\n", filepath.Base(f), b)
	}
	return nil
}

// printPlan shows a classified plan, as plasma-node does: the library
// prints nothing, it hands the plan to OnPlan.
func printPlan(w io.Writer, s tofu.Summary) {
	fmt.Fprintf(w, "Plan: %s\n", s)
	for _, c := range s.Creates {
		fmt.Fprintf(w, "  %-20s %s\n", "create", c.Address)
	}
}
