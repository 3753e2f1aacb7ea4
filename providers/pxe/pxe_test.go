package pxe

import (
	"github.com/plasmactl/plasma-node/pxe/registry"
	"github.com/plasmactl/plasma-node/pxe/store/folder"

	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/plasmactl/plasma-node/answer"
	"github.com/plasmactl/plasma-node/nodes"
	"github.com/plasmactl/plasma-node/providers"
)

const hwFile = `machines:
  - macs: ["52:54:00:00:00:01"]
    boot_disk: sda
  - macs: ["52:54:00:00:00:02"]
    boot_disk: 25414A800205
    data_pools: ["tank=single:50026B73842AD86F"]
  - serial: CZ2D1A0BC3
    pool: data
`

func input(t *testing.T, dir string, count int, existing ...providers.Existing) providers.DirectInput {
	t.Helper()
	hw := filepath.Join(t.TempDir(), "hardware.yaml")
	if err := os.WriteFile(hw, []byte(hwFile), 0o644); err != nil {
		t.Fatal(err)
	}
	plat := &nodes.Platform{Name: "metal", Infrastructure: nodes.Infrastructure{MetalProvider: Name}}
	pools := map[string]nodes.Pool{"control": {Zones: []string{"platform.foundation.cluster.control"}, Machine: "pve", Count: count}}
	return providers.DirectInput{Input: providers.Input{Platform: plat, Pools: pools, Existing: existing}, Location: providers.Location{Dir: dir}, HardwareFile: hw}
}

type planned struct {
	Creates, Deletes []string
	Servers          []string // hostname=server id
}

func summarize(t *testing.T, p providers.DirectPlan, apply bool) planned {
	t.Helper()
	var out planned
	for _, c := range p.Summary().Creates {
		out.Creates = append(out.Creates, c.Address)
	}
	for _, c := range p.Summary().Deletes {
		out.Deletes = append(out.Deletes, c.Address)
	}
	if apply {
		srv, err := p.Apply(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range srv {
			out.Servers = append(out.Servers, s.Hostname+"="+s.ServerID)
		}
	}
	return out
}

func TestPlan(t *testing.T) {
	ctx := context.Background()
	pv := &Provider{}
	adopted := func(idx int, id string) providers.Existing {
		return providers.Existing{Pool: "control", Index: idx, ServerID: id}
	}
	tests := map[string]struct {
		count    int
		existing []providers.Existing
		before   []registry.Registration
		want     planned
		wantRegs []string
	}{
		"two new nodes take the first two machines": {
			count: 2,
			want: planned{Creates: []string{
				"node-provisioner_registration.metal-control-001 (mac 52:54:00:00:00:01; boot disk sda)",
				"node-provisioner_registration.metal-control-002 (mac 52:54:00:00:00:02; boot disk 25414A800205)",
			}, Servers: []string{"metal-control-001=52:54:00:00:00:01", "metal-control-002=52:54:00:00:00:02"}},
			wantRegs: []string{"metal-control-001", "metal-control-002"},
		},
		"the same count again creates nothing": {
			count:    2,
			existing: []providers.Existing{adopted(0, "52:54:00:00:00:01"), adopted(1, "52:54:00:00:00:02")},
			before:   []registry.Registration{reg("metal-control-001", "52:54:00:00:00:01"), reg("metal-control-002", "52:54:00:00:00:02")},
			want:     planned{Servers: []string{"metal-control-001=52:54:00:00:00:01", "metal-control-002=52:54:00:00:00:02"}},
			wantRegs: []string{"metal-control-001", "metal-control-002"},
		},
		"raising the count adds the next free machine": {
			count:    2,
			existing: []providers.Existing{adopted(0, "52:54:00:00:00:01")},
			before:   []registry.Registration{reg("metal-control-001", "52:54:00:00:00:01")},
			want: planned{Creates: []string{"node-provisioner_registration.metal-control-002 (mac 52:54:00:00:00:02; boot disk 25414A800205)"},
				Servers: []string{"metal-control-001=52:54:00:00:00:01", "metal-control-002=52:54:00:00:00:02"}},
			wantRegs: []string{"metal-control-001", "metal-control-002"},
		},
		"lowering the count plans a delete and writes nothing": {
			count:    1,
			existing: []providers.Existing{adopted(0, "52:54:00:00:00:01"), adopted(1, "52:54:00:00:00:02")},
			before:   []registry.Registration{reg("metal-control-001", "52:54:00:00:00:01"), reg("metal-control-002", "52:54:00:00:00:02")},
			want:     planned{Deletes: []string{"node-provisioner_registration.metal-control-002"}, Servers: []string{"metal-control-001=52:54:00:00:00:01"}},
			wantRegs: []string{"metal-control-001", "metal-control-002"},
		},
		"a machine another registration pins is skipped": {
			count:  1,
			before: []registry.Registration{reg("pve-by-hand", "52:54:00:00:00:01")},
			want: planned{Creates: []string{"node-provisioner_registration.metal-control-001 (mac 52:54:00:00:00:02; boot disk 25414A800205)"},
				Servers: []string{"metal-control-001=52:54:00:00:00:02"}},
			wantRegs: []string{"metal-control-001", "pve-by-hand"},
		},
		"a registration left by a stopped run is taken, not rewritten": {
			count:  1,
			before: []registry.Registration{reg("metal-control-001", "52:54:00:00:00:02")},
			want: planned{Creates: []string{"node-provisioner_registration.metal-control-001 (mac 52:54:00:00:00:02; node file; the registration exists)"},
				Servers: []string{"metal-control-001=52:54:00:00:00:02"}},
			wantRegs: []string{"metal-control-001"},
		},
		"an adopted node without a registration is not registered again": {
			count:    1,
			existing: []providers.Existing{adopted(0, "52:54:00:00:00:01")},
			want:     planned{Servers: []string{"metal-control-001=52:54:00:00:00:01"}},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			if len(tc.before) > 0 {
				g, err := folder.OpenRegistrations(dir, nil)
				if err != nil {
					t.Fatal(err)
				}
				for _, r := range tc.before {
					if _, err := g.Put(ctx, r); err != nil {
						t.Fatal(err)
					}
				}
			}
			p, err := pv.Plan(ctx, input(t, dir, tc.count, tc.existing...))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, summarize(t, p, true)); diff != "" {
				t.Errorf("plan (-want +got):\n%s", diff)
			}
			st, err := pv.States(ctx, providers.Location{Dir: dir})
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for n := range st {
				names = append(names, n)
			}
			slices.Sort(names)
			if diff := cmp.Diff(tc.wantRegs, names); diff != "" {
				t.Errorf("registrations (-want +got):\n%s", diff)
			}
		})
	}
}

