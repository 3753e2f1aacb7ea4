package plasmanode_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	plasmanode "github.com/plasmactl/plasma-node"
	"github.com/plasmactl/plasma-node/internal/fakehcloud"
	"github.com/plasmactl/plasma-node/internal/tofutest"
	"github.com/plasmactl/plasma-node/nodes"
	"github.com/plasmactl/plasma-node/providers/hetzner"
	"github.com/plasmactl/plasma-node/tofu"
)

var fakeToken = strings.Repeat("f", hetzner.TokenLength)

// cloud is a hetzner platform "demo" pointed at a fake Hetzner Cloud API,
// with the real tofu and hcloud plugin from the .ci/tools.sh mirror.
type cloud struct {
	p    *plasmanode.Project
	dir  string
	fake *fakehcloud.Fake
	bin  string
	env  map[string]string
	out  *bytes.Buffer
	// plans are the plans the operations reported to OnPlan.
	plans []tofu.Summary
}

func newCloud(t testing.TB) *cloud {
	t.Helper()
	bin := tofutest.Binary(t)
	rc := tofutest.CLIConfig(t, tofutest.Mirror(t, tofutest.Hcloud))
	fake := fakehcloud.Start(fakeToken)
	t.Cleanup(fake.Close)
	ctx := context.Background()
	dir := t.TempDir()
	p, err := plasmanode.OpenProject(ctx, dir, plasmanode.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Scaffold(ctx, plasmanode.ScaffoldOptions{Platform: "demo", Provider: "hetzner"}); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Store.UpdatePlatform(ctx, "demo", func(pl *nodes.Platform) error {
		pl.Infrastructure.API = nodes.API{URI: fake.Endpoint(), Token: fakeToken}
		pl.Infrastructure.Zone = "fsn1"
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	c := &cloud{p: p, dir: dir, fake: fake, bin: bin, env: map[string]string{"TF_CLI_CONFIG_FILE": rc}, out: &bytes.Buffer{}}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("tofu output:\n%s\nfake calls: %v", c.out, fake.Calls())
		}
	})
	return c
}

func (c *cloud) provision(ctx context.Context, o plasmanode.ProvisionOptions) (plasmanode.ProvisionResult, error) {
	o.Platform = "demo"
	o.TofuPath = c.bin
	o.Env = c.env
	o.Getenv = func(string) string { return "" }
	o.Stdout, o.Stderr = c.out, c.out
	o.OnPlan = func(s tofu.Summary) { c.plans = append(c.plans, s) }
	return c.p.Provision(ctx, o)
}

func (c *cloud) files(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	root := filepath.Join(c.dir, nodes.PlatformsDir)
	filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && d.Name() != ".lock" {
			b, _ := os.ReadFile(p)
			rel, _ := filepath.Rel(root, p)
			out[rel] = string(b)
		}
		return nil
	})
	return out
}

type nodeView struct {
	Hostname, PublicIP, PrivateIP, ServerID, Machine string
	Zones                                            []string
}

func (c *cloud) nodes(t *testing.T) []nodeView {
	t.Helper()
	ns, err := c.p.Store.Nodes(context.Background(), "demo")
	if err != nil {
		t.Fatal(err)
	}
	var out []nodeView
	for _, n := range ns {
		out = append(out, nodeView{n.Hostname, n.Network.PublicIP, n.Network.PrivateIP, n.ProviderMetadata.ServerID, n.Machine, n.Zones})
	}
	return out
}

func (c *cloud) wantFake(t *testing.T) []nodeView {
	t.Helper()
	var out []nodeView
	servers := c.fake.Servers()
	slices.SortFunc(servers, func(a, b fakehcloud.Server) int { return strings.Compare(a.Name, b.Name) })
	for i, s := range servers {
		out = append(out, nodeView{s.Name, s.PublicIPv4, "192.168.0." + strconv.Itoa(i+1), strconv.FormatInt(s.ID, 10), "cx22", []string{"platform.web"}})
	}
	return out
}

