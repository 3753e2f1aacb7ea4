package plasmanode

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/plasmactl/plasma-node/nodes"
	"github.com/plasmactl/plasma-node/zones"
)

func TestZonesToRemove(t *testing.T) {
	have := []string{"platform.cognition.data", "platform.foundation.cluster.control", "platform.foundation.storage"}
	tests := map[string]struct {
		want      []string
		recursive bool
		gone      []string
		wantErr   error
	}{
		"an exact zone goes":                      {want: []string{"platform.cognition.data"}, gone: []string{"platform.cognition.data"}},
		"a zone above the node's is refused":      {want: []string{"platform.foundation"}, wantErr: zones.ErrNotAllocated},
		"recursive takes the zones below":         {want: []string{"platform.foundation"}, recursive: true, gone: []string{"platform.foundation.cluster.control", "platform.foundation.storage"}},
		"a zone the node lacks is refused":        {want: []string{"platform.interaction"}, recursive: true, wantErr: zones.ErrNotAllocated},
		"one unknown zone refuses all":            {want: []string{"platform.cognition.data", "platform.x"}, wantErr: zones.ErrNotAllocated},
		"a zone named twice is removed once":      {want: []string{"platform.cognition.data", "platform.cognition.data"}, gone: []string{"platform.cognition.data"}},
		"recursive with the zone itself held too": {want: []string{"platform.foundation.storage"}, recursive: true, gone: []string{"platform.foundation.storage"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := zonesToRemove(have, tc.want, tc.recursive)
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("error = %v, want %v", err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.gone, got); diff != "" {
				t.Errorf("removed (-want +got):\n%s", diff)
			}
		})
	}
}

// testProject is a project with a manual platform demo and nodes
// n1 (two zones) and n2, and the topology given ("" for none).
func testProject(t *testing.T, topology string) *Project {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	if topology != "" {
		if err := os.WriteFile(filepath.Join(dir, topologyFile), []byte(topology), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	p, err := OpenProject(ctx, dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Scaffold(ctx, ScaffoldOptions{Platform: "demo"}); err != nil {
		t.Fatal(err)
	}
	for _, ro := range []RegisterOptions{
		{Platform: "demo", Hostname: "n1", PublicIP: "198.51.100.1", Zones: []string{"foundation.cluster.control", "cognition.data"}},
		{Platform: "demo", Hostname: "n2", PublicIP: "198.51.100.2", Zones: []string{"foundation.cluster.nodes"}},
	} {
		if _, err := p.Register(ctx, ro); err != nil {
			t.Fatal(err)
		}
	}
	return p
}

func TestDeallocateRewritesZonesAndLabels(t *testing.T) {
	ctx := context.Background()
	p := testProject(t, "")
	res, err := p.Deallocate(ctx, DeallocateOptions{Hostname: "n1", Zones: []string{"foundation"}, Recursive: true})
	if err != nil {
		t.Fatal(err)
	}
	want := DeallocateResult{Hostname: "n1", Platform: "demo", Removed: []string{"platform.foundation.cluster.control"},
		Zones: []string{"platform.cognition.data"}, Modified: true}
	if diff := cmp.Diff(want, res); diff != "" {
		t.Errorf("Deallocate (-want +got):\n%s", diff)
	}
	n, err := p.Store.Node(ctx, "demo", "n1")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]string{"platform.cognition.data": "true"}, n.K8sLabels); diff != "" {
		t.Errorf("labels (-want +got):\n%s", diff)
	}
	before, _ := os.ReadFile(n.File())
	if _, err := p.Deallocate(ctx, DeallocateOptions{Hostname: "n1", Zones: []string{"foundation"}}); !errors.Is(err, zones.ErrNotAllocated) {
		t.Errorf("a zone no longer held: %v, want ErrNotAllocated", err)
	}
	if after, _ := os.ReadFile(n.File()); string(after) != string(before) {
		t.Errorf("a refused deallocate changed the file:\n%s", after)
	}
}

func TestQueryFindsNodesAtAndBelowAZone(t *testing.T) {
	ctx := context.Background()
	p := testProject(t, "platform:\n  foundation:\n    - cluster:\n      - control\n      - nodes\n  cognition:\n    - data\n")
	got, err := p.Query(ctx, QueryOptions{Zone: "foundation.cluster"})
	if err != nil {
		t.Fatal(err)
	}
	want := QueryResult{Zone: "platform.foundation.cluster", Nodes: []QueryNode{
		{Node: "n1", Platform: "demo", Zones: []string{"platform.foundation.cluster.control"}},
		{Node: "n2", Platform: "demo", Zones: []string{"platform.foundation.cluster.nodes"}},
	}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Query (-want +got):\n%s", diff)
	}
	if _, err := p.Query(ctx, QueryOptions{Zone: "foundation.clustr"}); !errors.Is(err, zones.ErrUnknownZone) {
		t.Errorf("a zone not in topology.yaml: %v, want ErrUnknownZone", err)
	}
	if got, err := p.Query(ctx, QueryOptions{Zone: "cognition", Platform: "demo"}); err != nil || len(got.Nodes) != 1 {
		t.Errorf("Query(cognition) = %+v, %v; want n1", got, err)
	}
}

func TestValidateReportsEachCheck(t *testing.T) {
	ctx := context.Background()
	p := testProject(t, "")
	// n2 takes n1's public IP, a provider that is not the platform's and
	// an address outside the pool.
	if _, err := p.Store.UpdateNode(ctx, "demo", "n2", func(n *nodes.Node) error {
		n.Network.PublicIP = "198.51.100.1"
		n.Network.PrivateIP = "10.0.0.9"
		n.ProviderMetadata.Provider = "hetzner"
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	res, err := p.Validate(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	status := map[string]string{}
	for _, n := range res.Nodes {
		for _, c := range n.Checks {
			status[n.Hostname+" "+c.Name] = c.Status
		}
	}
	want := map[string]string{
		"n1 hostname": "ok", "n1 public_ip": "error", "n1 private_ip": "ok", "n1 zones": "warning", "n1 provider_metadata": "ok", "n1 pool": "ok",
		"n2 hostname": "ok", "n2 public_ip": "error", "n2 private_ip": "ok", "n2 zones": "warning", "n2 provider_metadata": "error", "n2 pool": "warning",
	}
	if diff := cmp.Diff(want, status); diff != "" {
		t.Errorf("checks (-want +got):\n%s", diff)
	}
	if res.TotalNodes != 2 || res.ValidNodes != 0 || !res.HasErrors || !res.HasWarnings {
		t.Errorf("totals = %d/%d, errors %v, warnings %v", res.ValidNodes, res.TotalNodes, res.HasErrors, res.HasWarnings)
	}
	one, err := p.Validate(ctx, "n1")
	if err != nil || one.TotalNodes != 1 || one.Nodes[0].Hostname != "n1" {
		t.Errorf("Validate(n1) = %+v, %v", one, err)
	}
	if _, err := p.Validate(ctx, "nope"); !errors.Is(err, nodes.ErrNodeNotFound) {
		t.Errorf("Validate(nope): %v, want ErrNodeNotFound", err)
	}
}
