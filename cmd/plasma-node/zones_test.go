package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestRegisterDeallocateQueryValidate runs plasmactl-node's four other
// commands through the CLI: exit codes, the text that matters, the JSON
// results, and nothing written on bad input.
func TestRegisterDeallocateQueryValidate(t *testing.T) {
	dir := setup(t) // demo: node001 (platform.foundation.cluster.control), node002 (platform.cognition.data)
	if out := mustRun(t, dir, "register", "demo", "--hostname", "node003", "--public-ip", "51.159.0.3", "-z", "foundation.cluster.nodes"); !strings.HasPrefix(out, "Registered node node003@demo (private IP 192.168.0.3)") {
		t.Errorf("register: %q", out)
	}
	mustRun(t, dir, "node:allocate", "node001", "platform.cognition.data")
	before := snapshot(t, dir)
	bad := map[string]struct {
		args []string
		want string
	}{
		"register without --public-ip":   {[]string{"register", "demo", "--hostname", "node004"}, "--public-ip is required"},
		"register without --hostname":    {[]string{"node:register", "demo", "--public-ip", "51.159.0.4"}, "--hostname is required"},
		"register a taken public IP":     {[]string{"register", "demo", "--hostname", "node004", "--public-ip", "51.159.0.1"}, "--public-ip: 51.159.0.1 is already used by node node001"},
		"deallocate a zone not held":     {[]string{"deallocate", "node001", "platform.interaction"}, `zone "platform.interaction" is not allocated to the node`},
		"deallocate a zone above":        {[]string{"deallocate", "node001", "foundation"}, "only zones below it (it has platform.cognition.data, platform.foundation.cluster.control); --recursive removes the zones below it too"},
		"deallocate without a zone":      {[]string{"deallocate", "node001"}, "usage: plasma-node deallocate"},
		"query a malformed zone":         {[]string{"query", "Foundation"}, `zone "Foundation"`},
		"validate an unknown name":       {[]string{"validate", "nope"}, `"nope" is neither a platform nor a node`},
		"query with a bad output format": {[]string{"node:query", "foundation", "-o", "xml"}, `--output "xml"`},
		"an ip pool where none is defined": {[]string{"add", "demo", "--hostname", "node004", "--ip-pool", "nope"},
			"no pools defined in " + filepath.Join(dir, "platforms/demo/platform.yaml") + " networking.ip_pools"},
		"join a pool where none is defined": {[]string{"join", "demo", "--server-id", "4711", "--pool", "x"},
			`pool "x": unknown pool: no pools defined in ` + filepath.Join(dir, "platforms/demo/platform.yaml")},
	}
	for name, tc := range bad {
		t.Run(name, func(t *testing.T) {
			r := plasma(t, dir, tc.args...)
			if r.code != 2 || !strings.Contains(r.err, tc.want) {
				t.Errorf("exit %d, stderr %q; want 2 and %q", r.code, r.err, tc.want)
			}
			if diff := cmp.Diff(before, snapshot(t, dir)); diff != "" {
				t.Errorf("files changed (-before +after):\n%s", diff)
			}
		})
	}

	var q struct {
		Nodes []map[string]any `json:"nodes"`
	}
	if err := json.Unmarshal([]byte(mustRun(t, dir, "query", "foundation.cluster", "-o", "json")), &q); err != nil {
		t.Fatal(err)
	}
	wantQ := []map[string]any{
		{"node": "node001", "platform": "demo", "zones": []any{"platform.foundation.cluster.control"}},
		{"node": "node003", "platform": "demo", "zones": []any{"platform.foundation.cluster.nodes"}},
	}
	if diff := cmp.Diff(wantQ, q.Nodes); diff != "" {
		t.Errorf("query -o json nodes (-want +got):\n%s", diff)
	}

	out := mustRun(t, dir, "node:deallocate", "node001", "platform.foundation", "--recursive")
	if !strings.HasPrefix(out, "Removed from node001@demo: platform.foundation.cluster.control\n") {
		t.Errorf("deallocate --recursive: %q", out)
	}
	var d map[string]any
	if err := json.Unmarshal([]byte(mustRun(t, dir, "deallocate", "node001", "platform.cognition.data", "-o", "json")), &d); err != nil {
		t.Fatal(err)
	}
	wantD := map[string]any{"hostname": "node001", "platform": "demo", "removed": []any{"platform.cognition.data"}, "zones": []any{}, "modified": true}
	if diff := cmp.Diff(wantD, d); diff != "" {
		t.Errorf("deallocate -o json (-want +got):\n%s", diff)
	}

	// Warnings only (no topology.yaml, node002 without a public IP): exit 0.
	r := plasma(t, dir, "validate")
	if r.code != 0 || !strings.Contains(r.stdout, "3 of 3 nodes valid, with warnings") || !strings.Contains(r.stdout, "node002  demo      warning  public_ip: not set") {
		t.Errorf("validate with warnings: exit %d\n%s%s", r.code, r.stdout, r.err)
	}
	// An error: a duplicate private IP in node003's file.
	f := filepath.Join(dir, "platforms/demo/nodes/node003.yaml")
	b, _ := os.ReadFile(f)
	os.WriteFile(f, []byte(strings.Replace(string(b), "192.168.0.3", "192.168.0.1", 1)), 0o644)
	r = plasma(t, dir, "validate", "demo", "-o", "json")
	var v struct {
		Nodes []struct {
			Hostname  string `json:"hostname"`
			Platform  string `json:"platform"`
			Valid     bool   `json:"valid"`
			HasErrors bool   `json:"has_errors"`
			Checks    []struct {
				Name, Status, Value string
			} `json:"checks"`
		} `json:"nodes"`
		TotalNodes  int  `json:"total_nodes"`
		ValidNodes  int  `json:"valid_nodes"`
		HasErrors   bool `json:"has_errors"`
		HasWarnings bool `json:"has_warnings"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &v); err != nil {
		t.Fatalf("validate -o json: %v\n%s", err, r.stdout)
	}
	if r.code != 1 || !strings.Contains(r.err, "2 of 3 nodes: validation found errors") {
		t.Errorf("validate with errors: exit %d, stderr %q; want 1", r.code, r.err)
	}
	if v.TotalNodes != 3 || v.ValidNodes != 1 || !v.HasErrors || !v.HasWarnings || v.Nodes[0].Valid || !v.Nodes[0].HasErrors ||
		v.Nodes[0].Checks[2].Name != "private_ip" || v.Nodes[0].Checks[2].Status != "error" || v.Nodes[0].Checks[2].Value != "192.168.0.1" {
		t.Errorf("validate -o json: %+v", v)
	}
}

// TestNewZoneWarnsWithoutTopology: without topology.yaml, a zone no node
// of the platform has is allocated with a warning naming those in use.
func TestNewZoneWarnsWithoutTopology(t *testing.T) {
	dir := setup(t)
	r := plasma(t, dir, "allocate", "node001", "platform.cognition.dat")
	if r.code != 0 || !strings.HasPrefix(r.err, "plasma-node: warning: zone is new to the platform") || strings.Count(r.err, "\n") != 1 || !strings.Contains(r.err, "zone=platform.cognition.dat,") ||
		!strings.Contains(r.err, `zones_in_use="platform.cognition.data, platform.foundation.cluster.control"`) {
		t.Errorf("allocate a new zone: exit %d, stderr %q; want a warning naming the zones in use", r.code, r.err)
	}
	if r := plasma(t, dir, "allocate", "node002", "platform.cognition.dat"); r.err != "" {
		t.Errorf("allocate a zone the platform has: stderr %q, want none", r.err)
	}
	os.WriteFile(filepath.Join(dir, "topology.yaml"), []byte("platform:\n  cognition:\n    - data\n    - dat\n  foundation:\n    - cluster:\n      - control\n"), 0o644)
	if r := plasma(t, dir, "register", "demo", "--hostname", "node009", "--public-ip", "51.159.0.9", "-z", "cognition.data"); r.code != 0 || r.err != "" {
		t.Errorf("with a topology: exit %d, stderr %q; want no warning", r.code, r.err)
	}
}

// TestMisspeltKeysAreCaught: a key of platform.yaml no setting has is a
// warning naming file, line and the nearest key on a read command, and
// bad input on a command that writes; other plugins' sections pass.
func TestMisspeltKeysAreCaught(t *testing.T) {
	dir := setup(t)
	f := filepath.Join(dir, "platforms/demo/platform.yaml")
	b, _ := os.ReadFile(f)
	os.WriteFile(f, append(b, []byte("other_plugin:\n  anything: 1\ninfrastructure_extra: 1\n")...), 0o644)
	if r := plasma(t, dir, "list"); r.code != 0 || r.err != "" {
		t.Errorf("other plugins' sections: exit %d, stderr %q", r.code, r.err)
	}
	os.WriteFile(f, []byte(strings.Replace(string(b), "  domain: example.com", "  domian: example.com", 1)), 0o644)
	r := plasma(t, dir, "list")
	if r.code != 0 || !strings.HasPrefix(r.err, "plasma-node: warning: unknown key in platform.yaml") || !strings.Contains(r.err, "file=platforms/demo/platform.yaml, line=5, key=dns.domian, nearest=dns.domain") {
		t.Errorf("list: exit %d, stderr %q; want a warning with file, line and nearest key", r.code, r.err)
	}
	before := snapshot(t, dir)
	r = plasma(t, dir, "register", "demo", "--hostname", "node003", "--public-ip", "51.159.0.3")
	if r.code != 2 || !strings.Contains(r.err, "platforms/demo/platform.yaml:5: unknown key dns.domian (did you mean dns.domain?)") {
		t.Errorf("register: exit %d, stderr %q; want 2 naming file, line and nearest key", r.code, r.err)
	}
	if diff := cmp.Diff(before, snapshot(t, dir)); diff != "" {
		t.Errorf("files changed (-before +after):\n%s", diff)
	}
}

// TestQueryByComponent: a component attached to zones in its layer
// playbook (as component:attach writes it) gives the nodes of those zones
// and below; a zone is still a zone; a broken playbook is exit 2 naming
// its file.
func TestQueryByComponent(t *testing.T) {
	dir := setup(t) // node001: platform.foundation.cluster.control; node002: platform.cognition.data
	mustRun(t, dir, "add", "demo", "--hostname", "node003", "-z", "interaction.observability")
	os.MkdirAll(filepath.Join(dir, "src", "foundation"), 0o755)
	os.WriteFile(filepath.Join(dir, "src", "foundation", "foundation.yaml"), []byte(`- hosts: platform.foundation.cluster
  any_errors_fatal: true
  roles:
    - foundation.services.etcd
- hosts: platform.cognition.data
  roles:
    - role: foundation.services.etcd
      vars: {backup: true}
    - foundation.services.other
`), 0o644)
	out := mustRun(t, dir, "query", "foundation.services.etcd")
	want := "NODE     PLATFORM  ZONES\nnode001  demo      platform.foundation.cluster.control\nnode002  demo      platform.cognition.data\n"
	if diff := cmp.Diff(want, out); diff != "" {
		t.Errorf("query by component (-want +got):\n%s", diff)
	}
	out = mustRun(t, dir, "node:query", "foundation.services.etcd", "-o", "json")
	var res struct {
		Component  string   `json:"component"`
		AttachedTo []string `json:"attached_to"`
		Nodes      []struct{ Node, Platform string }
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil || res.Component != "foundation.services.etcd" || len(res.AttachedTo) != 2 || len(res.Nodes) != 2 {
		t.Errorf("query by component -o json: %v\n%s", err, out)
	}
	if out := mustRun(t, dir, "query", "foundation.cluster"); !strings.Contains(out, "node001") || strings.Contains(out, "node002") {
		t.Errorf("a zone after components exist:\n%s", out)
	}
	if out := mustRun(t, dir, "query", "foundation.services.none"); out != "No nodes in zone platform.foundation.services.none.\n" {
		t.Errorf("an unattached name is a zone: %q", out)
	}
	os.WriteFile(filepath.Join(dir, "src", "foundation", "foundation.yaml"), []byte("- hosts: [\n"), 0o644)
	if r := plasma(t, dir, "query", "foundation.services.etcd"); r.code != 2 || !strings.Contains(r.err, filepath.Join("src", "foundation", "foundation.yaml")) {
		t.Errorf("broken playbook: exit %d, stderr %q; want 2 naming the file", r.code, r.err)
	}
}