// TestProvisionConverges provisions two servers, re-runs with the same
// spec (no change, also after the state is gone), dry-runs and scales to
// three, and refuses a concurrent run.
func TestProvisionConverges(t *testing.T) {
	c := newCloud(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()

	res, err := c.provision(ctx, plasmanode.ProvisionOptions{Specs: []string{"web:cx22:2"}, AutoApprove: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Summary.Creates) != 2 || !res.Applied {
		t.Fatalf("first provision: %s, applied %v; want 2 creates applied", res.Summary, res.Applied)
	}
	if got := len(c.fake.Servers()); got != 2 {
		t.Fatalf("fake holds %d servers, want 2", got)
	}
	if diff := cmp.Diff(c.wantFake(t), c.nodes(t)); diff != "" {
		t.Errorf("node files (-want +got):\n%s", diff)
	}
	for _, n := range c.nodes(t) {
		if n.PublicIP == "" {
			t.Errorf("node %s has no public IP", n.Hostname)
		}
	}
	wd := filepath.Join(c.dir, ".plasma", "node", "demo")
	for _, f := range []string{"terraform.tfstate", "plan.tfplan"} {
		if _, err := os.Stat(filepath.Join(wd, f)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s after the run: %v, want it removed (state is transient)", f, err)
		}
	}
	if b, err := os.ReadFile(filepath.Join(wd, "main.tf")); err != nil || bytes.Contains(b, []byte(fakeToken)) {
		t.Errorf("main.tf: err %v, holds the token: %v", err, bytes.Contains(b, []byte(fakeToken)))
	}

	// Same spec again: both servers adopted by id, nothing else.
	res, err = c.provision(ctx, plasmanode.ProvisionOptions{Specs: []string{"web:cx22:2"}, AutoApprove: true})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Summary.Empty() || len(res.Summary.Imports) != 2 {
		t.Errorf("second provision: %s, want 2 imports and no change", res.Summary)
	}
	// No spec: the pools of platform.yaml, same result.
	res, err = c.provision(ctx, plasmanode.ProvisionOptions{AutoApprove: true})
	if err != nil || !res.Summary.Empty() {
		t.Errorf("provision without specs: %s, %v; want no change", res.Summary, err)
	}
	if got := len(c.fake.Servers()); got != 2 {
		t.Errorf("fake holds %d servers after re-runs, want 2", got)
	}

	// Dry run at 3: one create planned, nothing written or made.
	before := c.files(t)
	res, err = c.provision(ctx, plasmanode.ProvisionOptions{Specs: []string{"web:cx22:3"}, DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Summary.Creates) != 1 || res.Applied {
		t.Errorf("dry run: %s applied %v, want 1 create, not applied", res.Summary, res.Applied)
	}
	if diff := cmp.Diff(before, c.files(t)); diff != "" {
		t.Errorf("dry run changed files (-before +after):\n%s", diff)
	}
	if got := len(c.fake.Servers()); got != 2 {
		t.Errorf("fake holds %d servers after a dry run, want 2", got)
	}

	// A run waiting at its prompt holds the lock: a second one is refused
	// at once, naming the holder. The first is then declined.
	asked, release := make(chan struct{}), make(chan struct{})
	done := make(chan error, 1)
	go func() {
		_, err := c.provision(ctx, plasmanode.ProvisionOptions{Specs: []string{"web:cx22:3"}, Prompter: blockingPrompter{asked, release}})
		done <- err
	}()
	select {
	case <-asked:
	case err := <-done:
		t.Fatalf("first run ended before its prompt: %v", err)
	}
	_, err = c.provision(ctx, plasmanode.ProvisionOptions{Specs: []string{"web:cx22:3"}, AutoApprove: true})
	if !errors.Is(err, nodes.ErrLocked) || !strings.Contains(err.Error(), "plasma-node provision") {
		t.Errorf("concurrent provision: %v, want ErrLocked naming plasma-node provision", err)
	}
	close(release)
	if err := <-done; err != nil {
		t.Errorf("declined run: %v", err)
	}
	if diff := cmp.Diff(before, c.files(t)); diff != "" {
		t.Errorf("declined run changed files (-before +after):\n%s", diff)
	}

	// Scale to 3: exactly one create.
	res, err = c.provision(ctx, plasmanode.ProvisionOptions{Specs: []string{"web:cx22:3"}, AutoApprove: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Summary.Creates) != 1 || len(res.Summary.Imports) != 2 {
		t.Errorf("scale to 3: %s, want 2 imports and 1 create", res.Summary)
	}
	if diff := cmp.Diff(c.wantFake(t), c.nodes(t)); diff != "" {
		t.Errorf("node files after scaling (-want +got):\n%s", diff)
	}
	plat, err := c.p.Store.Platform(ctx, "demo")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]nodes.Pool{"web": {Zones: []string{"platform.web"}, Machine: "cx22", Count: 3}}, plat.Pools); diff != "" {
		t.Errorf("pools in platform.yaml (-want +got):\n%s", diff)
	}
}

func (c *cloud) destroy(ctx context.Context, o plasmanode.DestroyOptions) (plasmanode.DestroyResult, error) {
	o.Platform = "demo"
	o.TofuPath = c.bin
	o.Env = c.env
	o.Getenv = func(string) string { return "" }
	o.Stdout, o.Stderr = c.out, c.out
	return c.p.Destroy(ctx, o)
}

// TestDestroyRemovesServersAndNodes provisions two servers, declines a
// destroy, then destroys with Force: the fake holds no servers and the
// node files are gone, platform.yaml kept.
func TestDestroyRemovesServersAndNodes(t *testing.T) {
	c := newCloud(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	if _, err := c.provision(ctx, plasmanode.ProvisionOptions{Specs: []string{"web:cx22:2"}, AutoApprove: true}); err != nil {
		t.Fatal(err)
	}
	before := c.files(t)
	res, err := c.destroy(ctx, plasmanode.DestroyOptions{Prompter: &answer{"no"}})
	if err != nil || !res.Declined || res.Destroyed {
		t.Fatalf("declined destroy: %+v, %v; want declined", res, err)
	}
	if got := len(c.fake.Servers()); got != 2 {
		t.Errorf("fake holds %d servers after a declined destroy, want 2", got)
	}
	if diff := cmp.Diff(before, c.files(t)); diff != "" {
		t.Errorf("declined destroy changed files (-before +after):\n%s", diff)
	}
	res, err = c.destroy(ctx, plasmanode.DestroyOptions{Force: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Summary.Deletes) != 2 || !res.Destroyed {
		t.Errorf("destroy: %s, destroyed %v; want 2 deletes", res.Summary, res.Destroyed)
	}
	if s := c.fake.Servers(); len(s) != 0 {
		t.Errorf("fake servers after destroy = %+v, want none", s)
	}
	if diff := cmp.Diff([]string{"demo-web-001", "demo-web-002"}, res.Removed); diff != "" {
		t.Errorf("removed (-want +got):\n%s", diff)
	}
	if got := c.nodes(t); len(got) != 0 {
		t.Errorf("node files after destroy: %+v, want none", got)
	}
	if _, ok := c.files(t)["demo/platform.yaml"]; !ok {
		t.Error("platform.yaml is gone after destroy, want it kept")
	}
}

func TestDestroyManualRemovesOnlyFiles(t *testing.T) {
	ctx := context.Background()
	p, err := plasmanode.OpenProject(ctx, t.TempDir(), plasmanode.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Scaffold(ctx, plasmanode.ScaffoldOptions{Platform: "hand"}); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Register(ctx, plasmanode.RegisterOptions{Platform: "hand", Hostname: "box1"}); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Destroy(ctx, plasmanode.DestroyOptions{Platform: "hand"}); !errors.Is(err, plasmanode.ErrNoPrompter) {
		t.Errorf("destroy without prompter or force: %v, want ErrNoPrompter", err)
	}
	res, err := p.Destroy(ctx, plasmanode.DestroyOptions{Platform: "hand", Prompter: &answer{"yes"}})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"box1"}, res.Removed); diff != "" {
		t.Errorf("removed (-want +got):\n%s", diff)
	}
	if ns, err := p.Store.Nodes(ctx, "hand"); err != nil || len(ns) != 0 {
		t.Errorf("nodes after destroy: %v, %v; want none", ns, err)
	}
}

// answer is a Prompter that always gives the same answer.
type answer struct{ s string }

func (a *answer) Prompt(context.Context, string) (string, error) { return a.s, nil }

// blockingPrompter signals asked, waits for release, and declines.
type blockingPrompter struct{ asked, release chan struct{} }

func (b blockingPrompter) Prompt(context.Context, string) (string, error) {
	close(b.asked)
	<-b.release
	return "n", nil
}

func TestProvisionRefusesBadInput(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	p, err := plasmanode.OpenProject(ctx, dir, plasmanode.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, pl := range []plasmanode.ScaffoldOptions{{Platform: "demo", Provider: "hetzner"}, {Platform: "hand", Provider: "manual"}} {
		if _, err := p.Scaffold(ctx, pl); err != nil {
			t.Fatal(err)
		}
	}
	tests := map[string]struct {
		o       plasmanode.ProvisionOptions
		usage   bool
		wantErr string
	}{
		"a spec without a count is a usage error":       {o: plasmanode.ProvisionOptions{Platform: "demo", Specs: []string{"web:cx22"}}, usage: true, wantErr: "web:cx22"},
		"an upper-case zone is a usage error":           {o: plasmanode.ProvisionOptions{Platform: "demo", Specs: []string{"Web:cx22:1"}}, usage: true, wantErr: "Web"},
		"the same zone and type twice is a usage error": {o: plasmanode.ProvisionOptions{Platform: "demo", Specs: []string{"web:cx22:1", "web:cx22:2"}}, usage: true, wantErr: "twice"},
		"no spec and no pools says how to add pools":    {o: plasmanode.ProvisionOptions{Platform: "demo"}, wantErr: "no pools configured"},
		"a manual platform is refused":                  {o: plasmanode.ProvisionOptions{Platform: "hand", Specs: []string{"web:cx22:1"}}, wantErr: "manual provider"},
		"an unknown platform is a usage error":          {o: plasmanode.ProvisionOptions{Platform: "nope", Specs: []string{"web:cx22:1"}}, usage: true, wantErr: "nope"},
	}
	before := snapshotDir(t, dir)
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := p.Provision(ctx, tc.o)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("Provision() error = %v, want one containing %q", err, tc.wantErr)
			}
			if got := plasmanode.IsUsageError(err); got != tc.usage {
				t.Errorf("IsUsageError(%v) = %v, want %v", err, got, tc.usage)
			}
			if diff := cmp.Diff(before, snapshotDir(t, dir)); diff != "" {
				t.Errorf("files changed (-before +after):\n%s", diff)
			}
		})
	}
}

