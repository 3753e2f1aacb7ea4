package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/plasmactl/plasma-node/nodes"
)

// TestDynamicCompletion: the shell asks (cobra's __complete) and gets
// the project's platforms, hostnames, zones and the -o values.
func TestDynamicCompletion(t *testing.T) {
	dir := setup(t)
	os.WriteFile(filepath.Join(dir, "topology.yaml"), []byte("platform:\n  interaction:\n    - observability\n"), 0o644)
	if _, err := nodes.Open(dir, nodes.Options{}).UpdatePlatform(context.Background(), "demo", func(p *nodes.Platform) error {
		p.Pools = map[string]nodes.Pool{"web": {Zones: []string{"platform.web"}}, "db": {Zones: []string{"platform.db"}}}
		p.Networking.IPPools = map[string]nodes.IPPool{"mgmt": {CIDR: "10.9.0.0/24"}}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	tests := map[string]struct {
		args []string
		want []string
	}{
		"a node to allocate":    {[]string{"allocate", ""}, []string{"node001", "node002"}},
		"a zone to allocate":    {[]string{"allocate", "node001", ""}, []string{"platform", "platform.cognition.data", "platform.foundation.cluster.control", "platform.interaction", "platform.interaction.observability"}},
		"a platform to list":    {[]string{"list", ""}, []string{"demo"}},
		"a list output":         {[]string{"list", "-o", ""}, []string{"table", "wide", "name", "json", "yaml"}},
		"a platform or a node":  {[]string{"node:show", ""}, []string{"demo", "node001", "node002"}},
		"a platform for -e":     {[]string{"query", "x", "-e", ""}, []string{"demo"}},
		"nothing after a query": {[]string{"query", "platform", ""}, nil},
		"a node to delete":      {[]string{"delete", ""}, []string{"node001", "node002"}},
		"a pool to join":        {[]string{"join", "demo", "--pool", ""}, []string{"db", "web"}},
		"an address pool":       {[]string{"register", "demo", "--ip-pool", ""}, []string{"mgmt"}},
		"a provider":            {[]string{"add", "x", "--provider", ""}, []string{"aws", "hetzner", "manual", "ovh", "pxe", "scaleway"}},
		"a show output":         {[]string{"show", "demo", "-o", ""}, []string{"table", "json", "yaml"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			out := mustRun(t, dir, append([]string{"__complete"}, tc.args...)...)
			var got []string
			for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
				if !strings.HasPrefix(l, ":") && l != "" {
					got = append(got, l)
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("completions (-want +got):\n%s", diff)
			}
		})
	}
}
