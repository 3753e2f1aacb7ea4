package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"time"

	"github.com/plasmactl/plasma-node/pxe/backend/regbackend"
	pxestore "github.com/plasmactl/plasma-node/pxe/store"

	plasmanode "github.com/plasmactl/plasma-node"
	"github.com/plasmactl/plasma-node/internal/nodecmd"
	"github.com/plasmactl/plasma-node/nodes"
	"github.com/plasmactl/plasma-node/pxe"
	"github.com/plasmactl/plasma-node/pxe/registry"
	"github.com/plasmactl/plasma-node/pxe/store/folder"
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

	// The list steps print through the code of plasma-node list itself
	// (internal/nodecmd, over p.List), so what they show is what the
	// command prints.
	step("plasma-node list --zone foundation.cluster")
	env := nodecmd.Env{Dir: dir, Stdout: out}
	if err := nodecmd.List(ctx, env, plasmanode.ListOptions{Zone: "foundation.cluster"}, nodecmd.ListView{Output: "table"}); err != nil {
		return err
	}
	node, err := os.ReadFile(p.Store.NodePath("demo", "demo-node-003"))
	if err != nil {
		return err
	}
	step("cat platforms/demo/nodes/demo-node-003.yaml")
	fmt.Fprintf(out, "%s", node)

	// Bare metal in the same inventory: provider pxe registers the pool's
	// machines with node-provisioner instead of calling a cloud.
	state := filepath.Join(dir, "node-provisioner")
	step("plasma-node add metal --provider pxe --domain demo.example.com")
	if _, err := p.Scaffold(ctx, plasmanode.ScaffoldOptions{Platform: "metal", Provider: "pxe", Domain: "demo.example.com"}); err != nil {
		return err
	}
	if _, err := p.Store.UpdatePlatform(ctx, "metal", func(pl *nodes.Platform) error {
		pl.Pools = map[string]nodes.Pool{"control": {Zones: []string{"platform.foundation.cluster.control"}, Machine: "pve", Count: 1,
			Hardware: []nodes.Machine{{MACs: []string{"52:54:00:de:ad:01"}, BootDisk: "25414A800205", DataPools: []string{"tanka1=single:50026B73842AD86F"}}}}}
		return nil
	}); err != nil {
		return err
	}
	step("plasma-node provision metal --provisioner-dir %s --auto-approve   (pools.control.hardware lists one machine)", filepath.Base(state))
	pr, err := p.Provision(ctx, plasmanode.ProvisionOptions{Platform: "metal", AutoApprove: true, ProvisionerDir: state, TofuOptions: plasmanode.TofuOptions{Stdout: out}})
	if err != nil {
		return err
	}
	for _, n := range pr.Nodes {
		fmt.Fprintf(out, "    node %s: machine %s, private IP %s\n", n, n.ProviderMetadata.ServerID, n.Network.PrivateIP)
	}
	return answerDemo(ctx, p, state, out, step)
}

// sysInfo is what a Proxmox VE 9.2 installer posts (trimmed).
const sysInfo = `{"$schema":{"version":"1.0"},"product":{"fullname":"Proxmox VE","product":"pve"},
"iso":{"release":"9.2","isorelease":"1"},"dmi":{"system":{"serial":"DEMO-0001","uuid":"0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0"}},
"network_interfaces":[{"link":"enp1s0","mac":"52:54:00:DE:AD:01"}]}`

func answerDemo(ctx context.Context, p *plasmanode.Project, state string, out io.Writer, step func(string, ...any)) error {
	// The whole window over the state folder, as node-provisioner serve
	// runs it (here without proxy-DHCP: the demo posts on loopback): the
	// stores, the backend over them, the window asking it.
	stores, err := pxestore.Open(ctx, state, pxestore.Options{SecretsDir: filepath.Join(state, "secrets")})
	if err != nil {
		return err
	}
	step("node-provisioner list   (the registration plasma-node provision wrote)")
	pending, err := registry.Pending(ctx, stores.Registrations())
	if err != nil {
		return err
	}
	for _, r := range pending {
		fmt.Fprintf(out, "    %s pending, MACs %s, boot disk %s\n", r.Name, strings.Join(r.MACs, ","), r.BootDisk)
	}
	secrets, err := stores.Secrets(ctx)
	if err != nil {
		return err
	}
	b, err := regbackend.Open(ctx, stores, regbackend.Options{StateDir: state,
		Site: registry.Site{Domain: "demo.example.com", SSHKeys: []string{demoKey}}})
	if err != nil {
		return err
	}
	defer b.Close()
	srv, err := pxe.New(pxe.Config{StateDir: state, Backend: b, HTTPAddr: "127.0.0.1:0", TTL: time.Minute})
	if err != nil {
		return err
	}
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- srv.Serve(sctx) }()
	select {
	case <-srv.Ready():
	case err := <-done:
		return err
	}
	url := "http://" + srv.Addr().String() + "/answer"
	step("node-provisioner serve --http %s   (and the installer posts its system info)", srv.Addr())
	for i := range 2 {
		resp, err := http.Post(url, "application/json", strings.NewReader(sysInfo))
		if err != nil {
			return err
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if i == 0 {
			fmt.Fprintf(out, "    POST /answer -> %s\n%s", resp.Status, b)
			step("the same machine asks again")
		} else {
			fmt.Fprintf(out, "    POST /answer -> %s (%s)\n", resp.Status, strings.TrimSpace(string(b)))
		}
	}
	cancel()
	if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	fmt.Fprintf(out, "    the root password went to %s (mode 0600; gone with the demo folder unless -keep), never to the logs\n", secrets.(*folder.Secrets).PasswordPath("metal-control-001"))
	step("plasma-node list metal --provisioner-dir %s", filepath.Base(state))
	env := nodecmd.Env{Dir: p.Store.Dir(), ProvisionerDir: state, Stdout: out}
	return nodecmd.List(ctx, env, plasmanode.ListOptions{Platform: "metal"}, nodecmd.ListView{Output: "table"})
}

const demoKey = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGzx6HqSm1mQ3VcLaZ3r0ZKtgtF5wVbUEjS0Xv5R5N5g demo@quickstart"
