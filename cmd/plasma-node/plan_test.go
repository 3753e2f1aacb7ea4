package main

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/plasmactl/plasma-node/nodes"
)

var update = flag.Bool("update", false, "rewrite golden files")

// golden compares got with testdata/name, rewriting it under -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("%s (-want +got; refresh with -update):\n%s", path, diff)
	}
}

// offline unsets every variable that could hold a credential or reach
// a provider, tofu's registry or node-provisioner, and points the
// proxies at a closed port, so that nothing can go out.
func offline(t *testing.T) {
	t.Helper()
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		for _, p := range []string{"HCLOUD_", "SCW_", "OVH_", "AWS_", "NODE_PROVISIONER_", "PG_CONN_STR", "TF_", "PLASMA_NODE_"} {
			if strings.HasPrefix(k, p) {
				t.Setenv(k, "")
				os.Unsetenv(k)
			}
		}
	}
	for _, k := range []string{"HTTPS_PROXY", "HTTP_PROXY", "https_proxy", "http_proxy"} {
		t.Setenv(k, "http://127.0.0.1:9")
	}
	t.Setenv("NO_PROXY", "")
	t.Setenv("TF_CLI_CONFIG_FILE", filepath.Join(t.TempDir(), "none.tfrc"))
}

// planProject makes platform demo of provider with pools web (2 of m1)
// and db (1 of m1) and three nodes: demo-web-001 of machine m0, and
// demo-db-001 and demo-db-002, one more than db's count.
func planProject(t *testing.T, provider string) string {
	t.Helper()
	dir := t.TempDir()
	mustRun(t, dir, "add", "demo", "--provider", provider, "--domain", "example.com")
	ctx := context.Background()
	store := nodes.Open(dir, nodes.Options{})
	if _, err := store.UpdatePlatform(ctx, "demo", func(p *nodes.Platform) error {
		p.Pools = map[string]nodes.Pool{
			"web": {Zones: []string{"platform.web"}, Machine: "m1", Count: 2},
			"db":  {Zones: []string{"platform.db"}, Machine: "m1", Count: 1},
		}
		switch provider {
		case "aws":
			p.Infrastructure.Image = "ami-0123456789abcdef0"
		case "pxe":
			p.Infrastructure.ProvisionerURL = "https://provisioner.invalid:8443"
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	for i, n := range []struct{ host, zone, machine string }{
		{"demo-web-001", "platform.web", "m0"}, {"demo-db-001", "platform.db", "m1"}, {"demo-db-002", "platform.db", "m1"},
	} {
		err := store.CreateNode(ctx, &nodes.Node{Hostname: n.host, Platform: "demo", Zones: []string{n.zone}, Machine: n.machine,
			Network:          nodes.Network{PrivateIP: "192.168.0." + string(rune('1'+i))},
			ProviderMetadata: nodes.ProviderMetadata{Provider: provider, ServerID: string(rune('1' + i))}})
		if err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestProvisionDryRunOffline: for every provider, provision --dry-run
// -o json runs with no credentials and no network, and prints the plan
// derived from the pools and the node files: web's count raised to 3
// by a spec creates two servers, adopts demo-web-001 and changes its
// machine type (a tofu provider's); db's surplus demo-db-002 is deleted.
// Nothing is written.
func TestProvisionDryRunOffline(t *testing.T) {
	offline(t)
	for _, provider := range []string{"scaleway", "hetzner", "ovh", "aws", "manual", "pxe"} {
		t.Run(provider, func(t *testing.T) {
			dir := planProject(t, provider)
			before := snapshot(t, dir)
			r := plasma(t, dir, "provision", "demo", "-z", "web:m1:3", "--dry-run", "-o", "json")
			if r.code != 0 {
				t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.err)
			}
			golden(t, "plan/provision-"+provider+".json", r.stdout)
			if diff := cmp.Diff(before, snapshot(t, dir)); diff != "" {
				t.Errorf("a dry run changed files:\n%s", diff)
			}
			r = plasma(t, dir, "provision", "demo", "-z", "web:m1:3", "--dry-run")
			want := "Plan (offline): 2 to create, 2 to adopt, 1 to update, 1 to delete\n"
			if provider == "manual" || provider == "pxe" {
				want = "Plan (offline): 2 to create, 2 to adopt, 0 to update, 1 to delete\n"
			}
			if r.code != 0 || !strings.Contains(r.stdout, want) {
				t.Errorf("dry run for people: exit %d\n%s%s", r.code, r.stdout, r.err)
			}
		})
	}
}

// TestPlanDocuments: add, delete --dry-run and destroy --dry-run print
// their plans as Plan documents (-o json), with no credentials and no
// network: destroy and delete name the servers from the node files.
// Nothing but add changes a file.
func TestPlanDocuments(t *testing.T) {
	offline(t)
	dir := planProject(t, "hetzner")
	before := snapshot(t, dir)
	for name, args := range map[string][]string{
		"destroy-hetzner.json":    {"destroy", "demo", "--dry-run", "-o", "json"},
		"delete-hetzner.json":     {"delete", "demo-web-001", "--dry-run", "-o", "json"},
		"delete-keep-server.json": {"delete", "demo-db-002", "--keep-server", "--dry-run", "-o", "json"},
		"destroy-keep-nodes.yaml": {"destroy", "demo", "--dry-run", "--keep-nodes", "-o", "yaml"},
	} {
		r := plasma(t, dir, args...)
		if r.code != 0 {
			t.Errorf("%s: exit %d\n%s%s", strings.Join(args, " "), r.code, r.stdout, r.err)
			continue
		}
		golden(t, "plan/"+name, r.stdout)
	}
	if diff := cmp.Diff(before, snapshot(t, dir)); diff != "" {
		t.Errorf("a dry run changed files:\n%s", diff)
	}
	if r := plasma(t, dir, "delete", "demo-web-001", "--dry-run"); r.code != 0 ||
		r.stdout != "Servers of platform demo to destroy:\n  hcloud_server.demo_web_001 (id 1)\nDry run: nothing changed\n" {
		t.Errorf("delete --dry-run for people: exit %d, %q%s", r.code, r.stdout, r.err)
	}
	if r := plasma(t, dir, "provision", "demo", "-o", "json"); r.code != 2 || !strings.Contains(r.err, "--output json needs --dry-run") {
		t.Errorf("provision -o json without --dry-run: exit %d, %s", r.code, r.err)
	}

	dir = t.TempDir()
	golden(t, "plan/add-platform.json", mustRun(t, dir, "add", "demo", "--provider", "manual", "-o", "json"))
	golden(t, "plan/add-node.json", mustRun(t, dir, "add", "demo", "--hostname", "node001", "-z", "web", "-o", "json"))
	if r := plasma(t, dir, "add", "demo", "-o", "xml"); r.code != 2 {
		t.Errorf("add -o xml: exit %d, want 2", r.code)
	}
}
