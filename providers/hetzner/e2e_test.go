package hetzner_test

import (
	"bytes"
	"context"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/plasmactl/plasma-node/internal/fakehcloud"
	"github.com/plasmactl/plasma-node/internal/tofutest"
	"github.com/plasmactl/plasma-node/nodes"
	"github.com/plasmactl/plasma-node/providers"
	"github.com/plasmactl/plasma-node/providers/hetzner"
	"github.com/plasmactl/plasma-node/tofu"
)

// fakeToken is 64 characters, as the plugin requires.
var fakeToken = strings.Repeat("f", hetzner.TokenLength)

// TestRealPluginCreatesImportsAndDestroys runs the real tofu and hcloud
// plugin, from the .ci/tools.sh mirror, against internal/fakehcloud.
func TestRealPluginCreatesImportsAndDestroys(t *testing.T) {
	bin := tofutest.Binary(t)
	rc := tofutest.CLIConfig(t, tofutest.Mirror(t, tofutest.Hcloud))
	fake := fakehcloud.Start(fakeToken)
	defer fake.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	p := &hetzner.Provider{}
	plat := &nodes.Platform{Name: "demo", Infrastructure: nodes.Infrastructure{
		MetalProvider: "hetzner", Zone: "fsn1", API: nodes.API{URI: fake.Endpoint(), Token: fakeToken},
	}}
	env, err := p.Credentials(plat, func(string) string { return "" })
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
	pools := map[string]nodes.Pool{"web": {Zones: []string{"demo.web"}, Machine: "cx22", Count: 2}}

	plan := func(in providers.Input) (*tofu.SavedPlan, tofu.Summary) {
		t.Helper()
		cfg, err := p.Configure(in)
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
		return sp, tofu.Classify(js, p.Destructive())
	}

	sp, sum := plan(providers.Input{Platform: plat, Pools: pools})
	if len(sum.Creates) != 2 || len(sum.Replacements)+len(sum.Deletes) != 0 {
		t.Fatalf("first plan: %s, want 2 creates", sum)
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
	var want []providers.Server
	for _, s := range fake.Servers() {
		want = append(want, providers.Server{Hostname: s.Name, ServerID: itoa(s.ID), PublicIP: s.PublicIPv4,
			Zone: "fsn1", Machine: "cx22", Pool: "web", DisplayName: s.Name})
	}
	// tofu creates the two in parallel: the fake's ids follow no order.
	slices.SortFunc(want, func(a, b providers.Server) int { return strings.Compare(a.Hostname, b.Hostname) })
	if len(want) != 2 || want[0].Hostname != "demo-web-001" || want[1].Hostname != "demo-web-002" {
		t.Fatalf("fake servers after apply = %+v, want demo-web-001 and demo-web-002", fake.Servers())
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Servers() (-want +got):\n%s", diff)
	}

	// A server made outside tofu is adopted by id, beside the two in
	// state, as a third slot: import only, no replacement.
	other := fake.AddServer("handmade", "cpx11", "debian-12", "nbg1")
	existing := []providers.Existing{
		{Pool: "web", Index: 0, ServerID: got[0].ServerID},
		{Pool: "web", Index: 1, ServerID: got[1].ServerID},
		{Pool: "web", Index: 2, Hostname: "handmade", ServerID: itoa(other.ID)},
	}
	pools["web"] = nodes.Pool{Zones: []string{"demo.web"}, Machine: "cx22", Count: 3}
	sp, sum = plan(providers.Input{Platform: plat, Pools: pools, Existing: existing, ImportOnly: true})
	if len(sum.Imports) != 1 || sum.Imports[0].ImportID != itoa(other.ID) {
		t.Errorf("import plan imports %+v, want only %d", sum.Imports, other.ID)
	}
	if len(sum.Creates)+len(sum.Replacements)+len(sum.Deletes)+len(sum.DestructiveUpdates) != 0 {
		t.Fatalf("import plan: %s, want no create, replacement, delete or destructive update", sum)
	}
	if err := r.Apply(ctx, sp); err != nil {
		t.Fatal(err)
	}
	if s := fake.Servers()[2]; s.ServerType != "cpx11" || s.Location != "nbg1" || s.Labels["platform"] != "demo" {
		t.Errorf("adopted server after apply = %+v, want type and location kept, labels added", s)
	}

	// Destroy: the fake holds no servers.
	if err := r.Destroy(ctx); err != nil {
		t.Fatal(err)
	}
	if s := fake.Servers(); len(s) != 0 {
		t.Errorf("servers after destroy = %+v, want none", s)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
