package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
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
