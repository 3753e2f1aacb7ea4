package plasmanode_test

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	plasmanode "github.com/plasmactl/plasma-node"
	"github.com/plasmactl/plasma-node/nodes"
	"github.com/plasmactl/plasma-node/providers"
	"github.com/plasmactl/plasma-node/tofu"
)

func (c *cloud) join(ctx context.Context, o plasmanode.JoinOptions) (plasmanode.JoinResult, error) {
	o.Platform = "demo"
	o.TofuPath = c.bin
	o.Env = c.env
	o.Getenv = func(string) string { return "" }
	o.Stdout, o.Stderr = c.out, c.out
	o.OnPlan = func(s tofu.Summary) { c.plans = append(c.plans, s) }
	return c.p.Join(ctx, o)
}

// TestJoinAdoptsServers joins two servers made outside plasma-node, one
// under its display name and one under --hostname (written back to the
// server's name), after refusing bad input and a dry run that writes
// nothing.
func TestJoinAdoptsServers(t *testing.T) {
	c := newCloud(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	if _, err := c.provision(ctx, plasmanode.ProvisionOptions{Specs: []string{"web:cx22:1"}, AutoApprove: true}); err != nil {
		t.Fatal(err)
	}
	a := c.fake.AddServer("handmade", "cpx11", "debian-12", "nbg1")
	b := c.fake.AddServer("Not_A_Label", "cx22", "debian-12", "fsn1")
	aid, bid := strconv.FormatInt(a.ID, 10), strconv.FormatInt(b.ID, 10)
	first := c.nodes(t)[0]

	before := c.files(t)
	bad := map[string]struct {
		o    plasmanode.JoinOptions
		want error
	}{
		"an unknown pool":               {o: plasmanode.JoinOptions{ServerID: aid, Pool: "db"}, want: plasmanode.ErrUnknownPool},
		"a malformed server id":         {o: plasmanode.JoinOptions{ServerID: "ns1.ip-1-2-3.net", Pool: "web"}, want: providers.ErrInvalidServerID},
		"a server id already joined":    {o: plasmanode.JoinOptions{ServerID: first.ServerID, Pool: "web"}, want: nodes.ErrExists},
		"an invalid hostname":           {o: plasmanode.JoinOptions{ServerID: aid, Pool: "web", Hostname: "Bad_Name"}, want: nodes.ErrInvalidName},
		"a hostname another node has":   {o: plasmanode.JoinOptions{ServerID: aid, Pool: "web", Hostname: first.Hostname}, want: nodes.ErrExists},
		"no confirmation and no prompt": {o: plasmanode.JoinOptions{ServerID: aid, Pool: "web"}, want: plasmanode.ErrNoPrompter},
	}
	for name, tc := range bad {
		t.Run(name, func(t *testing.T) {
			if _, err := c.join(ctx, tc.o); !errors.Is(err, tc.want) {
				t.Errorf("Join() error = %v, want %v", err, tc.want)
			}
		})
	}
	res, err := c.join(ctx, plasmanode.JoinOptions{ServerID: aid, Pool: "web", DryRun: true})
	if err != nil || res.Hostname != "handmade" || res.Applied {
		t.Errorf("dry run: %+v, %v; want hostname handmade, not applied", res, err)
	}
	if diff := cmp.Diff(before, c.files(t)); diff != "" {
		t.Errorf("refused joins and a dry run changed files (-before +after):\n%s", diff)
	}

	res, err = c.join(ctx, plasmanode.JoinOptions{ServerID: aid, Pool: "web", AutoApprove: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Summary.Creates)+len(res.Summary.Deletes)+len(res.Summary.Replacements) != 0 {
		t.Errorf("join plan: %s, want imports and updates only", res.Summary)
	}
	// A display name that is no hostname falls back to the server id;
	// --hostname wins, and is written back.
	if res, err := c.join(ctx, plasmanode.JoinOptions{ServerID: bid, Pool: "web", DryRun: true}); err != nil || res.Hostname != bid {
		t.Errorf("dry run of a server named Not_A_Label: %+v, %v; want hostname %s", res, err, bid)
	}
	if _, err := c.join(ctx, plasmanode.JoinOptions{ServerID: bid, Pool: "web", Hostname: "custom", AutoApprove: true}); err != nil {
		t.Fatal(err)
	}
	want := []nodeView{
		{"custom", b.PublicIPv4, "192.168.0.3", bid, "cx22", []string{"platform.web"}},
		first,
		{"handmade", a.PublicIPv4, "192.168.0.2", aid, "cpx11", []string{"platform.web"}},
	}
	if diff := cmp.Diff(want, c.nodes(t)); diff != "" {
		t.Errorf("node files (-want +got):\n%s", diff)
	}
	names := map[string]bool{}
	for _, s := range c.fake.Servers() {
		names[s.Name] = true
	}
	if !names["custom"] || names["Not_A_Label"] {
		t.Errorf("fake server names %v, want custom written back", names)
	}
	// Each join raised the pool's count: 1 provisioned + 2 joined.
	plat, err := c.p.Store.Platform(ctx, "demo")
	if err != nil {
		t.Fatal(err)
	}
	if got := plat.Pools["web"].Count; got != 3 {
		t.Errorf("pool web count after two joins = %d, want 3", got)
	}
	// Everything joined is adopted again: a provision at the pool's count
	// plans no change, and destroy removes all three.
	if res, err := c.provision(ctx, plasmanode.ProvisionOptions{AutoApprove: true}); err != nil || len(res.Summary.Creates)+len(res.Summary.Deletes) != 0 {
		t.Errorf("provision after join: %s, %v; want no create or delete", res.Summary, err)
	}
	dres, err := c.destroy(ctx, plasmanode.DestroyOptions{Force: true})
	if err != nil {
		t.Fatal(err)
	}
	if s := c.fake.Servers(); len(s) != 0 || len(dres.Removed) != 3 {
		t.Errorf("after destroy: fake %v, removed %v; want none left, 3 removed", s, dres.Removed)
	}
	if !slices.ContainsFunc(c.plans, func(s tofu.Summary) bool { return len(s.Imports) > 0 }) {
		t.Errorf("no import plan was reported to OnPlan: %v", c.plans)
	}
}
