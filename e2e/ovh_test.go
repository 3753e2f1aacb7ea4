package e2e

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/plasmactl/plasma-node/internal/fakeovh"
	"github.com/plasmactl/plasma-node/internal/tofutest"
	"github.com/plasmactl/plasma-node/nodes"
)

// ovhFlow starts a fake OVH API and a project whose platform demo uses
// it through infrastructure.api.uri (region ca, datacenter bhs), with
// the application key, secret and consumer key in the environment only.
func ovhFlow(t *testing.T, ctx context.Context, creds fakeovh.Credentials, pools map[string]nodes.Pool) (*fakeovh.Fake, *cloudFlow) {
	t.Helper()
	fake := fakeovh.Start(creds)
	t.Cleanup(fake.Close)
	f := newCloudFlow(t, ctx, "ovh", tofutest.OVH, fake.Calls, func(p *nodes.Platform) {
		p.Infrastructure.API = nodes.API{URI: fake.Endpoint()}
		p.Infrastructure.Zone, p.Infrastructure.Region = "bhs", "ca"
		p.Pools = pools
	}, "OVH_CLIENT_ID=", "OVH_ACCESS_TOKEN=", "OVH_APPLICATION_KEY="+creds.AppKey,
		"OVH_APPLICATION_SECRET="+creds.AppSecret, "OVH_CONSUMER_KEY="+creds.ConsumerKey)
	return fake, f
}

