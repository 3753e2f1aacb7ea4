package pxe

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/plasmactl/plasma-node/pxe/discovery"
	"github.com/plasmactl/plasma-node/pxe/store"
	"github.com/plasmactl/plasma-node/pxe/store/folder"
)

// TestPlanTakesTheOldestDiscoveredMachines: with the hardware
// "discovered", new servers take the inbox's machines oldest first, each
// pinned by its MACs and DMI serial, its one serial disk the boot disk;
// a plan needing more than the inbox holds is refused.
func TestPlanTakesTheOldestDiscoveredMachines(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st, err := store.Open(t.Context(), dir, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	in, err := st.Discovered()
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	for i, age := range []time.Duration{2 * time.Minute, 3 * time.Minute, time.Minute} {
		r := discovery.Report{NICs: []discovery.NIC{{MAC: fmt.Sprintf("52:54:00:dd:00:%02x", i)}}, DMI: discovery.DMI{Serial: fmt.Sprint("SER-", i)},
			Disks: []discovery.Disk{{Name: "nvme0n1", SizeBytes: 1 << 30, Serial: fmt.Sprint("NV-", i)}, {Name: "vda", SizeBytes: 1 << 30}}}
		if _, err := in.Put(ctx, r, now.Add(-age)); err != nil {
			t.Fatal(err)
		}
	}
	inp := input(t, dir, 2)
	inp.HardwareFile = HardwareDiscovered
	p, err := (&Provider{}).Plan(ctx, inp)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Apply(ctx); err != nil {
		t.Fatal(err)
	}
	g, _ := folder.OpenRegistrations(dir, nil)
	var got []string
	for _, name := range []string{"metal-control-001", "metal-control-002"} {
		r, err := g.Get(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, strings.Join(r.MACs, ",")+" "+r.Serial+" "+r.BootDisk.String())
	}
	want := []string{"52:54:00:dd:00:01 SER-1 NV-1", "52:54:00:dd:00:00 SER-0 NV-0"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("registrations from the inbox (-want +got):\n%s", d)
	}
	more := input(t, dir, 4)
	more.HardwareFile = HardwareDiscovered
	if _, err := (&Provider{}).Plan(ctx, more); !errors.Is(err, ErrNoHardware) || !strings.Contains(err.Error(), "discovery inbox") {
		t.Errorf("a plan needing more than the inbox holds: %v, want ErrNoHardware naming the inbox", err)
	}
}
