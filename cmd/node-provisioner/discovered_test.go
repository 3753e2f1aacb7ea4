package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/plasmactl/plasma-node/pxe/discovery"
	"github.com/plasmactl/plasma-node/pxe/store"
)

// discover puts a machine into the state folder's inbox, as a discovery
// window's post would.
func discover(t *testing.T, dir string, r discovery.Report) {
	t.Helper()
	st, err := store.Open(t.Context(), dir, store.Options{SecretsDir: filepath.Join(dir, "secrets")})
	if err != nil {
		t.Fatal(err)
	}
	in, err := st.Discovered()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := in.Put(context.Background(), r, time.Now()); err != nil {
		t.Fatal(err)
	}
}

var discoveredMachine = discovery.Report{
	NICs: []discovery.NIC{{MAC: "52:54:00:aa:00:01", Link: "up"}, {MAC: "52:54:00:aa:00:02", Link: "down"}},
	DMI:  discovery.DMI{Vendor: "QEMU", Product: "Standard PC", Serial: "DMI-SER-1", UUID: "1e0a7c4e-3d2b-4c8a-9f00-123456789abc"},
	Disks: []discovery.Disk{
		{Name: "vda", SizeBytes: 8 << 30, Serial: "VIRT-A", Transport: "virtio"},
		{Name: "nvme0n1", SizeBytes: 4 << 30, Serial: "NVME-1", Transport: "nvme"},
	},
}

func TestDiscoveredAndRegisterFromIt(t *testing.T) {
	state := t.TempDir()
	if r := np(t, state, "discovered"); r.code != 0 || !strings.Contains(r.stdout, "No discovered machines") {
		t.Errorf("discovered of an empty folder: %d %q %q", r.code, r.stdout, r.err)
	}
	if r := np(t, state, "register", "n0", "--mac", "52:54:00:00:00:09"); r.code != 0 {
		t.Fatalf("register: %d %s", r.code, r.err)
	}
	discover(t, state, discoveredMachine)
	r := np(t, state, "discovered", "-o", "json")
	var recs []discovery.Record
	if err := json.Unmarshal([]byte(r.stdout), &recs); err != nil || len(recs) != 1 {
		t.Fatalf("discovered -o json: %d %s %v", r.code, r.stdout, err)
	}
	if d := cmp.Diff(discoveredMachine, recs[0].Report); d != "" || recs[0].ID != "52:54:00:aa:00:01" {
		t.Errorf("discovered -o json (-want +got):\n%s", d)
	}
	if r := np(t, state, "discovered"); !strings.Contains(r.stdout, "nvme0n1:NVME-1:4.0GiB") || !strings.Contains(r.stdout, "DMI-SER-1") {
		t.Errorf("discovered:\n%s", r.stdout)
	}
	refused := map[string][]string{
		"a boot disk the record does not hold": {"register", "n1", "--from-discovered", "52:54:00:aa:00:02", "--boot-disk", "NOPE"},
		"a kernel name for the boot disk":      {"register", "n1", "--from-discovered", "DMI-SER-1", "--boot-disk", "nvme0n1"},
		"a machine not discovered":             {"register", "n1", "--from-discovered", "52:54:00:ff:ff:ff"},
		"pins given beside the record":         {"register", "n1", "--from-discovered", "DMI-SER-1", "--mac", "52:54:00:aa:00:01"},
	}
	for name, args := range refused {
		if r := np(t, state, args...); r.code != 2 || r.err == "" {
			t.Errorf("%s: exit %d %q, want 2", name, r.code, r.err)
		}
		if _, err := os.Stat(filepath.Join(state, "registrations", "n1.json")); err == nil {
			t.Fatalf("%s wrote a registration", name)
		}
	}
	if r := np(t, state, "register", "n1", "--from-discovered", "DMI-SER-1", "--boot-disk", "NVME-1"); r.code != 0 {
		t.Fatalf("register --from-discovered: %d %s", r.code, r.err)
	}
	b, err := os.ReadFile(filepath.Join(state, "registrations", "n1.json"))
	if err != nil {
		t.Fatal(err)
	}
	var reg struct {
		MACs     []string `json:"macs"`
		BootDisk string   `json:"boot_disk"`
		Serial   string   `json:"serial"`
		UUID     string   `json:"uuid"`
		// FromDiscovery: answered only to the machine as discovered.
		FromDiscovery bool `json:"from_discovery"`
	}
	json.Unmarshal(b, &reg)
	want := []string{"52:54:00:aa:00:01", "52:54:00:aa:00:02"}
	if d := cmp.Diff(want, reg.MACs); d != "" || reg.BootDisk != "NVME-1" || reg.Serial != "DMI-SER-1" || reg.UUID != discoveredMachine.DMI.UUID || !reg.FromDiscovery {
		t.Errorf("registration from the record: %s\n%s", d, b)
	}
}