// TestOVHJoinFlow joins three OVH dedicated servers made outside
// plasma-node through the plasma-node binary, with the real tofu and the
// real OVH plugin against internal/fakeovh: one under its display name,
// one whose display name is no hostname under the name derived from its
// service name (ns5009998, as join without --hostname must work), one
// with --hostname (written back as its display name); each node file
// records the public and vRack MACs and the disks, as the anchor's join
// does. A provision afterwards is converged, and nothing is reinstalled.
func TestOVHJoinFlow(t *testing.T) {
	t.Parallel() // mostly waiting on tofu and the plugin: beside the boots (TestMain)
	creds := fakeovh.Credentials{AppKey: "e2eappkey", AppSecret: "e2e-app-secret-value", ConsumerKey: "e2econsumerkey"}
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	fake, f := ovhFlow(t, ctx, creds, map[string]nodes.Pool{"db": {Zones: []string{"platform.db"}, Machine: "24adv01"}})
	add := func(name, display, ip, mac string) fakeovh.Server {
		return fake.AddServer(fakeovh.Server{Name: name, DisplayName: display, IP: ip, Datacenter: "bhs1", Region: "ca-east-bhs",
			CommercialRange: "advance", OS: "debian12_64", PublicMAC: mac + "1", PrivateMAC: mac + "2", DiskType: "NVME", Disks: 2})
	}
	a := add("ns5009997.ip-147-135-1.net", "db-1", "147.135.1.7", "aa:bb:cc:00:07:0")
	b := add("ns5009998.ip-147-135-1.eu", "My Server", "147.135.1.8", "aa:bb:cc:00:08:0")
	c := add("ns5009999.ip-147-135-1.net", "old-name", "147.135.1.9", "aa:bb:cc:00:09:0")
	start := time.Now()
	joins := []struct {
		id   string
		args []string
		node string
	}{{a.Name, nil, "db-1"}, {b.Name, nil, "ns5009998"}, {c.Name, []string{"--hostname", "custom"}, "custom"}}
	for _, j := range joins {
		out := f.ok(append([]string{"join", "demo", "--server-id", j.id, "--pool", "db", "--auto-approve"}, j.args...)...)
		if !strings.Contains(out, "as node "+j.node+"@demo") {
			t.Errorf("join %s: want node %s:\n%s", j.id, j.node, out)
		}
	}
	t.Logf("three joins took %s", time.Since(start).Round(time.Second))

	type view struct{ Hostname, PublicIP, PublicMAC, PrivateMAC, Zone string }
	got := map[string]view{}
	for id, n := range f.nodes() {
		got[id] = view{n.Hostname, n.Network.PublicIP, n.Network.PublicMAC, n.Network.PrivateMAC, n.ProviderMetadata.Zone}
		if diff := cmp.Diff([]string{"/dev/nvme0n1", "/dev/nvme1n1"}, n.Disks); diff != "" {
			t.Errorf("node %s disks (-want +got):\n%s", n.Hostname, diff)
		}
	}
	want := map[string]view{
		a.Name: {"db-1", a.IP, "aa:bb:cc:00:07:01", "aa:bb:cc:00:07:02", "bhs1"},
		b.Name: {"ns5009998", b.IP, "aa:bb:cc:00:08:01", "aa:bb:cc:00:08:02", "bhs1"},
		c.Name: {"custom", c.IP, "aa:bb:cc:00:09:01", "aa:bb:cc:00:09:02", "bhs1"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("node files by server id (-want +got):\n%s", diff)
	}
	names := map[string]string{}
	for _, s := range fake.Servers() {
		names[s.Name] = s.DisplayName
	}
	if names[c.Name] != "custom" || names[a.Name] != "db-1" {
		t.Errorf("display names after the joins %v, want custom written back, db-1 kept", names)
	}
	// The first provision writes the derived hostname back as the display
	// name of the server whose display name was no hostname.
	f.converged()
	if r := fake.Reinstalls(); len(r) != 0 {
		t.Errorf("joins and provisions of adopted servers reinstalled %v", r)
	}
	t.Logf("fake calls: %v", fake.Calls())
	assertNoSecretIn(t, f.dir, creds.AppSecret)
}

// TestOVHProvisionFlow runs the Hetzner flow's steps for OVH dedicated
// servers through the plasma-node binary, with the real tofu and the real
// OVH plugin against internal/fakeovh: provision 3 (each one ordered:
// cart, item, configurations, checkout, payment, delivery, then
// installed: reinstall and its task), the same again changes nothing,
// count 4 orders one, a lowered count terminates the last server only
// with --allow-delete (terminate, the emailed token, confirmTermination),
// destroy terminates the rest. The plugin waits a minute before it first
// asks whether an order is delivered, so each run that orders takes over
// a minute.
func TestOVHProvisionFlow(t *testing.T) {
	t.Parallel() // mostly waiting on tofu and the plugin: beside the boots (TestMain)
	creds := fakeovh.Credentials{AppKey: "e2eappkey2", AppSecret: "e2e-app-secret-value-2", ConsumerKey: "e2econsumerkey2"}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	fake, f := ovhFlow(t, ctx, creds, nil)
	check := func(step string, want int) {
		t.Helper()
		servers, ns := fake.Servers(), f.nodes()
		if len(servers) != want || len(ns) != want {
			t.Fatalf("%s: fake holds %d servers, %d node files; want %d of each", step, len(servers), len(ns), want)
		}
		for _, s := range servers {
			n := ns[s.Name]
			if n == nil || n.Hostname != s.DisplayName || n.Network.PublicIP != s.IP || n.Network.PublicMAC != s.PublicMAC ||
				n.Network.PrivateMAC != s.PrivateMAC || len(n.Disks) != s.Disks {
				t.Errorf("%s: server %+v has node %+v, want its display name, address, MACs and disks", step, s, n)
			}
		}
	}
	start := time.Now()
	f.scale(func(n int) string { return "db:24adv01:" + strconv.Itoa(n) }, check)
	if got := len(fake.Reinstalls()); got != 4 {
		t.Errorf("reinstalls %v, want one per ordered server (4), none for adopted ones", fake.Reinstalls())
	}
	t.Logf("flow took %s; fake calls: %v", time.Since(start).Round(time.Second), fake.Calls())
	assertNoSecretIn(t, f.dir, creds.AppSecret)
}
