package plasmanode_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	plasmanode "github.com/plasmactl/plasma-node"
	"github.com/plasmactl/plasma-node/ipam"
	"github.com/plasmactl/plasma-node/nodes"
	"github.com/plasmactl/plasma-node/zones"
)

func newProject(t *testing.T, files map[string]string) *plasmanode.Project {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	p, err := plasmanode.OpenProject(context.Background(), dir, plasmanode.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestRegisterAllocatesLikePlasmactlNode(t *testing.T) {
	tests := map[string]struct {
		files  map[string]string
		opts   plasmanode.RegisterOptions
		wantIP string
		err    error
	}{
		"first node of a default platform gets .0.1": {
			files:  map[string]string{"platforms/p/platform.yaml": "name: p\ninfrastructure:\n  metal_provider: manual\n"},
			wantIP: "192.168.0.1",
		},
		"used addresses are skipped, unparsable ones ignored": {
			files: map[string]string{
				"platforms/p/platform.yaml":    "name: p\ninfrastructure:\n  metal_provider: manual\n",
				"platforms/p/nodes/a.yaml":     "network:\n  private_ip: 192.168.0.1\n",
				"platforms/p/nodes/b.yaml":     "network:\n  private_ip: 192.168.0.3\n",
				"platforms/p/nodes/c.yaml":     "network:\n  private_ip: not-an-ip\n",
				"platforms/q/platform.yaml":    "name: q\n",
				"platforms/q/nodes/other.yaml": "network:\n  private_ip: 192.168.0.2\n",
			},
			wantIP: "192.168.0.2",
		},
		"addresses ending in .255 and .0 are skipped in a /16": {
			files:  map[string]string{"platforms/p/platform.yaml": "name: p\nnetworking:\n  private_network: 10.1.0.0/16\n", "platforms/p/nodes/a.yaml": "network:\n  private_ip: 10.1.0.254\n"},
			opts:   plasmanode.RegisterOptions{},
			wantIP: "10.1.0.1",
		},
		"a named ip pool with a gateway and a range": {
			files:  map[string]string{"platforms/p/platform.yaml": "name: p\nnetworking:\n  ip_pools:\n    lan:\n      cidr: 10.0.0.0/24\n      gateway: 10.0.0.10\n      range: 10.0.0.10-10.0.0.20\n"},
			opts:   plasmanode.RegisterOptions{IPPool: "lan"},
			wantIP: "10.0.0.11",
		},
		"an unknown ip pool": {
			files: map[string]string{"platforms/p/platform.yaml": "name: p\n"},
			opts:  plasmanode.RegisterOptions{IPPool: "lan"},
			err:   ipam.ErrInvalidPool,
		},
		"an exhausted pool": {
			files: map[string]string{"platforms/p/platform.yaml": "name: p\nnetworking:\n  private_network: 10.0.0.0/30\n", "platforms/p/nodes/a.yaml": "network:\n  private_ip: 10.0.0.1\n", "platforms/p/nodes/b.yaml": "network:\n  private_ip: 10.0.0.2\n"},
			err:   ipam.ErrExhausted,
		},
		"a zone outside topology.yaml": {
			files: map[string]string{"platforms/p/platform.yaml": "name: p\n", "topology.yaml": "platform:\n  foundation:\n    - cluster\n"},
			opts:  plasmanode.RegisterOptions{Zones: []string{"cognition.data"}},
			err:   zones.ErrUnknownZone,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			p := newProject(t, tc.files)
			o := tc.opts
			o.Platform, o.Hostname = "p", "new"
			n, err := p.Register(context.Background(), o)
			if !errors.Is(err, tc.err) {
				t.Fatalf("err = %v, want %v", err, tc.err)
			}
			if err != nil {
				if _, serr := os.Stat(p.Store.NodePath("p", "new")); !os.IsNotExist(serr) {
					t.Errorf("a failed Register left a file: %v", serr)
				}
				if !plasmanode.IsUsageError(err) && !errors.Is(err, ipam.ErrExhausted) {
					t.Errorf("IsUsageError(%v) = false", err)
				}
				return
			}
			if n.Network.PrivateIP != tc.wantIP {
				t.Errorf("private IP = %s, want %s", n.Network.PrivateIP, tc.wantIP)
			}
			back, err := p.Store.Node(context.Background(), "p", "new")
			if err != nil || back.Network.PrivateIP != tc.wantIP {
				t.Errorf("stored node = %v, %v", back, err)
			}
		})
	}
}

func TestAllocateLeavesTheFileAsItWasOnError(t *testing.T) {
	const node = "# keep me\nhostname: n1\nzones: [platform.a]\nnetwork:\n  private_ip: 192.168.0.1\n"
	p := newProject(t, map[string]string{"platforms/p/platform.yaml": "name: p\n", "platforms/p/nodes/n1.yaml": node})
	ctx := context.Background()
	for _, ops := range [][]string{{"platform.b", "platform.missing-"}, {"platform.missing/platform.c"}, {"Bad Zone"}} {
		if _, err := p.Allocate(ctx, plasmanode.AllocateOptions{Hostname: "n1", Ops: ops}); err == nil || !plasmanode.IsUsageError(err) {
			t.Errorf("Allocate(%v) = %v, want a usage error", ops, err)
		}
		b, _ := os.ReadFile(p.Store.NodePath("p", "n1"))
		if diff := cmp.Diff(node, string(b)); diff != "" {
			t.Errorf("Allocate(%v) changed the file:\n%s", ops, diff)
		}
	}
	res, err := p.Allocate(ctx, plasmanode.AllocateOptions{Hostname: "n1", Ops: []string{"platform.a"}})
	if err != nil || res.Modified {
		t.Errorf("adding a zone the node has: %+v, %v; want unmodified", res, err)
	}
}

func TestListByZoneMatchesLikeZoneShow(t *testing.T) {
	p := newProject(t, map[string]string{
		"platforms/p/platform.yaml": "name: p\n",
		"platforms/p/nodes/a.yaml":  "zones: [platform.foundation.cluster.control]\n",
		"platforms/p/nodes/b.yaml":  "zones: [platform.foundation.clusterx]\n",
		"platforms/p/nodes/c.yaml":  "zones: [platform.foundation.cluster]\n",
		"platforms/p/nodes/d.yaml":  "zones: [platform.cognition.data]\n",
	})
	ns, err := p.List(context.Background(), plasmanode.ListOptions{Zone: "foundation.cluster"})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, n := range ns {
		got = append(got, n.Hostname)
	}
	if diff := cmp.Diff([]string{"a", "c"}, got); diff != "" {
		t.Errorf("nodes in foundation.cluster (-want +got):\n%s", diff)
	}
}

func TestShowPrefersPlatformAndReportsNeither(t *testing.T) {
	p := newProject(t, map[string]string{"platforms/p/platform.yaml": "name: p\n", "platforms/p/nodes/p.yaml": "hostname: p\n", "platforms/p/nodes/n.yaml": "hostname: n\n"})
	ctx := context.Background()
	if s, err := p.Show(ctx, "p"); err != nil || s.Platform == nil || len(s.Platform.Nodes) != 2 {
		t.Errorf("Show(p) = %+v, %v; want the platform with 2 nodes", s, err)
	}
	if s, err := p.Show(ctx, "n"); err != nil || s.Node == nil || s.Node.Platform != "p" {
		t.Errorf("Show(n) = %+v, %v; want node n@p", s, err)
	}
	if _, err := p.Show(ctx, "x"); !errors.Is(err, nodes.ErrNodeNotFound) {
		t.Errorf("Show(x) = %v, want ErrNodeNotFound", err)
	}
}

func ExampleProject_Register() {
	dir, _ := os.MkdirTemp("", "example-")
	defer os.RemoveAll(dir)
	ctx := context.Background()
	p, _ := plasmanode.OpenProject(ctx, dir, plasmanode.Options{})
	p.Scaffold(ctx, plasmanode.ScaffoldOptions{Platform: "demo"})
	for _, h := range []string{"node001", "node002"} {
		n, err := p.Register(ctx, plasmanode.RegisterOptions{Platform: "demo", Hostname: h, Zones: []string{"foundation.cluster.control"}})
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(n, n.Network.PrivateIP, n.Zones)
	}
	// Output:
	// node001@demo 192.168.0.1 [platform.foundation.cluster.control]
	// node002@demo 192.168.0.2 [platform.foundation.cluster.control]
}

func TestFindProjectDir(t *testing.T) {
	root := t.TempDir()
	deep := filepath.Join(root, "platforms", "p", "nodes")
	os.MkdirAll(deep, 0o755)
	if got, err := plasmanode.FindProjectDir(deep); err != nil || got != root {
		t.Errorf("FindProjectDir(inside) = %q, %v; want %q", got, err, root)
	}
	other := t.TempDir()
	if got, err := plasmanode.FindProjectDir(other); err != nil || got != other {
		t.Errorf("FindProjectDir(outside) = %q, %v; want the folder itself", got, err)
	}
}
