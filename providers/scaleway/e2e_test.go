package scaleway_test

import (
	"bytes"
	"context"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/plasmactl/plasma-node/internal/fakescaleway"
	"github.com/plasmactl/plasma-node/internal/tofutest"
	"github.com/plasmactl/plasma-node/nodes"
	"github.com/plasmactl/plasma-node/providers"
	"github.com/plasmactl/plasma-node/providers/scaleway"
	"github.com/plasmactl/plasma-node/tofu"
)

// Credentials of the fake, in the forms the SDK checks; they reach the
// plugin through the environment only.
const (
	fakeAccessKey = "SCWFAKEFAKEFAKEFAKE1"
	fakeSecretKey = "3f1b0c2e-6a4d-4c5e-9f8a-7b6c5d4e3f2a"
	fakeProject   = "0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d"
	fakeOffer     = "a5065ba4-dde2-45f3-adec-1ebbb27b766b"
	fakeOS        = "96e5f0f2-d216-4de2-8a15-68730d877885"
)

// TestRealPluginAdoptsAndRenames runs the real tofu and Scaleway plugin,
// from the .ci/tools.sh mirror, against internal/fakescaleway: an
// import-only configuration adopts an Elastic Metal server by zone/UUID
// without reinstalling it, then a new hostname is written back as its
// name (a PATCH), a plain update.
func TestRealPluginAdoptsAndRenames(t *testing.T) {
	bin := tofutest.Binary(t)
	rc := tofutest.CLIConfig(t, tofutest.Mirror(t, tofutest.Scaleway))
	fake := fakescaleway.Start(fakeSecretKey)
	defer fake.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	srv := fake.AddServer(fakescaleway.Server{ID: "11111111-2222-4333-8444-555555555555", Zone: "fr-par-2", Name: "em-1",
		ProjectID: fakeProject, OfferID: fakeOffer, OSID: fakeOS, IPv4: "51.159.0.10", SSHKeyIDs: []string{"4f1c2a4e-6f6d-4d8f-9e0b-2b1a3c4d5e6f"}})
	id := srv.Zone + "/" + srv.ID

	p := &scaleway.Provider{}
	plat := &nodes.Platform{Name: "demo", Infrastructure: nodes.Infrastructure{MetalProvider: "scaleway", Zone: "fr-par-2",
		ProjectID: fakeProject, Image: fakeOS, API: nodes.API{URI: fake.Endpoint()}}}
	env, err := p.Credentials(plat, func(k string) string {
		return map[string]string{"SCW_ACCESS_KEY": fakeAccessKey, "SCW_SECRET_KEY": fakeSecretKey}[k]
	})
	if err != nil {
		t.Fatal(err)
	}
	env["TF_CLI_CONFIG_FILE"] = rc
	env["HOME"] = t.TempDir()
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
	pools := map[string]nodes.Pool{"db": {Zones: []string{"demo.db"}, Machine: "EM-A115X-SSD"}}
	step := func(hostname string, init bool) tofu.Summary {
		t.Helper()
		cfg, err := p.Configure(providers.Input{Platform: plat, Pools: pools, ImportOnly: true,
			Existing: []providers.Existing{{Pool: "db", Index: 0, Hostname: hostname, ServerID: id}}})
		if err != nil {
			t.Fatal(err)
		}
		if err := wd.WriteConfig(cfg); err != nil {
			t.Fatal(err)
		}
		if init {
			if err := r.Init(ctx, tofu.InitOptions{}); err != nil {
				t.Fatal(err)
			}
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
		if len(sum.Creates)+len(sum.DestructiveUpdates)+len(sum.Replacements)+len(sum.Deletes) != 0 {
			t.Fatalf("plan for hostname %s: %s %+v, want no create, reinstall, replacement or delete", hostname, sum, sum)
		}
		if err := r.Apply(ctx, sp); err != nil {
			t.Fatal(err)
		}
		return sum
	}
	if sum := step("em-1", true); len(sum.Imports) != 1 {
		t.Errorf("import plan: %s, want one import", sum)
	}
	outputs, err := r.Output(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got, err := p.Servers(outputs)
	if err != nil {
		t.Fatal(err)
	}
	want := []providers.Server{{Hostname: "em-1", ServerID: id, PublicIP: "51.159.0.10", Zone: "fr-par-2", Machine: "EM-A115X-SSD",
		Pool: "db", DisplayName: "em-1"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Servers() (-want +got):\n%s", diff)
	}
	if sum := step("em-renamed", false); len(sum.Updates) != 1 {
		t.Errorf("rename plan: %s, want one plain update", sum)
	}
	if s := fake.Servers()[0]; s.Name != "em-renamed" || s.OSID != fakeOS {
		t.Errorf("server after the rename = %+v, want named em-renamed, not reinstalled", s)
	}
	if !slices.Contains(fake.Calls(), "PATCH /baremetal/v1/zones/fr-par-2/servers/"+srv.ID) {
		t.Errorf("calls %v: no PATCH of the server", fake.Calls())
	}
	t.Logf("fake calls: %v", fake.Calls())
}
