// Command quickstart runs plasma-node's main job on embedded defaults in a
// temporary folder: it scaffolds a platform, registers nodes (their private
// IPs allocated from the platform's pool), allocates zones kubectl-style
// and lists the result. It leaves nothing behind unless -keep is given.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"

	plasmanode "github.com/plasmactl/plasma-node"
)

func main() {
	keep := flag.Bool("keep", false, "keep the temporary project folder and print its path")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	dir, err := os.MkdirTemp("", "plasma-node-quickstart-")
	if err == nil {
		err = run(ctx, dir, os.Stdout)
		if !*keep {
			os.RemoveAll(dir)
		} else {
			fmt.Println("project kept in", dir)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "quickstart:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, dir string, out io.Writer) error {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	p, err := plasmanode.OpenProject(ctx, dir, plasmanode.Options{Logger: log})
	if err != nil {
		return err
	}
	step := func(format string, args ...any) { fmt.Fprintf(out, "==> "+format+"\n", args...) }

	step("plasma-node add demo --domain demo.example.com")
	if _, err := p.Scaffold(ctx, plasmanode.ScaffoldOptions{Platform: "demo", Domain: "demo.example.com"}); err != nil {
		return err
	}
	for i, z := range []string{"foundation.cluster.control", "foundation.cluster.control", "cognition.data"} {
		host := fmt.Sprintf("demo-node-%03d", i+1)
		step("plasma-node add demo --hostname %s --public-ip 203.0.113.%d -z %s", host, 10+i, z)
		n, err := p.Register(ctx, plasmanode.RegisterOptions{
			Platform: "demo", Hostname: host, PublicIP: fmt.Sprintf("203.0.113.%d", 10+i), Zones: []string{z},
		})
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "    %s got private IP %s\n", n.Hostname, n.Network.PrivateIP)
	}
	ops := []string{"platform.interaction.observability", "platform.cognition.data/platform.cognition.knowledge"}
	step("plasma-node allocate demo-node-003 %s", strings.Join(ops, " "))
	res, err := p.Allocate(ctx, plasmanode.AllocateOptions{Hostname: "demo-node-003", Ops: ops})
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "    zones now %s (modified: %v)\n", strings.Join(res.Zones, ", "), res.Modified)

	step("plasma-node list --zone foundation.cluster")
	ns, err := p.List(ctx, plasmanode.ListOptions{Zone: "foundation.cluster"})
	if err != nil {
		return err
	}
	for _, n := range ns {
		fmt.Fprintf(out, "    %-16s %-14s %-14s %s\n", n, n.Network.PublicIP, n.Network.PrivateIP, strings.Join(n.Zones, ","))
	}
	node, err := os.ReadFile(p.Store.NodePath("demo", "demo-node-003"))
	if err != nil {
		return err
	}
	step("cat platforms/demo/nodes/demo-node-003.yaml")
	fmt.Fprintf(out, "%s", node)
	return nil
}
