package plasmanode

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/plasmactl/plasma-node/nodes"
)

func TestProvisionerDir(t *testing.T) {
	p := &Project{Store: nodes.Open("/proj", nodes.Options{})}
	withDir := &nodes.Platform{Infrastructure: nodes.Infrastructure{ProvisionerDir: "state/np"}}
	abs := &nodes.Platform{Infrastructure: nodes.Infrastructure{ProvisionerDir: "/srv/np"}}
	tests := map[string]struct {
		plat     *nodes.Platform
		explicit string
		env      string
		want     string
		project  string
	}{
		"the project's option comes after the operation's": {plat: withDir, env: "/env", want: "/opt", project: "/opt"},
		"the operation's option wins over the project's":   {plat: withDir, explicit: "/flag", want: "/flag", project: "/opt"},
		"the flag wins":                               {withDir, "/flag", "/env", "/flag", ""},
		"the environment comes next":                  {withDir, "", "/env", "/env", ""},
		"platform.yaml is relative to the project":    {withDir, "", "", "/proj/state/np", ""},
		"an absolute platform.yaml folder is kept":    {abs, "", "", "/srv/np", ""},
		"the default is node-provisioner's own":       {&nodes.Platform{}, "", "", DefaultProvisionerDir, ""},
		"no platform at all gets the default as well": {nil, "", "", DefaultProvisionerDir, ""},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Setenv(EnvProvisionerDir, tc.env)
			p.provisionerDir = tc.project
			if got := p.ProvisionerDir(tc.plat, tc.explicit); got != tc.want {
				t.Errorf("ProvisionerDir = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestProvisionPXE(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	state := filepath.Join(t.TempDir(), "np")
	p, err := OpenProject(ctx, dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Scaffold(ctx, ScaffoldOptions{Platform: "metal", Provider: "pxe"}); err != nil {
		t.Fatal(err)
	}
	// Machines given in platform.yaml, under the pool.
	yaml := `name: metal
infrastructure:
  metal_provider: pxe  # bare metal
pools:
  control:
    zones: [platform.foundation.cluster.control]
    machine: pve
    count: 1
    hardware:
      - macs: ["52:54:00:00:00:01"]
        boot_disk: sda
      - macs: ["52:54:00:00:00:02"]
`
	plat := filepath.Join(dir, "platforms", "metal", "platform.yaml")
	if err := os.WriteFile(plat, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv(EnvProvisionerDir, "")

	res, err := p.Provision(ctx, ProvisionOptions{Platform: "metal", DryRun: true, ProvisionerDir: state})
	if err != nil || len(res.Summary.Creates) != 1 {
		t.Fatalf("dry run: %v %+v", err, res.Summary)
	}
	if _, err := os.Stat(state); !os.IsNotExist(err) {
		t.Errorf("the dry run made the state folder: %v", err)
	}

	res, err = p.Provision(ctx, ProvisionOptions{Platform: "metal", Specs: []string{"foundation.cluster.control:pve:2"}, AutoApprove: true, ProvisionerDir: state})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, n := range res.Nodes {
		got = append(got, n.Hostname+" "+n.ProviderMetadata.ServerID+" "+n.Network.PrivateMAC)
	}
	if diff := cmp.Diff([]string{"metal-control-001 52:54:00:00:00:01 52:54:00:00:00:01", "metal-control-002 52:54:00:00:00:02 52:54:00:00:00:02"}, got); diff != "" {
		t.Errorf("nodes (-want +got):\n%s", diff)
	}
	after, _ := os.ReadFile(plat)
	pl, err := p.Store.Platform(ctx, "metal")
	if err != nil || pl.Pools["control"].Count != 2 || len(pl.Pools["control"].Hardware) != 2 || !strings.Contains(string(after), "# bare metal") {
		t.Errorf("a spec run lost the pool's hardware or count: %v\n%s", err, after)
	}
	ns, err := p.List(ctx, ListOptions{Platform: "metal", ProvisionerDir: state})
	if err != nil || len(ns) != 2 || ns[0].InstallState != "pending" {
		t.Errorf("list: %v %v", ns, err)
	}
	notADir := filepath.Join(t.TempDir(), "file")
	os.WriteFile(notADir, nil, 0o600)
	ns, err = p.List(ctx, ListOptions{Platform: "metal", ProvisionerDir: notADir})
	if err != nil || len(ns) != 2 || ns[1].InstallState != StateUnknown {
		t.Errorf("list with an unreadable state folder: %v %v", ns, err)
	}
	ns, err = p.List(ctx, ListOptions{Platform: "metal", ProvisionerDir: t.TempDir()})
	if err != nil || len(ns) != 2 || ns[0].InstallState != StateUnregistered {
		t.Errorf("list with an empty state folder: %v %v", ns, err)
	}
}
