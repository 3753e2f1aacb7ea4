package plasmanode

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/plasmactl/plasma-node/nodes"
	"github.com/plasmactl/plasma-node/providers"
	"github.com/plasmactl/plasma-node/zones"
)

func TestSpecPools(t *testing.T) {
	tests := map[string]struct {
		specs   []string
		want    map[string]nodes.Pool
		wantErr error
	}{
		"a pool is named after the zone's last segment": {specs: []string{"foundation.cluster.control:GP1-L:3"},
			want: map[string]nodes.Pool{"control": {Zones: []string{"platform.foundation.cluster.control"}, Machine: "GP1-L", Count: 3}}},
		"two types in one zone are told apart by type": {specs: []string{"web:cx22:1", "web:CPX_31:2"},
			want: map[string]nodes.Pool{
				"web-cx22":   {Zones: []string{"platform.web"}, Machine: "cx22", Count: 1},
				"web-cpx-31": {Zones: []string{"platform.web"}, Machine: "CPX_31", Count: 2},
			}},
		"an underscore in the zone becomes a dash": {specs: []string{"a.data_store:cx22:1"},
			want: map[string]nodes.Pool{"data-store": {Zones: []string{"platform.a.data_store"}, Machine: "cx22", Count: 1}}},
		"the same zone and type twice is refused": {specs: []string{"web:cx22:1", "web:cx22:2"}, wantErr: zones.ErrInvalidSpec},
		"a bad spec is refused":                   {specs: []string{"web:cx22:x"}, wantErr: zones.ErrInvalidSpec},
		"no specs make no pools":                  {want: map[string]nodes.Pool{}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := (&Project{}).specPools(tc.specs)
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("specPools() error = %v, want %v", err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.want, got); err == nil && diff != "" {
				t.Errorf("specPools() (-want +got):\n%s", diff)
			}
		})
	}
}

func TestAdopt(t *testing.T) {
	pools := map[string]nodes.Pool{
		"web": {Zones: []string{"platform.web"}, Count: 3},
		"db":  {Zones: []string{"platform.db", "platform.data"}, Count: 1},
	}
	node := func(h, id string, zs ...string) *nodes.Node {
		return &nodes.Node{Hostname: h, Zones: zs, ProviderMetadata: nodes.ProviderMetadata{ServerID: id}}
	}
	ns := []*nodes.Node{
		node("demo-web-002", "20", "platform.web"),
		node("friendly", "9", "platform.web"),
		node("other", "8", "platform.data", "platform.db"),
		node("nowhere", "7", "platform.x"),
		node("demo-web-001", "", "platform.web"),
		node("demo-web-1", "30", "platform.web"),
	}
	want := []providers.Existing{
		{Pool: "web", Index: 1, ServerID: "20"},
		{Pool: "web", Index: 0, Hostname: "demo-web-1", ServerID: "30"},
		{Pool: "db", Index: 0, Hostname: "other", ServerID: "8"},
		{Pool: "web", Index: 2, Hostname: "friendly", ServerID: "9"},
	}
	if diff := cmp.Diff(want, adopt("demo", pools, ns)); diff != "" {
		t.Errorf("adopt() (-want +got):\n%s", diff)
	}
}

// TestNoPrompterRefusesBeforeTofu: with neither a prompter nor prior
// approval, provision, join and destroy stop before they look for tofu
// (the binary named does not exist), with ErrNoPrompter.
func TestNoPrompterRefusesBeforeTofu(t *testing.T) {
	ctx := context.Background()
	p, err := OpenProject(ctx, t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Scaffold(ctx, ScaffoldOptions{Platform: "demo", Provider: "hetzner"}); err != nil {
		t.Fatal(err)
	}
	if err := p.Store.CreateNode(ctx, &nodes.Node{Hostname: "demo-web-001", Platform: "demo", Zones: []string{"platform.web"},
		ProviderMetadata: nodes.ProviderMetadata{ServerID: "1"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Store.UpdatePlatform(ctx, "demo", func(pl *nodes.Platform) error {
		pl.Pools = map[string]nodes.Pool{"web": {Zones: []string{"platform.web"}, Machine: "cx22", Count: 1}}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	const noTofu = "/nonexistent/tofu"
	tests := map[string]func() error{
		"provision": func() error {
			_, err := p.Provision(ctx, ProvisionOptions{Platform: "demo", TofuOptions: TofuOptions{TofuPath: noTofu}})
			return err
		},
		"join": func() error {
			_, err := p.Join(ctx, JoinOptions{Platform: "demo", Pool: "web", ServerID: "2", TofuOptions: TofuOptions{TofuPath: noTofu}})
			return err
		},
		"destroy": func() error {
			_, err := p.Destroy(ctx, DestroyOptions{Platform: "demo", TofuOptions: TofuOptions{TofuPath: noTofu}})
			return err
		},
	}
	for name, run := range tests {
		t.Run(name, func(t *testing.T) {
			if err := run(); !errors.Is(err, ErrNoPrompter) {
				t.Errorf("error = %v, want ErrNoPrompter before tofu is looked for", err)
			}
		})
	}
}