func reg(name, mac string) registry.Registration {
	return registry.Registration{Name: name, MACs: []string{mac}, BootDisk: answer.BootDisk{Kind: answer.BootDiskAny}}
}

func TestPlanWritesTheRegistrationsOfTheHardware(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	p, err := (&Provider{}).Plan(ctx, input(t, dir, 2))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "registrations")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Plan wrote to the state folder: %v", err)
	}
	if _, err := p.Apply(ctx); err != nil {
		t.Fatal(err)
	}
	g, _ := folder.OpenRegistrations(dir, nil)
	r, err := g.Get(ctx, "metal-control-002")
	if err != nil {
		t.Fatal(err)
	}
	got := []string{strings.Join(r.MACs, ","), r.BootDisk.String(), r.Pools[0].String()}
	if diff := cmp.Diff([]string{"52:54:00:00:00:02", "25414A800205", "tank=single:50026B73842AD86F"}, got); diff != "" {
		t.Errorf("registration (-want +got):\n%s", diff)
	}
	fi, err := os.Stat(filepath.Join(dir, "registrations", "metal-control-002.json"))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("registration file mode: %v %v", fi.Mode(), err)
	}
}

func TestPlanRefusals(t *testing.T) {
	ctx := context.Background()
	tests := map[string]struct {
		mutate func(*providers.DirectInput)
		want   error
		msg    string
	}{
		"more nodes than machines": {func(in *providers.DirectInput) { c := in.Pools["control"]; c.Count = 3; in.Pools["control"] = c },
			ErrNoHardware, "pool control needs 1 more"},
		"a machine kept for another pool is not taken": {func(in *providers.DirectInput) { c := in.Pools["control"]; c.Count = 3; in.Pools["control"] = c },
			ErrNoHardware, "pool control needs 1 more machine(s): not enough machines: add machines (each with macs, serial or uuid) to /"},
		"a machine another node has is named": {func(in *providers.DirectInput) {
			in.Pools["web"] = nodes.Pool{Zones: []string{"platform.interaction.web"}, Machine: "pve", Count: 1}
			in.Existing = []providers.Existing{{Pool: "web", Hostname: "old1", ServerID: MachineID(nodes.Machine{MACs: []string{"52:54:00:00:00:01"}})}}
		}, ErrNoHardware, "(mac 52:54:00:00:00:01) is node old1's): not enough machines"},
		"a missing hardware file": {func(in *providers.DirectInput) { in.HardwareFile = filepath.Join(t.TempDir(), "none.yaml") },
			ErrInvalidHardware, "hardware file: invalid hardware list: open "},
		"a bad machine in platform.yaml": {func(in *providers.DirectInput) {
			c := in.Pools["control"]
			c.Hardware = []nodes.Machine{{MACs: []string{"zz"}}}
			in.Pools["control"] = c
		}, ErrInvalidHardware, "platform.yaml pools.control.hardware[0]: invalid hardware list: macs: invalid MAC address"},
		"no state folder": {func(in *providers.DirectInput) { in.Dir = "" }, providers.ErrInvalidInput, "no node-provisioner state folder"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			in := input(t, t.TempDir(), 2)
			tc.mutate(&in)
			_, err := (&Provider{}).Plan(ctx, in)
			if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("error %v, want %v containing %q", err, tc.want, tc.msg)
			}
		})
	}
}

