package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	plasmanode "github.com/plasmactl/plasma-node"
	"github.com/plasmactl/plasma-node/internal/fakehcloud"
	"github.com/plasmactl/plasma-node/internal/tofutest"
	"github.com/plasmactl/plasma-node/nodes"
)

// TestDeleteOneNode runs delete through the CLI with the real tofu and
// hcloud plugin against the fake API: without a terminal and --force it
// refuses at once naming --force, a "no" is Cancelled, --force destroys
// the one server, lowers its pool's count (the next provision changes
// nothing) and removes the node file; --keep-server (as node:delete)
// removes the file and lowers the pool's count, leaving the server; a node
// without a server only loses its file, after the same confirmation; an
// unknown node is exit 2.
func TestDeleteOneNode(t *testing.T) {
	bin := tofutest.Binary(t)
	t.Setenv("TF_CLI_CONFIG_FILE", tofutest.CLIConfig(t, tofutest.Mirror(t, tofutest.Hcloud)))
	t.Setenv("HCLOUD_TOKEN", "")
	token := strings.Repeat("f", 64)
	fake := fakehcloud.Start(token)
	defer fake.Close()
	dir := t.TempDir()
	mustRun(t, dir, "add", "demo", "--provider", "hetzner")
	store := nodes.Open(dir, nodes.Options{})
	if _, err := store.UpdatePlatform(context.Background(), "demo", func(p *nodes.Platform) error {
		p.Infrastructure.API = nodes.API{URI: fake.Endpoint(), Token: token}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	mustRun(t, dir, "provision", "demo", "-z", "web:cx22:3", "--auto-approve", "--tofu", bin)
	mustRun(t, dir, "add", "demo", "--hostname", "byhand", "--public-ip", "51.159.0.9")
	servers := func() []string {
		var names []string
		for _, s := range fake.Servers() {
			names = append(names, s.Name)
		}
		slices.Sort(names)
		return names
	}
	ids := map[string]string{}
	for _, s := range fake.Servers() {
		ids[s.Name] = strconv.FormatInt(s.ID, 10)
	}
	id := ids["demo-web-002"]
	// The files of the project, without tofu's work folder under .plasma.
	files := func() map[string]string {
		m := snapshot(t, dir)
		for f := range m {
			if strings.HasPrefix(f, ".plasma/") {
				delete(m, f)
			}
		}
		return m
	}
	before := files()

	r := plasma(t, dir, "delete", "demo-web-002", "--tofu", bin)
	if r.code != 1 || !strings.Contains(r.err, "pass --force or run on a terminal") {
		t.Errorf("delete without a terminal: exit %d, stderr %q; want 1 naming --force", r.code, r.err)
	}
	typing, term := openPTY(t)
	if _, err := typing.WriteString("no\n"); err != nil {
		t.Fatal(err)
	}
	r = runAs(t, term, "--dir", dir, "delete", "demo-web-002", "--tofu", bin)
	if r.code != 1 || r.err != plasmanode.PromptDestroy+"Cancelled\n" || !strings.Contains(r.stdout, "Servers of platform demo to destroy:\n  hcloud_server.demo_web_002 (id "+id+")") {
		t.Errorf("declined delete: exit %d, stdout %q, stderr %q; want 1, the server and Cancelled", r.code, r.stdout, r.err)
	}
	if diff := cmp.Diff(before, files()); diff != "" || len(fake.Servers()) != 3 {
		t.Errorf("refused and declined deletes changed something: %d servers, files (-before +after):\n%s", len(fake.Servers()), diff)
	}

	out := mustRun(t, dir, "delete", "demo-web-002", "-e", "demo", "--force", "--tofu", bin)
	want := "Servers of platform demo to destroy:\n  hcloud_server.demo_web_002 (id " + id + ")\n" +
		"Destroyed server " + id + " of node demo-web-002@demo (pool web: count lowered by one)\nRemoved node demo-web-002@demo\n"
	if diff := cmp.Diff(want, out); diff != "" {
		t.Errorf("delete --force output (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"demo-web-001", "demo-web-003"}, servers()); diff != "" {
		t.Errorf("servers after delete (-want +got):\n%s", diff)
	}
	if p, _ := store.Platform(context.Background(), "demo"); p.Pools["web"].Count != 2 {
		t.Errorf("pool web count %d after delete, want 2", p.Pools["web"].Count)
	}
	if out := mustRun(t, dir, "provision", "demo", "--dry-run", "--tofu", bin); !strings.Contains(out, "2 to import, 0 to create, 0 to update (0 destructive), 0 to replace, 0 to delete") {
		t.Errorf("provision after delete is not converged:\n%s", out)
	}

	out = mustRun(t, dir, "node:delete", "demo-web-003", "--keep-server", "--force")
	id3 := ids["demo-web-003"]
	if want := "Node files of platform demo to remove (no server is destroyed): demo-web-003\nKept server " + id3 + " of node demo-web-003@demo: it is no longer in the project (pool web: count lowered by one)\nRemoved node demo-web-003@demo\n"; out != want {
		t.Errorf("delete --keep-server output %q, want %q", out, want)
	}
	if len(fake.Servers()) != 2 {
		t.Errorf("--keep-server destroyed a server: %v", servers())
	}
	// The kept server left the pool: the next provision makes no second
	// server of its hostname.
	if p, _ := store.Platform(context.Background(), "demo"); p.Pools["web"].Count != 1 {
		t.Errorf("pool web count %d after delete --keep-server, want 1", p.Pools["web"].Count)
	}
	if out := mustRun(t, dir, "provision", "demo", "--dry-run", "--tofu", bin); !strings.Contains(out, "1 to import, 0 to create") {
		t.Errorf("provision after delete --keep-server would create a server:\n%s", out)
	}
	// With credentials, -o json is tofu's classified plan: the kept
	// server joins back as an adoption, raising the pool's count; nothing
	// is written.
	var joined plasmanode.Plan
	if err := json.Unmarshal([]byte(mustRun(t, dir, "join", "demo", "--server-id", id3, "--pool", "web", "--hostname", "back", "--dry-run", "-o", "json", "--tofu", bin)), &joined); err != nil {
		t.Fatal(err)
	}
	wantJoin := []plasmanode.PlanChange{
		{Action: plasmanode.ActionUpdate, Object: plasmanode.ObjectPool, Pool: "web", Machine: "cx22", Attributes: []string{"count"}, Detail: "count 1 -> 2"},
		{Action: plasmanode.ActionAdopt, Object: plasmanode.ObjectServer, Node: "back", Pool: "web", Machine: "cx22", ServerID: id3, Resource: "hcloud_server.demo_web_002"},
		// Its name becomes the hostname given (and the provider's
		// attributes that are not in state yet get their defaults).
		{Action: plasmanode.ActionUpdate, Object: plasmanode.ObjectServer, Node: "back", Pool: "web", Machine: "cx22", ServerID: id3, Resource: "hcloud_server.demo_web_002",
			Attributes: []string{"allow_deprecated_images", "ignore_remote_firewall_ids", "keep_disk", "name", "shutdown_before_deletion"}},
		{Action: plasmanode.ActionAdopt, Object: plasmanode.ObjectServer, Node: "demo-web-001", Pool: "web", Machine: "cx22", ServerID: ids["demo-web-001"], Resource: "hcloud_server.demo_web_001"},
	}
	if joined.Source != plasmanode.SourceTofu || joined.Operation != plasmanode.OpJoin || !joined.DryRun {
		t.Errorf("join --dry-run -o json: %+v", joined)
	}
	if diff := cmp.Diff(wantJoin, joined.Changes); diff != "" {
		t.Errorf("join --dry-run -o json changes (-want +got):\n%s", diff)
	}
	if r := plasma(t, dir, "delete", "byhand"); r.code != 1 || !strings.Contains(r.err, "pass --force or run on a terminal") {
		t.Errorf("delete of a node without a server, without a terminal: exit %d, stderr %q; want 1 naming --force", r.code, r.err)
	}
	if out := mustRun(t, dir, "delete", "byhand", "--force"); out != "Node files of platform demo to remove (no server is destroyed): byhand\nRemoved node byhand@demo\n" {
		t.Errorf("delete of a node without a server: %q", out)
	}
	var left []string
	for f := range files() {
		if strings.Contains(f, "/nodes/") {
			left = append(left, f)
		}
	}
	if diff := cmp.Diff([]string{"platforms/demo/nodes/demo-web-001.yaml"}, left); diff != "" {
		t.Errorf("node files left (-want +got):\n%s", diff)
	}
	if r := plasma(t, dir, "delete", "nosuch"); r.code != 2 || !strings.Contains(r.err, "nosuch") {
		t.Errorf("delete of an unknown node: exit %d, stderr %q; want 2 naming it", r.code, r.err)
	}
}

// TestDeleteBareMetalNode: on a pxe platform delete withdraws the node's
// pending registration from node-provisioner's state folder (after
// --force; without a terminal it refuses), lowers the pool's count and
// removes the node file; the other registration stays.
func TestDeleteBareMetalNode(t *testing.T) {
	dir, state := t.TempDir(), t.TempDir()
	hw := filepath.Join(dir, "hardware.yaml")
	os.WriteFile(hw, []byte("machines:\n  - macs: [\"52:54:00:de:ad:01\"]\n    boot_disk: sda\n  - macs: [\"52:54:00:de:ad:02\"]\n    boot_disk: sda\n"), 0o644)
	mustRun(t, dir, "add", "metal", "--provider", "pxe", "--domain", "mgmt.example")
	mustRun(t, dir, "--provisioner-dir", state, "provision", "metal", "-z", "foundation.cluster.control:pve:2", "--hardware", hw, "--auto-approve")
	regs := func() []string {
		names, _ := filepath.Glob(filepath.Join(state, "registrations", "*.json"))
		for i, n := range names {
			names[i] = filepath.Base(n)
		}
		return names
	}
	if r := plasma(t, dir, "--provisioner-dir", state, "delete", "metal-control-002"); r.code != 1 || !strings.Contains(r.err, "pass --force") {
		t.Errorf("delete without a terminal: exit %d, stderr %q", r.code, r.err)
	}
	out := mustRun(t, dir, "--provisioner-dir", state, "delete", "metal-control-002", "--force")
	want := "Nodes of platform metal to withdraw (pending registrations are removed; installed machines are not wiped):\n  metal-control-002\n" +
		"Withdrew machine 52:54:00:de:ad:02 of node metal-control-002@metal (pool control: count lowered by one)\nRemoved node metal-control-002@metal\n"
	if diff := cmp.Diff(want, out); diff != "" {
		t.Errorf("delete on pxe (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"metal-control-001.json"}, regs()); diff != "" {
		t.Errorf("registrations after delete (-want +got):\n%s", diff)
	}
	if p, _ := nodes.Open(dir, nodes.Options{}).Platform(context.Background(), "metal"); p.Pools["control"].Count != 1 {
		t.Errorf("pool control count %d, want 1", p.Pools["control"].Count)
	}
}

// TestDestroyFindsTheRegistrationsWhereProvisionPutThem: provision with
// --provisioner-dir records the folder in platform.yaml, so destroy
// without the flag withdraws the pending registrations from it; a
// destroy pointed at a folder holding none of them (or none at all)
// exits 1 naming it and changes nothing.
func TestDestroyFindsTheRegistrationsWhereProvisionPutThem(t *testing.T) {
	dir, state := t.TempDir(), t.TempDir()
	t.Setenv("NODE_PROVISIONER_STATE_DIR", "")
	hw := filepath.Join(dir, "hardware.yaml")
	os.WriteFile(hw, []byte("machines:\n  - macs: [\"52:54:00:de:ad:01\"]\n    boot_disk: sda\n  - macs: [\"52:54:00:de:ad:02\"]\n    boot_disk: sda\n"), 0o644)
	mustRun(t, dir, "add", "metal", "--provider", "pxe", "--domain", "mgmt.example")
	mustRun(t, dir, "--provisioner-dir", state, "provision", "metal", "-z", "foundation.cluster.control:pve:2", "--hardware", hw, "--auto-approve")
	p, err := nodes.Open(dir, nodes.Options{}).Platform(context.Background(), "metal")
	if err != nil || p.Infrastructure.ProvisionerDir != state {
		t.Fatalf("platform.yaml provisioner_dir = %q (%v), want %q", p.Infrastructure.ProvisionerDir, err, state)
	}
	regs := func() []string {
		names, _ := filepath.Glob(filepath.Join(state, "registrations", "*.json"))
		return names
	}
	before := snapshot(t, dir)
	for name, args := range map[string][]string{
		"a folder that does not exist":    {"--provisioner-dir", filepath.Join(dir, "absent"), "destroy", "metal", "--force"},
		"a folder holding none of them":   {"--provisioner-dir", t.TempDir(), "destroy", "metal", "--force"},
		"delete through an absent folder": {"--provisioner-dir", filepath.Join(dir, "absent"), "delete", "metal-control-001", "--force"},
	} {
		r := plasma(t, dir, args...)
		if r.code != 1 || !strings.Contains(r.err, "registrations not reachable") || strings.Contains(r.stdout, "Withdrew") {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want 1 saying the registrations are not reachable", name, r.code, r.stdout, r.err)
		}
		if diff := cmp.Diff(before, snapshot(t, dir)); diff != "" {
			t.Errorf("%s changed the project (-before +after):\n%s", name, diff)
		}
		if len(regs()) != 2 {
			t.Errorf("%s: registrations %v, want both kept", name, regs())
		}
	}
	mustRun(t, dir, "destroy", "metal", "--force")
	if left := regs(); len(left) != 0 {
		t.Errorf("destroy without --provisioner-dir left the pending registrations %v", left)
	}
}
