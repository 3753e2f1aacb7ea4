package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/plasmactl/plasma-node/internal/fakescaleway"
	"github.com/plasmactl/plasma-node/internal/tofutest"
	"github.com/plasmactl/plasma-node/nodes"
)

// TestScalewayJoinFlow joins three Elastic Metal servers made outside
// plasma-node through the plasma-node binary, with the real tofu and the
// real Scaleway plugin against internal/fakescaleway: one under its name,
// one whose name is no hostname under the name derived from its zoned id
// (fr-par-2-<first group of its UUID>), one with --hostname (written back
// as its name). A provision afterwards is converged and nothing is
// reinstalled. The access and secret keys reach the plugin through the
// environment only.
func TestScalewayJoinFlow(t *testing.T) {
	const secret = "3f1b0c2e-6a4d-4c5e-9f8a-7b6c5d4e3f2a"
	const project = "0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d"
	fake := fakescaleway.Start(secret)
	defer fake.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	tofuBin := tofutest.Binary(t)
	rc := tofutest.CLIConfig(t, tofutest.Mirror(t, tofutest.Scaleway))
	dir := t.TempDir()
	env := append(os.Environ(), "TF_CLI_CONFIG_FILE="+rc, "HOME="+t.TempDir(),
		"SCW_ACCESS_KEY=SCWFAKEFAKEFAKEFAKE1", "SCW_SECRET_KEY="+secret, "SCW_DEFAULT_PROJECT_ID=")
	run := func(args ...string) string {
		t.Helper()
		if args[0] == "join" || args[0] == "provision" {
			args = append(args, "--tofu", tofuBin)
		}
		c := exec.CommandContext(ctx, filepath.Join(bin, "plasma-node"), append([]string{"--dir", dir}, args...)...)
		c.Env = env
		out, err := c.CombinedOutput()
		if err != nil {
			t.Fatalf("plasma-node %s: %v\n%s\nfake calls: %v", strings.Join(args, " "), err, out, fake.Calls())
		}
		return string(out)
	}
	run("add", "demo", "--provider", "scaleway")
	store := nodes.Open(dir, nodes.Options{})
	if _, err := store.UpdatePlatform(ctx, "demo", func(p *nodes.Platform) error {
		p.Infrastructure.API = nodes.API{URI: fake.Endpoint()}
		p.Infrastructure.Zone, p.Infrastructure.ProjectID = "fr-par-2", project
		p.Pools = map[string]nodes.Pool{"db": {Zones: []string{"platform.db"}, Machine: "EM-A115X-SSD"}}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	add := func(id, name, ip string) string {
		fake.AddServer(fakescaleway.Server{ID: id, Zone: "fr-par-2", Name: name, ProjectID: project,
			OfferID: "a5065ba4-dde2-45f3-adec-1ebbb27b766b", OSID: "96e5f0f2-d216-4de2-8a15-68730d877885", IPv4: ip})
		return "fr-par-2/" + id
	}
	a := add("11111111-2222-4333-8444-555555555501", "em-1", "51.159.0.1")
	b := add("22222222-2222-4333-8444-555555555502", "My Server", "51.159.0.2")
	c := add("33333333-2222-4333-8444-555555555503", "old-name", "51.159.0.3")

	start := time.Now()
	for _, j := range []struct {
		id   string
		args []string
		node string
	}{
		{a, nil, "em-1"},
		{b, nil, "fr-par-2-22222222"},
		{c, []string{"--hostname", "custom"}, "custom"},
	} {
		out := run(append([]string{"join", "demo", "--server-id", j.id, "--pool", "db", "--auto-approve"}, j.args...)...)
		if !strings.Contains(out, "as node "+j.node+"@demo") {
			t.Errorf("join %s: want node %s:\n%s", j.id, j.node, out)
		}
	}
	t.Logf("three joins took %s", time.Since(start).Round(time.Second))
	got := map[string][2]string{}
	ns, err := store.Nodes(ctx, "demo")
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range ns {
		got[n.Hostname] = [2]string{n.ProviderMetadata.ServerID, n.Network.PublicIP}
	}
	want := map[string][2]string{"em-1": {a, "51.159.0.1"}, "fr-par-2-22222222": {b, "51.159.0.2"}, "custom": {c, "51.159.0.3"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("node files (-want +got):\n%s", diff)
	}
	names := map[string]string{}
	for _, s := range fake.Servers() {
		names[s.ID] = s.Name
	}
	if names["33333333-2222-4333-8444-555555555503"] != "custom" {
		t.Errorf("server names after the joins %v, want custom written back", names)
	}
	// Every joined server is adopted again; names and tags converge on
	// the first provision, the next plans no change.
	out := run("provision", "demo", "--auto-approve")
	if !strings.Contains(out, "Plan: 3 to import, 0 to create") || !strings.Contains(out, "0 destructive), 0 to replace, 0 to delete") {
		t.Errorf("provision after the joins:\n%s", out)
	}
	if out := run("provision", "demo", "--auto-approve"); !strings.Contains(out, noChange) {
		t.Errorf("second provision after the joins is not converged:\n%s", out)
	}
	for _, call := range fake.Calls() {
		if strings.Contains(call, "/install") || strings.HasPrefix(call, "POST ") || strings.HasPrefix(call, "DELETE ") {
			t.Errorf("a join or provision of adopted servers called %s", call)
		}
	}
	t.Logf("fake calls: %v", fake.Calls())
	assertNoSecretIn(t, dir, secret)
}

// TestScalewayProvisionFlow runs the Hetzner flow's steps for Scaleway
// Elastic Metal through the plasma-node binary, with the real tofu and
// the real Scaleway plugin against internal/fakescaleway: provision 3,
// the same again changes nothing, count 4 creates one, a lowered count
// deletes the last server only with --allow-delete, destroy leaves no
// server and no node file.
func TestScalewayProvisionFlow(t *testing.T) {
	const secret = "4e2d1c0b-6a4d-4c5e-9f8a-7b6c5d4e3f2a"
	fake := fakescaleway.Start(secret)
	defer fake.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	tofuBin := tofutest.Binary(t)
	rc := tofutest.CLIConfig(t, tofutest.Mirror(t, tofutest.Scaleway))
	dir := t.TempDir()
	env := append(os.Environ(), "TF_CLI_CONFIG_FILE="+rc, "HOME="+t.TempDir(),
		"SCW_ACCESS_KEY=SCWFAKEFAKEFAKEFAKE2", "SCW_SECRET_KEY="+secret, "SCW_DEFAULT_PROJECT_ID=")
	cmd := func(args ...string) *exec.Cmd {
		if slices.Contains([]string{"provision", "join", "destroy"}, args[0]) {
			args = append(args, "--tofu", tofuBin)
		}
		c := exec.CommandContext(ctx, filepath.Join(bin, "plasma-node"), append([]string{"--dir", dir}, args...)...)
		c.Env = env
		return c
	}
	run := func(args ...string) string {
		t.Helper()
		out, err := cmd(args...).CombinedOutput()
		if err != nil {
			t.Fatalf("plasma-node %s: %v\n%s\nfake calls: %v", strings.Join(args, " "), err, out, fake.Calls())
		}
		return string(out)
	}
	run("add", "demo", "--provider", "scaleway")
	store := nodes.Open(dir, nodes.Options{})
	if _, err := store.UpdatePlatform(ctx, "demo", func(p *nodes.Platform) error {
		p.Infrastructure.API = nodes.API{URI: fake.Endpoint()}
		p.Infrastructure.Zone, p.Infrastructure.ProjectID = "fr-par-2", "0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d"
		p.Infrastructure.Image = "96e5f0f2-d216-4de2-8a15-68730d877885"
		p.Infrastructure.SSHKeyID = "4f1c2a4e-6f6d-4d8f-9e0b-2b1a3c4d5e6f"
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	check := func(step string, want int) {
		t.Helper()
		servers, ns := fake.Servers(), map[string]*nodes.Node{}
		list, err := store.Nodes(ctx, "demo")
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range list {
			ns[n.ProviderMetadata.ServerID] = n
		}
		if len(servers) != want || len(ns) != want {
			t.Fatalf("%s: fake holds %d servers, %d node files; want %d of each", step, len(servers), len(ns), want)
		}
		for _, s := range servers {
			n := ns[s.Zone+"/"+s.ID]
			if n == nil || n.Hostname != s.Name || n.Network.PublicIP != s.IPv4 || n.Network.PrivateIP == "" {
				t.Errorf("%s: server %s (%s, %s) has node %+v, want one of that name and address", step, s.ID, s.Name, s.IPv4, n)
			}
		}
	}
	start := time.Now()
	if out := run("provision", "demo", "-z", "db:EM-A115X-SSD:3", "--auto-approve"); !strings.Contains(out, "3 to create") {
		t.Errorf("first provision does not plan 3 creates:\n%s", out)
	}
	t.Logf("provision 3 took %s", time.Since(start).Round(time.Second))
	check("provision 3", 3)
	if out := run("provision", "demo", "-z", "db:EM-A115X-SSD:3", "--auto-approve"); !strings.Contains(out, noChange) {
		t.Errorf("same provision again is not a no-change run:\n%s", out)
	}
	if out := run("provision", "demo", "-z", "db:EM-A115X-SSD:4", "--auto-approve"); !strings.Contains(out, "1 to create") {
		t.Errorf("count 4 does not plan one create:\n%s", out)
	}
	check("count 4", 4)
	refused, err := cmd("provision", "demo", "-z", "db:EM-A115X-SSD:3", "--auto-approve").CombinedOutput()
	if err == nil || !strings.Contains(string(refused), "--allow-delete") {
		t.Errorf("lowering under --auto-approve alone: %v, want a refusal naming --allow-delete\n%s", err, refused)
	}
	check("lowering refused", 4)
	if out := run("provision", "demo", "-z", "db:EM-A115X-SSD:3", "--auto-approve", "--allow-delete"); !strings.Contains(out, "1 to delete") || !strings.Contains(out, "demo-db-004@demo") {
		t.Errorf("lowering with --allow-delete does not delete demo-db-004:\n%s", out)
	}
	check("lowered", 3)
	if out := run("destroy", "demo", "--force"); strings.Count(out, "Removed node ") != 3 {
		t.Errorf("destroy does not remove 3 nodes:\n%s", out)
	}
	check("destroyed", 0)
	for _, call := range fake.Calls() {
		if strings.Contains(call, "/install") {
			t.Errorf("the flow reinstalled a server: %s", call)
		}
	}
	t.Logf("flow took %s; fake calls: %v", time.Since(start).Round(time.Second), fake.Calls())
	assertNoSecretIn(t, dir, secret)
}
