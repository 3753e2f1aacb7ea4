package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/plasmactl/plasma-node/internal/fakeovh"
	"github.com/plasmactl/plasma-node/internal/tofutest"
	"github.com/plasmactl/plasma-node/nodes"
)

// TestOVHJoinFlow joins three OVH dedicated servers made outside
// plasma-node through the plasma-node binary, with the real tofu and the
// real OVH plugin against internal/fakeovh: one under its display name,
// one whose display name is no hostname under the name derived from its
// service name (ns5009998, as join without --hostname must work), one
// with --hostname (written back as its display name); each node file
// records the public and vRack MACs and the disks, as the anchor's join
// does. A provision afterwards is converged, and nothing is reinstalled.
// The application key, secret and consumer key reach the plugin through
// the environment only.
func TestOVHJoinFlow(t *testing.T) {
	creds := fakeovh.Credentials{AppKey: "e2eappkey", AppSecret: "e2e-app-secret-value", ConsumerKey: "e2econsumerkey"}
	fake := fakeovh.Start(creds)
	defer fake.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	tofuBin := tofutest.Binary(t)
	rc := tofutest.CLIConfig(t, tofutest.Mirror(t, tofutest.OVH))
	project := t.TempDir()
	env := append(os.Environ(), "TF_CLI_CONFIG_FILE="+rc, "HOME="+t.TempDir(), "OVH_CLIENT_ID=", "OVH_ACCESS_TOKEN=",
		"OVH_APPLICATION_KEY="+creds.AppKey, "OVH_APPLICATION_SECRET="+creds.AppSecret, "OVH_CONSUMER_KEY="+creds.ConsumerKey)
	run := func(args ...string) string {
		t.Helper()
		if args[0] == "join" || args[0] == "provision" {
			args = append(args, "--tofu", tofuBin)
		}
		c := exec.CommandContext(ctx, filepath.Join(bin, "plasma-node"), append([]string{"--dir", project}, args...)...)
		c.Env = env
		out, err := c.CombinedOutput()
		if err != nil {
			t.Fatalf("plasma-node %s: %v\n%s\nfake calls: %v", strings.Join(args, " "), err, out, fake.Calls())
		}
		return string(out)
	}
	run("add", "demo", "--provider", "ovh")
	store := nodes.Open(project, nodes.Options{})
	if _, err := store.UpdatePlatform(ctx, "demo", func(p *nodes.Platform) error {
		p.Infrastructure.API = nodes.API{URI: fake.Endpoint()}
		p.Infrastructure.Region = "ca"
		p.Pools = map[string]nodes.Pool{"db": {Zones: []string{"platform.db"}, Machine: "24adv01"}}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	add := func(name, display, ip, mac string) fakeovh.Server {
		return fake.AddServer(fakeovh.Server{Name: name, DisplayName: display, IP: ip, Datacenter: "bhs1", Region: "ca-east-bhs",
			CommercialRange: "advance", OS: "debian12_64", PublicMAC: mac + "1", PrivateMAC: mac + "2", DiskType: "NVME", Disks: 2})
	}
	a := add("ns5009997.ip-147-135-1.net", "db-1", "147.135.1.7", "aa:bb:cc:00:07:0")
	b := add("ns5009998.ip-147-135-1.eu", "My Server", "147.135.1.8", "aa:bb:cc:00:08:0")
	c := add("ns5009999.ip-147-135-1.net", "old-name", "147.135.1.9", "aa:bb:cc:00:09:0")

	start := time.Now()
	for _, j := range []struct {
		srv  fakeovh.Server
		args []string
		node string
	}{
		{a, nil, "db-1"},
		{b, nil, "ns5009998"},
		{c, []string{"--hostname", "custom"}, "custom"},
	} {
		out := run(append([]string{"join", "demo", "--server-id", j.srv.Name, "--pool", "db", "--auto-approve"}, j.args...)...)
		if !strings.Contains(out, "as node "+j.node+"@demo") {
			t.Errorf("join %s: want node %s:\n%s", j.srv.Name, j.node, out)
		}
	}
	t.Logf("three joins took %s", time.Since(start).Round(time.Second))

	type view struct{ ServerID, PublicIP, PublicMAC, PrivateMAC, Datacenter string }
	got := map[string]view{}
	for _, n := range mustNodes(t, store) {
		got[n.Hostname] = view{n.ProviderMetadata.ServerID, n.Network.PublicIP, n.Network.PublicMAC, n.Network.PrivateMAC, n.ProviderMetadata.Zone}
		if diff := cmp.Diff([]string{"/dev/nvme0n1", "/dev/nvme1n1"}, n.Disks); diff != "" {
			t.Errorf("node %s disks (-want +got):\n%s", n.Hostname, diff)
		}
	}
	want := map[string]view{
		"db-1":      {a.Name, a.IP, "aa:bb:cc:00:07:01", "aa:bb:cc:00:07:02", "bhs1"},
		"ns5009998": {b.Name, b.IP, "aa:bb:cc:00:08:01", "aa:bb:cc:00:08:02", "bhs1"},
		"custom":    {c.Name, c.IP, "aa:bb:cc:00:09:01", "aa:bb:cc:00:09:02", "bhs1"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("node files (-want +got):\n%s", diff)
	}
	names := map[string]string{}
	for _, s := range fake.Servers() {
		names[s.Name] = s.DisplayName
	}
	if names[c.Name] != "custom" || names[a.Name] != "db-1" {
		t.Errorf("display names after the joins %v, want custom written back, db-1 kept", names)
	}

	// Every joined server is adopted again: the first provision writes
	// the derived hostname back as the display name of the server whose
	// display name was no hostname, the next one plans no change.
	out := run("provision", "demo", "--auto-approve")
	if !strings.Contains(out, "Plan: 3 to import, 0 to create") || !strings.Contains(out, "0 destructive), 0 to replace, 0 to delete") {
		t.Errorf("provision after the joins:\n%s", out)
	}
	if out := run("provision", "demo", "--auto-approve"); !strings.Contains(out, noChange) {
		t.Errorf("second provision after the joins is not converged:\n%s", out)
	}
	for _, call := range fake.Calls() {
		if strings.Contains(call, "/reinstall") || strings.Contains(call, "/install/") || strings.HasPrefix(call, "POST /order") {
			t.Errorf("a join or provision of adopted servers called %s", call)
		}
	}
	t.Logf("fake calls: %v", fake.Calls())
	assertNoSecretIn(t, project, creds.AppSecret)
}

func mustNodes(t *testing.T, s *nodes.Store) []*nodes.Node {
	t.Helper()
	ns, err := s.Nodes(context.Background(), "demo")
	if err != nil {
		t.Fatal(err)
	}
	return ns
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
	creds := fakeovh.Credentials{AppKey: "e2eappkey2", AppSecret: "e2e-app-secret-value-2", ConsumerKey: "e2econsumerkey2"}
	fake := fakeovh.Start(creds)
	defer fake.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	tofuBin := tofutest.Binary(t)
	rc := tofutest.CLIConfig(t, tofutest.Mirror(t, tofutest.OVH))
	dir := t.TempDir()
	env := append(os.Environ(), "TF_CLI_CONFIG_FILE="+rc, "HOME="+t.TempDir(), "OVH_CLIENT_ID=", "OVH_ACCESS_TOKEN=",
		"OVH_APPLICATION_KEY="+creds.AppKey, "OVH_APPLICATION_SECRET="+creds.AppSecret, "OVH_CONSUMER_KEY="+creds.ConsumerKey)
	cmd := func(args ...string) *exec.Cmd {
		if slices.Contains([]string{"provision", "join", "destroy"}, args[0]) {
			args = append(args, "--tofu", tofuBin)
		}
		c := exec.CommandContext(ctx, filepath.Join(bin, "plasma-node"), append([]string{"--dir", dir}, args...)...)
		c.Env = env
		return c
	}
	run := func(args ...string) string {
		t.Helper()
		out, err := cmd(args...).CombinedOutput()
		if err != nil {
			t.Fatalf("plasma-node %s: %v\n%s\nfake calls: %v", strings.Join(args, " "), err, out, fake.Calls())
		}
		return string(out)
	}
	run("add", "demo", "--provider", "ovh")
	store := nodes.Open(dir, nodes.Options{})
	if _, err := store.UpdatePlatform(ctx, "demo", func(p *nodes.Platform) error {
		p.Infrastructure.API = nodes.API{URI: fake.Endpoint()}
		p.Infrastructure.Zone, p.Infrastructure.Region = "bhs", "ca"
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	check := func(step string, want int) {
		t.Helper()
		list, err := store.Nodes(ctx, "demo")
		if err != nil {
			t.Fatal(err)
		}
		ns := map[string]*nodes.Node{}
		for _, n := range list {
			ns[n.ProviderMetadata.ServerID] = n
		}
		servers := fake.Servers()
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
	spec := func(n int) string { return "db:24adv01:" + strconv.Itoa(n) }
	start := time.Now()
	if out := run("provision", "demo", "-z", spec(3), "--auto-approve"); !strings.Contains(out, "3 to create") {
		t.Errorf("first provision does not plan 3 creates:\n%s", out)
	}
	t.Logf("provision 3 took %s", time.Since(start).Round(time.Second))
	check("provision 3", 3)
	if out := run("provision", "demo", "-z", spec(3), "--auto-approve"); !strings.Contains(out, noChange) {
		t.Errorf("same provision again is not a no-change run:\n%s", out)
	}
	if out := run("provision", "demo", "-z", spec(4), "--auto-approve"); !strings.Contains(out, "1 to create") {
		t.Errorf("count 4 does not plan one create:\n%s", out)
	}
	check("count 4", 4)
	refused, err := cmd("provision", "demo", "-z", spec(3), "--auto-approve").CombinedOutput()
	if err == nil || !strings.Contains(string(refused), "--allow-delete") {
		t.Errorf("lowering under --auto-approve alone: %v, want a refusal naming --allow-delete\n%s", err, refused)
	}
	check("lowering refused", 4)
	if out := run("provision", "demo", "-z", spec(3), "--auto-approve", "--allow-delete"); !strings.Contains(out, "1 to delete") || !strings.Contains(out, "demo-db-004@demo") {
		t.Errorf("lowering with --allow-delete does not delete demo-db-004:\n%s", out)
	}
	check("lowered", 3)
	if out := run("destroy", "demo", "--force"); strings.Count(out, "Removed node ") != 3 {
		t.Errorf("destroy does not remove 3 nodes:\n%s", out)
	}
	check("destroyed", 0)
	if got := len(fake.Reinstalls()); got != 4 {
		t.Errorf("reinstalls %v, want one per ordered server (4), none for adopted ones", fake.Reinstalls())
	}
	t.Logf("flow took %s; fake calls: %v", time.Since(start).Round(time.Second), fake.Calls())
	assertNoSecretIn(t, dir, creds.AppSecret)
}
