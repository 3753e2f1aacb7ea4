package folder

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/plasmactl/plasma-node/answer"
	"github.com/plasmactl/plasma-node/pxe/registry"
)

// TestRegisterRefusesATakenPin: a pin another pending registration holds
// is refused, naming the holder, for MACs, serials (without case) and
// UUIDs; before, the second registration was written and the machine got
// whichever came first by name.
func TestRegisterRefusesATakenPin(t *testing.T) {
	held := registry.Registration{Name: "a1", MACs: []string{"52:54:00:00:00:01"}, Serial: "SN-4711",
		UUID: "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0", BootDisk: answer.BootDisk{Kind: answer.BootDiskName, Value: "sda"}}
	tests := map[string]struct {
		r    registry.Registration
		want registry.Pin
	}{
		"the same MAC, another spelling": {registry.Registration{Name: "a2", MACs: []string{"52-54-00-00-00-01"}}, registry.Pin{Kind: registry.PinMAC, Value: "52:54:00:00:00:01"}},
		"the same serial in lower case":  {registry.Registration{Name: "a2", Serial: "sn-4711"}, registry.Pin{Kind: registry.PinSerial, Value: "sn-4711"}},
		"the same UUID":                  {registry.Registration{Name: "a2", UUID: "0F1E2D3C-4B5A-6978-8796-A5B4C3D2E1F0"}, registry.Pin{Kind: registry.PinUUID, Value: "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			g, err := OpenRegistrations(t.TempDir(), nil)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := g.Put(ctx, held); err != nil {
				t.Fatal(err)
			}
			tc.r.BootDisk = answer.BootDisk{Kind: answer.BootDiskName, Value: "sdb"}
			_, err = g.Register(ctx, tc.r, registry.RegisterOptions{})
			var taken *registry.PinTakenError
			if !errors.As(err, &taken) || !errors.Is(err, registry.ErrPinTaken) || !errors.Is(err, registry.ErrInvalidRegistration) {
				t.Fatalf("Register = %v, want a PinTakenError", err)
			}
			if diff := cmp.Diff(&registry.PinTakenError{Name: "a2", Pin: tc.want, Holder: "a1"}, taken); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
			if _, err := g.Get(ctx, "a2"); !errors.Is(err, registry.ErrNotFound) {
				t.Errorf("a2 was written: %v", err)
			}
			// Re-registering the holder itself is no collision.
			if _, err := g.Put(ctx, held); err != nil {
				t.Errorf("re-registering a1: %v", err)
			}
		})
	}
}

// TestRegisterReplaceMovesPins: Replace takes the pin from its holder; a
// holder left pinning nothing is removed, since an unpinned registration
// could answer any machine alone in the window.
func TestRegisterReplaceMovesPins(t *testing.T) {
	ctx := context.Background()
	g, err := OpenRegistrations(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	sda := answer.BootDisk{Kind: answer.BootDiskName, Value: "sda"}
	for _, r := range []registry.Registration{
		{Name: "a1", MACs: []string{"52:54:00:00:00:01", "52:54:00:00:00:02"}, BootDisk: sda},
		{Name: "b1", Serial: "SN-1", BootDisk: sda},
	} {
		if _, err := g.Put(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	res, err := g.Register(ctx, registry.Registration{Name: "a2", MACs: []string{"52:54:00:00:00:01"}, Serial: "sn-1", BootDisk: sda}, registry.RegisterOptions{Replace: true})
	if err != nil {
		t.Fatal(err)
	}
	want := []registry.PinMove{
		{Pin: registry.Pin{Kind: registry.PinMAC, Value: "52:54:00:00:00:01"}, From: "a1"},
		{Pin: registry.Pin{Kind: registry.PinSerial, Value: "sn-1"}, From: "b1", Removed: true},
	}
	if diff := cmp.Diff(want, res.Moved); diff != "" {
		t.Errorf("moved (-want +got):\n%s", diff)
	}
	a1, err := g.Get(ctx, "a1")
	if err != nil || !cmp.Equal(a1.MACs, []string{"52:54:00:00:00:02"}) {
		t.Errorf("a1 after the move = %v, %v; want only its other MAC", a1.MACs, err)
	}
	if _, err := g.Get(ctx, "b1"); !errors.Is(err, registry.ErrNotFound) {
		t.Errorf("b1, left pinning nothing, is still there: %v", err)
	}
	pending, _ := g.Pending(ctx)
	if c := registry.Collisions(pending); len(c) != 0 {
		t.Errorf("collisions after the move: %v", c)
	}
}

// TestCollisions: pins several pending registrations hold, as files
