package plasmanode_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	plasmanode "github.com/plasmactl/plasma-node"
	"github.com/plasmactl/plasma-node/nodes"
	"github.com/plasmactl/plasma-node/providers"
	"github.com/plasmactl/plasma-node/providers/manual"
	"github.com/plasmactl/plasma-node/tofu"
)

// shelf is a provider the built-in set lacks: a cloud whose servers are
// made at once, in memory, without tofu (a providers.Direct).
type shelf struct {
	providers.Provider // the methods a Direct provider is not asked for
	made               map[string]providers.Server
}

var _ providers.Direct = (*shelf)(nil)

func (*shelf) Name() string { return "shelf" }

func (s *shelf) Plan(_ context.Context, in providers.DirectInput) (providers.DirectPlan, error) {
	slots, err := providers.Slots(in.Input)
	if err != nil {
		return nil, err
	}
	pl := &shelfPlan{s: s}
	for _, sl := range slots {
		srv := providers.Server{Hostname: sl.Hostname, ServerID: sl.ServerID, Pool: sl.Pool, Machine: sl.Machine}
		if !sl.Adopted() {
			srv.ServerID = "shelf-" + sl.Hostname
			pl.sum.Creates = append(pl.sum.Creates, tofu.Change{Address: "shelf." + sl.Resource, Type: "shelf"})
		}
		pl.servers = append(pl.servers, srv)
	}
	return pl, nil
}

func (s *shelf) Remove(_ context.Context, in providers.DirectInput) ([]string, error) {
	var out []string
	for _, e := range in.Existing {
		for h, srv := range s.made {
			if srv.ServerID == e.ServerID {
				delete(s.made, h)
				out = append(out, h)
			}
		}
	}
	return out, nil
}

func (s *shelf) States(context.Context, providers.Location) (map[string]string, error) {
	out := map[string]string{}
	for h := range s.made {
		out[h] = "on the shelf"
	}
	return out, nil
}

type shelfPlan struct {
	s       *shelf
	sum     tofu.Summary
	servers []providers.Server
}

func (p *shelfPlan) Summary() tofu.Summary { return p.sum }

func (p *shelfPlan) Apply(context.Context) ([]providers.Server, error) {
	for _, srv := range p.servers {
		p.s.made[srv.Hostname] = srv
	}
	return p.servers, nil
}

// TestProjectRunsWithItsOwnProviders: a program may bring providers the
// built-in set lacks, and leave out built-in ones.
func TestProjectRunsWithItsOwnProviders(t *testing.T) {
	ctx := context.Background()
	cloud := &shelf{made: map[string]providers.Server{}}
	set, err := providers.NewSet(cloud, &manual.Provider{})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	p, err := plasmanode.OpenProject(ctx, dir, plasmanode.Options{Providers: set})
	if err != nil {
		t.Fatal(err)
	}
	if p.Providers() != set {
		t.Error("Project.Providers() is not the set of the options")
	}

	t.Run("a provider of its own is usable", func(t *testing.T) {
		if _, err := p.Scaffold(ctx, plasmanode.ScaffoldOptions{Platform: "lab", Provider: "shelf"}); err != nil {
			t.Fatal(err)
		}
		res, err := p.Provision(ctx, plasmanode.ProvisionOptions{Platform: "lab", Specs: []string{"web:small:2"}, AutoApprove: true})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, n := range res.Nodes {
			got = append(got, n.Hostname+" "+n.ProviderMetadata.Provider+" "+n.ProviderMetadata.ServerID)
		}
		want := []string{"lab-web-001 shelf shelf-lab-web-001", "lab-web-002 shelf shelf-lab-web-002"}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("nodes written (-want +got):\n%s", diff)
		}
		ns, err := p.List(ctx, plasmanode.ListOptions{Platform: "lab"})
		if err != nil || len(ns) != 2 || ns[0].InstallState != "on the shelf" {
			t.Errorf("List() = %v, %v; want both nodes with the provider's install state", ns, err)
		}
	})

	t.Run("a built-in provider it left out is unknown", func(t *testing.T) {
		wantErr := &providers.UnknownError{Name: "hetzner", Known: []string{"manual", "shelf"}}
		_, err := p.Scaffold(ctx, plasmanode.ScaffoldOptions{Platform: "cloud", Provider: "hetzner"})
		checkUnknown(t, "Scaffold", err, wantErr)
		if _, serr := os.Stat(filepath.Join(dir, nodes.PlatformsDir, "cloud")); !os.IsNotExist(serr) {
			t.Errorf("the refused scaffold left a platform folder: %v", serr)
		}

		// A platform.yaml written by hand names it.
		plat := filepath.Join(dir, nodes.PlatformsDir, "hand", "platform.yaml")
		if err := os.MkdirAll(filepath.Dir(plat), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(plat, []byte("name: hand\ninfrastructure:\n  metal_provider: hetzner\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err = p.Provision(ctx, plasmanode.ProvisionOptions{Platform: "hand", Specs: []string{"web:cx22:1"}, AutoApprove: true})
		checkUnknown(t, "Provision", err, wantErr)
	})
}

func checkUnknown(t *testing.T, op string, err error, want *providers.UnknownError) {
	t.Helper()
	var ue *providers.UnknownError
	if !errors.As(err, &ue) || !errors.Is(err, providers.ErrUnknown) {
		t.Fatalf("%s error = %v; want an *UnknownError that is ErrUnknown", op, err)
	}
	if diff := cmp.Diff(want, ue); diff != "" {
		t.Errorf("%s error (-want +got):\n%s", op, diff)
	}
	if !plasmanode.IsUsageError(err) {
		t.Errorf("%s: IsUsageError(%v) = false, want bad usage (exit 2)", op, err)
	}
}
