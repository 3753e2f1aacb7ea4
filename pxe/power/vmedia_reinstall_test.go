package power_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/plasmactl/plasma-node/internal/fakeredfish"
	"github.com/plasmactl/plasma-node/pxe/bmc"
	"github.com/plasmactl/plasma-node/pxe/power"
	"github.com/plasmactl/plasma-node/pxe/registry"
)

// TestReinstallFromVirtualMedia: Reinstall of an installed virtual-media
// registration (what the API's reinstall, and so plasma-node's reinstall
// --wait, runs) re-arms it and boots a new medium: a new URL armed, the
// BMC's old medium of ours (a BMC that never ejected) replaced by it and
// fetched, and the machine, on, power-cycled into a one-time CD boot.
func TestReinstallFromVirtualMedia(t *testing.T) {
	ctx := t.Context()
	fake, req, m, h := vmLab(t, fakeredfish.MediaUnderManager)
	if _, err := power.Boot(ctx, req); err != nil {
		t.Fatal(err)
	}
	first := inserted(fake)["CD"]
	if _, err := fake.WaitMedium(ctx, "CD"); err != nil {
		t.Fatalf("the first medium: %v", err)
	}
	if _, err := req.Registrations.Consume(ctx, "n1", registry.ConsumeRecord{Time: time.Now(), ClientIP: "192.0.2.10"}); err != nil {
		t.Fatal(err)
	}
	res, err := power.Reinstall(ctx, req, false)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(&power.BootResult{Protocol: "redfish", Mode: bmc.BootUEFI, Was: bmc.PowerOn, Cycled: true, Device: power.DeviceCD}, res); diff != "" {
		t.Errorf("boot result (-want +got):\n%s", diff)
	}
	if _, err := req.Registrations.Get(ctx, "n1"); err != nil {
		t.Errorf("n1 is not pending again: %v", err)
	}
	again := inserted(fake)["CD"]
	if again == first || !m.Ours(again) {
		t.Errorf("the CD holds %q after the reinstall; want a new medium of ours, not %q", again, first)
	}
	if _, err := fake.WaitMedium(ctx, "CD"); err != nil {
		t.Errorf("the BMC could not fetch the new medium: %v", err)
	}
	if diff := cmp.Diff([]string{"arm n1", "arm n1"}, m.Calls()); diff != "" {
		t.Errorf("media calls (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"boot cd", "power 1", "power 0", "boot cd", "power 1"}, h.told()); diff != "" {
		t.Errorf("the machine was told (-want +got):\n%s", diff)
	}
}
