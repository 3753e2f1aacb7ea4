package main

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/plasmactl/plasma-node/internal/fakehcloud"
	"github.com/plasmactl/plasma-node/internal/tofutest"
	"github.com/plasmactl/plasma-node/nodes"
)

func TestProvisionRefusesBadSpecWithExit2(t *testing.T) {
	tests := map[string]struct {
		args []string
		want string
	}{
		"a spec without a count":          {args: []string{"provision", "demo", "-z", "web:cx22"}, want: "web:cx22"},
		"a spec with a zero count":        {args: []string{"provision", "demo", "-z", "web:cx22:0"}, want: "count"},
		"no spec and no pools":            {args: []string{"provision", "demo"}, want: "no pools configured"},
		"an unknown platform":             {args: []string{"provision", "nope", "-z", "web:cx22:1"}, want: "nope"},
		"provision without a platform":    {args: []string{"provision"}, want: "arg"},
		"the node: alias with a bad spec": {args: []string{"node:provision", "demo", "-z", "::"}, want: "::"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			mustRun(t, dir, "add", "demo", "--provider", "hetzner")
			before := snapshot(t, dir)
			r := plasma(t, dir, tc.args...)
			if r.code != 2 || !strings.Contains(r.err, tc.want) {
				t.Errorf("exit %d, stderr %q; want 2 and a message containing %q", r.code, r.err, tc.want)
			}
			if diff := cmp.Diff(before, snapshot(t, dir)); diff != "" {
				t.Errorf("files changed (-before +after):\n%s", diff)
			}
		})
	}
}

func TestJoinRefusesBadUsageWithExit2(t *testing.T) {
	dir := t.TempDir()
	mustRun(t, dir, "add", "demo", "--provider", "hetzner")
	if _, err := nodes.Open(dir, nodes.Options{}).UpdatePlatform(context.Background(), "demo", func(p *nodes.Platform) error {
		p.Pools = map[string]nodes.Pool{"web": {Zones: []string{"platform.web"}, Machine: "cx22", Count: 1}}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	tests := map[string]struct {
		args []string
		want string
	}{
		"no --server-id":        {args: []string{"join", "demo", "--pool", "web"}, want: "server-id"},
		"no --pool":             {args: []string{"join", "demo", "--server-id", "4711"}, want: "pool"},
		"an unknown pool":       {args: []string{"join", "demo", "--server-id", "4711", "--pool", "db"}, want: "known pools: web"},
		"a malformed server id": {args: []string{"join", "demo", "--server-id", "abc", "--pool", "web"}, want: "abc"},
		"an invalid hostname":   {args: []string{"node:join", "demo", "--server-id", "4711", "--pool", "web", "--hostname", "Bad_Name"}, want: "Bad_Name"},
	}
	before := snapshot(t, dir)
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			r := plasma(t, dir, tc.args...)
			if r.code != 2 || !strings.Contains(r.err, tc.want) {
				t.Errorf("exit %d, stderr %q; want 2 and a message containing %q", r.code, r.err, tc.want)
			}
			if diff := cmp.Diff(before, snapshot(t, dir)); diff != "" {
				t.Errorf("files changed (-before +after):\n%s", diff)
			}
		})
	}
}