func snapshotDir(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && d.Name() != ".lock" {
			b, _ := os.ReadFile(p)
			rel, _ := filepath.Rel(dir, p)
			out[rel] = string(b)
		}
		return nil
	})
	return out
}

// TestProvisionLowersCount provisions three servers, then lowers the
// count: --auto-approve alone is refused naming --allow-delete, a plain
// "y" declines, a typed "yes" deletes the highest-numbered server, and
// --auto-approve with --allow-delete another; a count of 0 set in
// platform.yaml deletes the last one. Each delete removes the node file;
// refused and declined runs change nothing.
func TestProvisionLowersCount(t *testing.T) {
	c := newCloud(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	if _, err := c.provision(ctx, plasmanode.ProvisionOptions{Specs: []string{"web:cx22:3"}, AutoApprove: true}); err != nil {
		t.Fatal(err)
	}
	names := func() []string {
		var out []string
		for _, s := range c.fake.Servers() {
			out = append(out, s.Name)
		}
		slices.Sort(out)
		return out
	}
	hosts := func() []string {
		var out []string
		for _, n := range c.nodes(t) {
			out = append(out, n.Hostname)
		}
		return out
	}
	all := []string{"demo-web-001", "demo-web-002", "demo-web-003"}
	if diff := cmp.Diff(all, names()); diff != "" {
		t.Fatalf("servers after provision (-want +got):\n%s", diff)
	}

	before := c.files(t)
	_, err := c.provision(ctx, plasmanode.ProvisionOptions{Specs: []string{"web:cx22:2"}, AutoApprove: true})
	var refused *plasmanode.PlanRefusedError
	if !errors.Is(err, plasmanode.ErrDestructivePlan) || !errors.As(err, &refused) || refused.Reason != plasmanode.RefusedDelete ||
		!slices.Equal(refused.ChangeLines(), []string{"hcloud_server.demo_web_003 (action: delete)"}) {
		t.Errorf("lowering under AutoApprove alone: %v, want a PlanRefusedError (RefusedDelete) of demo_web_003", err)
	}
	res, err := c.provision(ctx, plasmanode.ProvisionOptions{Specs: []string{"web:cx22:2"}, Prompter: &answer{"y"}})
	if err != nil || !res.Declined {
		t.Errorf("lowering answered y: %+v, %v; want declined (a typed yes is needed)", res.Summary, err)
	}
	if diff := cmp.Diff(before, c.files(t)); diff != "" {
		t.Errorf("refused and declined runs changed files (-before +after):\n%s", diff)
	}
	if diff := cmp.Diff(all, names()); diff != "" {
		t.Errorf("servers after refused runs (-want +got):\n%s", diff)
	}

	res, err = c.provision(ctx, plasmanode.ProvisionOptions{Specs: []string{"web:cx22:2"}, Prompter: &answer{"yes"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Summary.Deletes) != 1 || res.Summary.Deletes[0].Address != "hcloud_server.demo_web_003" || len(res.Summary.Creates) != 0 {
		t.Errorf("lowering to 2: %s %+v, want one delete of demo_web_003", res.Summary, res.Summary.Deletes)
	}
	if diff := cmp.Diff([]string{"demo-web-003"}, res.Removed); diff != "" {
		t.Errorf("removed (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(all[:2], names()); diff != "" {
		t.Errorf("servers after lowering to 2 (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(all[:2], hosts()); diff != "" {
		t.Errorf("node files after lowering to 2 (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(c.wantFake(t), c.nodes(t)); diff != "" {
		t.Errorf("node files match the fake (-want +got):\n%s", diff)
	}

	res, err = c.provision(ctx, plasmanode.ProvisionOptions{Specs: []string{"web:cx22:1"}, AutoApprove: true, AllowDelete: true})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"demo-web-002"}, res.Removed); diff != "" {
		t.Errorf("removed at 1 (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(all[:1], names()); diff != "" {
		t.Errorf("servers after lowering to 1 (-want +got):\n%s", diff)
	}
	// Converged: the same count again changes nothing.
	if res, err := c.provision(ctx, plasmanode.ProvisionOptions{Specs: []string{"web:cx22:1"}, AutoApprove: true}); err != nil || !res.Summary.Empty() {
		t.Errorf("provision at 1 again: %s, %v; want no change", res.Summary, err)
	}

	if _, err := c.p.Store.UpdatePlatform(ctx, "demo", func(pl *nodes.Platform) error {
		pool := pl.Pools["web"]
		pool.Count = 0
		pl.Pools["web"] = pool
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.provision(ctx, plasmanode.ProvisionOptions{AutoApprove: true}); !errors.Is(err, plasmanode.ErrDestructivePlan) {
		t.Errorf("count 0 under --auto-approve alone: %v, want ErrDestructivePlan", err)
	}
	res, err = c.provision(ctx, plasmanode.ProvisionOptions{AutoApprove: true, AllowDelete: true})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"demo-web-001"}, res.Removed); diff != "" {
		t.Errorf("removed at 0 (-want +got):\n%s", diff)
	}
	if got := c.fake.Servers(); len(got) != 0 {
		t.Errorf("fake servers at count 0: %+v, want none", got)
	}
	if got := hosts(); len(got) != 0 {
		t.Errorf("node files at count 0: %v, want none", got)
	}
}
