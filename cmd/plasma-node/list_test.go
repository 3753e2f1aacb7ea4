package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"gopkg.in/yaml.v3"
)

func TestListAndShowOutputs(t *testing.T) {
	dir := setup(t)
	var nodes []map[string]any
	if err := json.Unmarshal([]byte(mustRun(t, dir, "list", "-o", "json")), &nodes); err != nil {
		t.Fatal(err)
	}
	if len(nodes) != 2 || nodes[0]["platform"] != "demo" || nodes[0]["hostname"] != "node001" {
		t.Errorf("list -o json = %v", nodes)
	}
	if net, _ := nodes[0]["network"].(map[string]any); net["private_ip"] != "192.168.0.1" {
		t.Errorf("list -o json uses other field names: %v", nodes[0])
	}
	var ys []map[string]any
	if err := yaml.Unmarshal([]byte(mustRun(t, dir, "list", "-o", "yaml")), &ys); err != nil || len(ys) != 2 || ys[1]["platform"] != "demo" {
		t.Errorf("list -o yaml = %v, %v", ys, err)
	}
	out := mustRun(t, dir, "list", "--zone", "foundation")
	if !strings.Contains(out, "node001") || strings.Contains(out, "node002") {
		t.Errorf("list --zone foundation:\n%s", out)
	}
	var one map[string]any
	if err := json.Unmarshal([]byte(mustRun(t, dir, "show", "node002", "-o", "json")), &one); err != nil || one["hostname"] != "node002" {
		t.Errorf("show node -o json = %v, %v", one, err)
	}
	out = mustRun(t, dir, "show", "demo")
	for _, w := range []string{"Platform:  demo", "Domain:    example.com", "node001", "node002"} {
		if !strings.Contains(out, w) {
			t.Errorf("show demo lacks %q:\n%s", w, out)
		}
	}
	if out := mustRun(t, dir, "list", "--zone", "interaction"); !strings.Contains(out, "No nodes.") {
		t.Errorf("empty list:\n%s", out)
	}
}

func TestShowNeverPrintsCredentials(t *testing.T) {
	dir := setup(t)
	p := filepath.Join(dir, "platforms/demo/platform.yaml")
	os.WriteFile(p, []byte("name: demo\ninfrastructure:\n  metal_provider: hetzner\n  api:\n    token: s3cr3t-token-value\n    client_id: '{{ .keyring.ovh_client_id }}'\n"), 0o644)
	for _, f := range []string{"table", "json", "yaml"} {
		out := mustRun(t, dir, "show", "demo", "-o", f)
		if strings.Contains(out, "s3cr3t") {
			t.Errorf("show -o %s prints the token:\n%s", f, out)
		}
	}
	if out := mustRun(t, dir, "show", "demo", "-o", "yaml"); !strings.Contains(out, "{{ .keyring.ovh_client_id }}") {
		t.Errorf("keyring references should be shown:\n%s", out)
	}
}

// TestListLikeKubectl: -o wide and name, --no-headers, --sort-by.
func TestListLikeKubectl(t *testing.T) {
	dir := setup(t)
	mustRun(t, dir, "add", "demo", "--hostname", "node000", "--public-ip", "51.159.0.9", "--private-ip", "192.168.0.9", "-z", "web")
	tests := map[string]struct {
		args []string
		want string
	}{
		"names": {[]string{"list", "-o", "name"}, "node000@demo\nnode001@demo\nnode002@demo\n"},
		"sorted by public IP without headers": {[]string{"list", "--no-headers", "--sort-by", "public-ip"},
			"demo  node002  -           192.168.0.2  platform.cognition.data\n" +
				"demo  node001  51.159.0.1  192.168.0.1  platform.foundation.cluster.control\n" +
				"demo  node000  51.159.0.9  192.168.0.9  platform.web\n"},
		"wide": {[]string{"list", "-o", "wide", "--sort-by", "PRIVATE IP"},
			"PLATFORM  HOSTNAME  PUBLIC IP   PRIVATE IP   ZONES                                PROVIDER  SERVER ID  POOL  MACHINE  INSTALL\n" +
				"demo      node001   51.159.0.1  192.168.0.1  platform.foundation.cluster.control  -         -          -     -        -\n" +
				"demo      node002   -           192.168.0.2  platform.cognition.data              -         -          -     -        -\n" +
				"demo      node000   51.159.0.9  192.168.0.9  platform.web                         -         -          -     -        -\n"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, mustRun(t, dir, tc.args...)); diff != "" {
				t.Errorf("list (-want +got):\n%s", diff)
			}
		})
	}
	if r := plasma(t, dir, "list", "--sort-by", "color"); r.code != 2 || !strings.Contains(r.err, `--sort-by "color": want one of platform, hostname`) {
		t.Errorf("--sort-by color: exit %d, stderr %q", r.code, r.err)
	}
}