// TestProvisionUnknownProviderExitsTwo: a platform.yaml naming a provider
// plasma-node does not have is bad input, naming the ones it has.
func TestProvisionUnknownProviderExitsTwo(t *testing.T) {
	dir := t.TempDir()
	mustRun(t, dir, "add", "demo", "--provider", "hetzner")
	if _, err := nodes.Open(dir, nodes.Options{}).UpdatePlatform(context.Background(), "demo", func(p *nodes.Platform) error {
		p.Infrastructure.MetalProvider = "gcp"
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	r := plasma(t, dir, "provision", "demo", "-z", "web:n1:1")
	want := `plasma-node: platform demo: provider "gcp": unknown provider (known: aws, hetzner, manual, ovh, pxe, scaleway)` + "\n"
	if diff := cmp.Diff(result{code: 2, err: want}, r, cmp.AllowUnexported(result{})); diff != "" {
		t.Errorf("provision (-want +got):\n%s", diff)
	}
}

func TestProvisionManualPlatformIsRefused(t *testing.T) {
	dir := t.TempDir()
	mustRun(t, dir, "add", "hand")
	r := plasma(t, dir, "provision", "hand", "-z", "web:cx22:1")
	if r.code != 1 || !strings.Contains(r.err, "manual provider") {
		t.Errorf("exit %d, stderr %q; want 1 naming the manual provider", r.code, r.err)
	}
}

// TestProvisionAndDestroyCommands runs provision and destroy through the
// CLI, with the real tofu and hcloud plugin against the fake API.
func TestProvisionAndDestroyCommands(t *testing.T) {
	bin := tofutest.Binary(t)
	t.Setenv("TF_CLI_CONFIG_FILE", tofutest.CLIConfig(t, tofutest.Mirror(t, tofutest.Hcloud)))
	t.Setenv("HCLOUD_TOKEN", "")
	token := strings.Repeat("f", 64)
	fake := fakehcloud.Start(token)
	defer fake.Close()
	dir := t.TempDir()
	mustRun(t, dir, "add", "demo", "--provider", "hetzner")
	if _, err := nodes.Open(dir, nodes.Options{}).UpdatePlatform(context.Background(), "demo", func(p *nodes.Platform) error {
		p.Infrastructure.API = nodes.API{URI: fake.Endpoint(), Token: token}
		return nil
	}); err != nil {
		t.Fatal(err)
	}

	out := mustRun(t, dir, "provision", "demo", "-z", "web:cx22:2", "--auto-approve", "--tofu", bin)
	for _, s := range []string{"Plan: 0 to import, 2 to create", "Node demo-web-001@demo", "Node demo-web-002@demo"} {
		if !strings.Contains(out, s) {
			t.Errorf("provision output does not contain %q:\n%s", s, out)
		}
	}
	if n := len(fake.Servers()); n != 2 {
		t.Fatalf("fake holds %d servers, want 2", n)
	}
	out = mustRun(t, dir, "node:provision", "demo", "--dry-run", "--tofu", bin)
	if !strings.Contains(out, "2 to import, 0 to create") || !strings.Contains(out, "Dry run") {
		t.Errorf("dry run output:\n%s", out)
	}
	extra := fake.AddServer("handmade", "cx22", "debian-12", "fsn1")
	out = mustRun(t, dir, "join", "demo", "--server-id", strconv.FormatInt(extra.ID, 10), "--pool", "web", "--auto-approve", "--tofu", bin)
	if !strings.Contains(out, "as node handmade@demo") {
		t.Errorf("join output:\n%s", out)
	}
	out = mustRun(t, dir, "destroy", "demo", "--force", "--tofu", bin)
	if !strings.Contains(out, "Removed node handmade@demo") || len(fake.Servers()) != 0 {
		t.Errorf("destroy left %d servers; output:\n%s", len(fake.Servers()), out)
	}
	for f := range snapshot(t, dir) {
		if strings.Contains(f, "/nodes/") {
			t.Errorf("node file %s left after destroy", f)
		}
	}
}

// TestProvisionIsQuietByDefault: a dry run prints plasma-node's own plan
// (what happens to which node) and nothing on stderr; tofu's own output
// comes with -v or into --tofu-log; a tofu init failure is reported once.
func TestProvisionIsQuietByDefault(t *testing.T) {
	bin := tofutest.Binary(t)
	t.Setenv("TF_CLI_CONFIG_FILE", tofutest.CLIConfig(t, tofutest.Mirror(t, tofutest.Hcloud)))
	t.Setenv("HCLOUD_TOKEN", "")
	token := strings.Repeat("f", 64)
	fake := fakehcloud.Start(token)
	defer fake.Close()
	dir := t.TempDir()
	mustRun(t, dir, "add", "demo", "--provider", "hetzner")
	if _, err := nodes.Open(dir, nodes.Options{}).UpdatePlatform(context.Background(), "demo", func(p *nodes.Platform) error {
		p.Infrastructure.API = nodes.API{URI: fake.Endpoint(), Token: token}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	r := plasma(t, dir, "provision", "demo", "-z", "web:cx22:2", "--dry-run", "--tofu", bin)
	want := "Plan: 0 to import, 2 to create, 0 to update (0 destructive), 0 to replace, 0 to delete\n" +
		"  create  demo-web-001  hcloud_server.demo_web_001\n" +
		"  create  demo-web-002  hcloud_server.demo_web_002\n" +
		"Dry run: nothing applied or written\n"
	if diff := cmp.Diff(result{stdout: want}, r, cmp.AllowUnexported(result{})); diff != "" {
		t.Errorf("quiet dry run (-want +got):\n%s", diff)
	}
	const tofuSays = "will perform the following actions"
	if r := plasma(t, dir, "provision", "demo", "-z", "web:cx22:2", "--dry-run", "--tofu", bin, "-v"); r.code != 0 || !strings.Contains(r.stdout, tofuSays) {
		t.Errorf("dry run -v: exit %d, no tofu plan in stdout:\n%s", r.code, r.stdout)
	}
	log := filepath.Join(t.TempDir(), "tofu.log")
	r = plasma(t, dir, "provision", "demo", "-z", "web:cx22:2", "--dry-run", "--tofu", bin, "--tofu-log", log)
	b, _ := os.ReadFile(log)
	if r.stdout != want || !strings.Contains(string(b), tofuSays) {
		t.Errorf("dry run --tofu-log: stdout %q, log %q", r.stdout, b)
	}

	rc := filepath.Join(t.TempDir(), "none.tfrc")
	os.WriteFile(rc, []byte(`provider_installation {
  filesystem_mirror {
    path    = "/nonexistent"
    include = ["*/*/*"]
  }
  direct { exclude = ["*/*/*"] }
}
`), 0o644)
	t.Setenv("TF_CLI_CONFIG_FILE", rc)
	r = plasma(t, dir, "provision", "demo", "-z", "web:cx22:2", "--dry-run", "--tofu", bin)
	if r.code != 1 || strings.Count(r.err, "tofu init") != 1 || strings.Count(r.err, "Failed to resolve provider packages") != 1 || !strings.HasPrefix(r.err, "plasma-node: tofu init: ") {
		t.Errorf("init failure: exit %d, stderr %q; want tofu's error once, prefixed once", r.code, r.err)
	}
}
