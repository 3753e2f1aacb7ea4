package ovh_test

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/plasmactl/plasma-node/internal/fakeovh"
	"github.com/plasmactl/plasma-node/internal/tofutest"
	"github.com/plasmactl/plasma-node/nodes"
	"github.com/plasmactl/plasma-node/providers"
	"github.com/plasmactl/plasma-node/providers/ovh"
	"github.com/plasmactl/plasma-node/tofu"
)

// fakeCreds are the fake's application; they reach the plugin through
// the environment only.
var fakeCreds = fakeovh.Credentials{AppKey: "fakeappkey", AppSecret: "fakeappsecret", ConsumerKey: "fakeconsumerkey"}

// TestRealPluginAdoptsAndEnriches runs the real tofu and OVH plugin,
// from the .ci/tools.sh mirror, against internal/fakeovh: an import-only
// configuration adopts a server without touching it and its output gives
// the display name, the public and vRack MACs and the disk paths.
func TestRealPluginAdoptsAndEnriches(t *testing.T) {
	bin := tofutest.Binary(t)
	rc := tofutest.CLIConfig(t, tofutest.Mirror(t, tofutest.OVH))
	fake := fakeovh.Start(fakeCreds)
	defer fake.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	srv := fake.AddServer(fakeovh.Server{Name: "ns5009999.ip-147-135-1.net", DisplayName: "db-1", IP: "147.135.1.10",
		Datacenter: "bhs1", Region: "ca-east-bhs", CommercialRange: "advance", OS: "debian12_64",
		PublicMAC: "aa:bb:cc:00:00:01", PrivateMAC: "aa:bb:cc:00:00:02", DiskType: "NVME", Disks: 2})

	p := &ovh.Provider{}
	plat := &nodes.Platform{Name: "demo", Infrastructure: nodes.Infrastructure{MetalProvider: "ovh", Region: "ca", API: nodes.API{URI: fake.Endpoint()}}}
	env, err := p.Credentials(plat, func(k string) string {
		return map[string]string{"OVH_APPLICATION_KEY": fakeCreds.AppKey, "OVH_APPLICATION_SECRET": fakeCreds.AppSecret, "OVH_CONSUMER_KEY": fakeCreds.ConsumerKey}[k]
	})
	if err != nil {
		t.Fatal(err)
	}
	env["TF_CLI_CONFIG_FILE"] = rc
	wd, err := tofu.OpenWorkdir(t.TempDir(), plat.Name)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	r, err := tofu.NewRunner(tofu.Binary{Path: bin, Name: "tofu"}, wd, tofu.RunnerOptions{Stdout: &out, Stderr: &out, Env: env, WaitDelay: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("tofu output:\n%s\nfake calls: %v", out.String(), fake.Calls())
		}
	})
	pools := map[string]nodes.Pool{"db": {Zones: []string{"demo.db"}, Machine: "24adv01", Count: 0}}
	cfg, err := p.Configure(providers.Input{Platform: plat, Pools: pools, ImportOnly: true,
		Existing: []providers.Existing{{Pool: "db", Index: 0, Hostname: "db-1", ServerID: srv.Name}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := wd.WriteConfig(cfg); err != nil {
		t.Fatal(err)
	}
	if err := r.Init(ctx, tofu.InitOptions{}); err != nil {
		t.Fatal(err)
	}
	sp, err := r.Plan(ctx, tofu.PlanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	js, err := r.Show(ctx, sp)
	if err != nil {
		t.Fatal(err)
	}
	sum := tofu.Classify(js, p.Destructive())
	if len(sum.Imports) != 1 || len(sum.Creates)+len(sum.Updates)+len(sum.DestructiveUpdates)+len(sum.Replacements)+len(sum.Deletes) != 0 {
		t.Fatalf("import plan: %s, want one import and nothing else", sum)
	}
	if err := r.Apply(ctx, sp); err != nil {
		t.Fatal(err)
	}
	outputs, err := r.Output(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got, err := p.Servers(outputs)
	if err != nil {
		t.Fatal(err)
	}
	want := []providers.Server{{Hostname: "db-1", ServerID: srv.Name, PublicIP: "147.135.1.10", Zone: "bhs1", Region: "ca-east-bhs",
		Machine: "24adv01", Pool: "db", DisplayName: "db-1", MAC: "aa:bb:cc:00:00:02", PublicMAC: "aa:bb:cc:00:00:01",
		Disks: []string{"/dev/nvme0n1", "/dev/nvme1n1"}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Servers() (-want +got):\n%s", diff)
	}

	// A hostname other than the display name is written back as a plain
	// update, with no reinstall.
	before := len(fake.Calls())
	cfg, err = p.Configure(providers.Input{Platform: plat, Pools: pools, ImportOnly: true,
		Existing: []providers.Existing{{Pool: "db", Index: 0, Hostname: "db-renamed", ServerID: srv.Name}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := wd.WriteConfig(cfg); err != nil {
		t.Fatal(err)
	}
	if sp, err = r.Plan(ctx, tofu.PlanOptions{}); err != nil {
		t.Fatal(err)
	}
	if js, err = r.Show(ctx, sp); err != nil {
		t.Fatal(err)
	}
	if sum := tofu.Classify(js, p.Destructive()); len(sum.Updates) != 1 || len(sum.Updates[0].ChangedAttrs) == 0 ||
		len(sum.Creates)+len(sum.DestructiveUpdates)+len(sum.Replacements)+len(sum.Deletes) != 0 {
		t.Fatalf("rename plan: %s %+v, want one plain update", sum, sum.Updates)
	}
	if err := r.Apply(ctx, sp); err != nil {
		t.Fatal(err)
	}
	if got := fake.Servers()[0].DisplayName; got != "db-renamed" {
		t.Errorf("display name after the rename = %q, want db-renamed", got)
	}
	calls := fake.Calls()[before:]
	for _, want := range []string{"PUT /dedicated/server/" + srv.Name, "GET /dedicated/server/" + srv.Name + "/serviceInfos", "PUT /services/"} {
		if !slices.ContainsFunc(calls, func(c string) bool { return strings.HasPrefix(c, want) }) {
			t.Errorf("rename calls %v lack %s", calls, want)
		}
	}
	if slices.ContainsFunc(calls, func(c string) bool { return strings.Contains(c, "/reinstall") || strings.Contains(c, "/install/") }) {
		t.Errorf("rename calls %v reinstall the server", calls)
	}
	t.Logf("fake calls: %v", fake.Calls())
}
