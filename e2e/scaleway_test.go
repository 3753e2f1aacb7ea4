package e2e

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/plasmactl/plasma-node/internal/fakescaleway"
	"github.com/plasmactl/plasma-node/internal/tofutest"
	"github.com/plasmactl/plasma-node/nodes"
)

// scalewayFlow starts a fake Scaleway API and a project whose platform
// demo uses it through infrastructure.api.uri (zone fr-par-2), with the
// access and secret keys in the environment only.
func scalewayFlow(t *testing.T, ctx context.Context, secret string, set func(*nodes.Platform)) (*fakescaleway.Fake, *cloudFlow) {
	t.Helper()
	fake := fakescaleway.Start(secret)
	t.Cleanup(fake.Close)
	f := newCloudFlow(t, ctx, "scaleway", tofutest.Scaleway, fake.Calls, func(p *nodes.Platform) {
		p.Infrastructure.API = nodes.API{URI: fake.Endpoint()}
		p.Infrastructure.Zone, p.Infrastructure.ProjectID = "fr-par-2", "0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d"
		set(p)
	}, "SCW_ACCESS_KEY=SCWFAKEFAKEFAKEFAKE1", "SCW_SECRET_KEY="+secret, "SCW_DEFAULT_PROJECT_ID=")
	return fake, f
}

// TestScalewayJoinFlow joins three Elastic Metal servers made outside
// plasma-node through the plasma-node binary, with the real tofu and the
// real Scaleway plugin against internal/fakescaleway: one under its name,
// one whose name is no hostname under the name derived from its zoned id
// (fr-par-2-<first group of its UUID>), one with --hostname (written back
// as its name). A provision afterwards is converged and nothing is
// reinstalled.
func TestScalewayJoinFlow(t *testing.T) {
	t.Parallel() // mostly waiting on tofu and the plugin: beside the boots (TestMain)
	const secret = "3f1b0c2e-6a4d-4c5e-9f8a-7b6c5d4e3f2a"
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	fake, f := scalewayFlow(t, ctx, secret, func(p *nodes.Platform) {
		p.Pools = map[string]nodes.Pool{"db": {Zones: []string{"platform.db"}, Machine: "EM-A115X-SSD"}}
	})
	add := func(id, name, ip string) string {
		fake.AddServer(fakescaleway.Server{ID: id, Zone: "fr-par-2", Name: name, ProjectID: "0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d",
			OfferID: "a5065ba4-dde2-45f3-adec-1ebbb27b766b", OSID: "96e5f0f2-d216-4de2-8a15-68730d877885", IPv4: ip})
		return "fr-par-2/" + id
	}
	a := add("11111111-2222-4333-8444-555555555501", "em-1", "51.159.0.1")
	b := add("22222222-2222-4333-8444-555555555502", "My Server", "51.159.0.2")
	c := add("33333333-2222-4333-8444-555555555503", "old-name", "51.159.0.3")
	start := time.Now()
	joins := []struct {
		id   string
		args []string
		node string
	}{{a, nil, "em-1"}, {b, nil, "fr-par-2-22222222"}, {c, []string{"--hostname", "custom"}, "custom"}}
	for _, j := range joins {
		out := f.ok(append([]string{"join", "demo", "--server-id", j.id, "--pool", "db", "--auto-approve"}, j.args...)...)
		if !strings.Contains(out, "as node "+j.node+"@demo") {
			t.Errorf("join %s: want node %s:\n%s", j.id, j.node, out)
		}
	}
	t.Logf("three joins took %s", time.Since(start).Round(time.Second))
	got := map[string][2]string{}
	for id, n := range f.nodes() {
		got[id] = [2]string{n.Hostname, n.Network.PublicIP}
	}
	want := map[string][2]string{a: {"em-1", "51.159.0.1"}, b: {"fr-par-2-22222222", "51.159.0.2"}, c: {"custom", "51.159.0.3"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("node files by server id (-want +got):\n%s", diff)
	}
	if s := fake.Servers(); s[2].Name != "custom" {
		t.Errorf("server names after the joins %+v, want custom written back", s)
	}
	f.converged()
	for _, call := range fake.Calls() {
		if strings.Contains(call, "/install") || strings.HasPrefix(call, "POST ") || strings.HasPrefix(call, "DELETE ") {
			t.Errorf("a join or provision of adopted servers called %s", call)
		}
	}
	t.Logf("fake calls: %v", fake.Calls())
	assertNoSecretIn(t, f.dir, secret)
}

// TestScalewayProvisionFlow runs the Hetzner flow's steps for Scaleway
// Elastic Metal through the plasma-node binary, with the real tofu and
// the real Scaleway plugin against internal/fakescaleway: provision 3,
// the same again changes nothing, count 4 creates one, a lowered count
// deletes the last server only with --allow-delete, destroy leaves no
// server and no node file.
func TestScalewayProvisionFlow(t *testing.T) {
	t.Parallel() // mostly waiting on tofu and the plugin: beside the boots (TestMain)
	const secret = "4e2d1c0b-6a4d-4c5e-9f8a-7b6c5d4e3f2a"
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	fake, f := scalewayFlow(t, ctx, secret, func(p *nodes.Platform) {
		p.Infrastructure.Image = "96e5f0f2-d216-4de2-8a15-68730d877885"
		p.Infrastructure.SSHKeyID = "4f1c2a4e-6f6d-4d8f-9e0b-2b1a3c4d5e6f"
	})
	check := func(step string, want int) {
		t.Helper()
		servers, ns := fake.Servers(), f.nodes()
		if len(servers) != want || len(ns) != want {
			t.Fatalf("%s: fake holds %d servers, %d node files; want %d of each", step, len(servers), len(ns), want)
		}
		for _, s := range servers {
			n := ns[s.Zone+"/"+s.ID]
			if n == nil || n.Hostname != s.Name || n.Network.PublicIP != s.IPv4 || n.Network.PrivateIP == "" {
				t.Errorf("%s: server %s (%s, %s) has node %+v, want one of that name and address", step, s.ID, s.Name, s.IPv4, n)
			}
		}
	}
	start := time.Now()
	f.scale(func(n int) string { return "db:EM-A115X-SSD:" + strconv.Itoa(n) }, check)
	for _, call := range fake.Calls() {
		if strings.Contains(call, "/install") {
			t.Errorf("the flow reinstalled a server: %s", call)
		}
	}
	t.Logf("flow took %s; fake calls: %v", time.Since(start).Round(time.Second), fake.Calls())
	assertNoSecretIn(t, f.dir, secret)
}