func TestPoolHardwareComesFirst(t *testing.T) {
	in := input(t, t.TempDir(), 1)
	c := in.Pools["control"]
	c.Hardware = []nodes.Machine{{UUID: "0F1E2D3C-4B5A-6978-8796-A5B4C3D2E1F0", BootDisk: "nvme0n1"}}
	in.Pools["control"] = c
	p, err := (&Provider{}).Plan(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	want := planned{Creates: []string{"node-provisioner_registration.metal-control-001 (uuid 0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0; boot disk nvme0n1)"},
		Servers: []string{"metal-control-001=uuid:0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0"}}
	if diff := cmp.Diff(want, summarize(t, p, true)); diff != "" {
		t.Errorf("plan (-want +got):\n%s", diff)
	}
}

func TestRemoveKeepsConsumedRegistrations(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	g, _ := folder.OpenRegistrations(dir, nil)
	for _, r := range []registry.Registration{reg("metal-control-001", "52:54:00:00:00:01"), reg("metal-control-002", "52:54:00:00:00:02")} {
		g.Put(ctx, r)
	}
	if _, err := g.Consume(ctx, "metal-control-001", registry.ConsumeRecord{ClientIP: "10.0.0.9"}); err != nil {
		t.Fatal(err)
	}
	in := input(t, dir, 2, providers.Existing{Pool: "control", Index: 0, ServerID: "52:54:00:00:00:01"}, providers.Existing{Pool: "control", Index: 1, ServerID: "52:54:00:00:00:02"})
	got, err := (&Provider{}).Remove(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"metal-control-002"}, got); diff != "" {
		t.Errorf("removed (-want +got):\n%s", diff)
	}
	st, _ := (&Provider{}).States(ctx, providers.Location{Dir: dir})
	if diff := cmp.Diff(map[string]string{"metal-control-001": "consumed"}, st); diff != "" {
		t.Errorf("states (-want +got):\n%s", diff)
	}
}

// TestPlanShowsSerialsAsWritten: the plan names a machine by its serial
// as the hardware list writes it, the case the files keep.
func TestPlanShowsSerialsAsWritten(t *testing.T) {
	in := input(t, t.TempDir(), 0)
	in.Pools["data"] = nodes.Pool{Zones: []string{"platform.cognition.data"}, Machine: "pve", Count: 3}
	p, err := (&Provider{}).Plan(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	got := summarize(t, p, false).Creates
	if len(got) != 3 || !strings.Contains(got[2], "serial CZ2D1A0BC3") {
		t.Errorf("creates = %q, want the serial CZ2D1A0BC3 as written", got)
	}
}
