package registry

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/plasmactl/plasma-node/answer"
)

// TestRegisterRefusesATakenPin: a pin another pending registration holds
// is refused, naming the holder, for MACs, serials (without case) and
// UUIDs; before, the second registration was written and the machine got
// whichever came first by name.
func TestRegisterRefusesATakenPin(t *testing.T) {
	held := Registration{Name: "a1", MACs: []string{"52:54:00:00:00:01"}, Serial: "SN-4711",
		UUID: "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0", BootDisk: answer.BootDisk{Kind: answer.BootDiskName, Value: "sda"}}
	tests := map[string]struct {
		r    Registration
		want Pin
	}{
		"the same MAC, another spelling": {Registration{Name: "a2", MACs: []string{"52-54-00-00-00-01"}}, Pin{PinMAC, "52:54:00:00:00:01"}},
		"the same serial in lower case":  {Registration{Name: "a2", Serial: "sn-4711"}, Pin{PinSerial, "sn-4711"}},
		"the same UUID":                  {Registration{Name: "a2", UUID: "0F1E2D3C-4B5A-6978-8796-A5B4C3D2E1F0"}, Pin{PinUUID, "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			g, err := Open(t.TempDir(), nil)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := g.Put(ctx, held); err != nil {
				t.Fatal(err)
			}
			tc.r.BootDisk = answer.BootDisk{Kind: answer.BootDiskName, Value: "sdb"}
			_, err = g.Register(ctx, tc.r, RegisterOptions{})
			var taken *PinTakenError
			if !errors.As(err, &taken) || !errors.Is(err, ErrPinTaken) || !errors.Is(err, ErrInvalidRegistration) {
				t.Fatalf("Register = %v, want a PinTakenError", err)
			}
			if diff := cmp.Diff(&PinTakenError{Name: "a2", Pin: tc.want, Holder: "a1"}, taken); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
			if _, err := g.Get(ctx, "a2"); !errors.Is(err, ErrNotFound) {
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
	g, err := Open(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	sda := answer.BootDisk{Kind: answer.BootDiskName, Value: "sda"}
	for _, r := range []Registration{
		{Name: "a1", MACs: []string{"52:54:00:00:00:01", "52:54:00:00:00:02"}, BootDisk: sda},
		{Name: "b1", Serial: "SN-1", BootDisk: sda},
	} {
		if _, err := g.Put(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	res, err := g.Register(ctx, Registration{Name: "a2", MACs: []string{"52:54:00:00:00:01"}, Serial: "sn-1", BootDisk: sda}, RegisterOptions{Replace: true})
	if err != nil {
		t.Fatal(err)
	}
	want := []PinMove{
		{Pin: Pin{PinMAC, "52:54:00:00:00:01"}, From: "a1"},
		{Pin: Pin{PinSerial, "sn-1"}, From: "b1", Removed: true},
	}
	if diff := cmp.Diff(want, res.Moved); diff != "" {
		t.Errorf("moved (-want +got):\n%s", diff)
	}
	a1, err := g.Get(ctx, "a1")
	if err != nil || !cmp.Equal(a1.MACs, []string{"52:54:00:00:00:02"}) {
		t.Errorf("a1 after the move = %v, %v; want only its other MAC", a1.MACs, err)
	}
	if _, err := g.Get(ctx, "b1"); !errors.Is(err, ErrNotFound) {
		t.Errorf("b1, left pinning nothing, is still there: %v", err)
	}
	pending, _ := g.Pending(ctx)
	if c := Collisions(pending); len(c) != 0 {
		t.Errorf("collisions after the move: %v", c)
	}
}

// TestCollisions: pins several pending registrations hold, as files
// written by hand can have them.
func TestCollisions(t *testing.T) {
	regs := []Registration{
		{Name: "a1", MACs: []string{"52:54:00:00:00:01"}, Serial: "SN-1"},
		{Name: "a2", MACs: []string{"52:54:00:00:00:01", "52:54:00:00:00:02"}},
		{Name: "a3", Serial: "sn-1", UUID: "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0"},
		{Name: "a4", MACs: []string{"52:54:00:00:00:01"}},
	}
	want := []Collision{
		{Pin: Pin{PinMAC, "52:54:00:00:00:01"}, Names: []string{"a1", "a2", "a4"}},
		{Pin: Pin{PinSerial, "SN-1"}, Names: []string{"a1", "a3"}},
	}
	if diff := cmp.Diff(want, Collisions(regs)); diff != "" {
		t.Errorf("Collisions (-want +got):\n%s", diff)
	}
	if c := Collisions(regs[1:2]); c != nil {
		t.Errorf("one registration collides with itself: %v", c)
	}
}

// TestChanges: what a re-registration changes, for the warning.
func TestChanges(t *testing.T) {
	old := Registration{Name: "n1", MACs: []string{"52:54:00:00:00:01"}, BootDisk: answer.BootDisk{Kind: answer.BootDiskSerial, Value: "25414A800205"}}
	dp, err := ParsePoolSpec("tank=single:50026B73842AD86F")
	if err != nil {
		t.Fatal(err)
	}
	new := Registration{Name: "n1", MACs: []string{"52:54:00:00:00:02"}, BootDisk: answer.BootDisk{Kind: answer.BootDiskAsk}, Pools: []DataPool{dp}}
	want := []Change{
		{"macs", "52:54:00:00:00:01", "52:54:00:00:00:02"},
		{"boot disk", old.BootDisk.String(), new.BootDisk.String()},
		{"pools", "-", dp.String()},
	}
	if diff := cmp.Diff(want, Changes(old, new)); diff != "" {
		t.Errorf("Changes (-want +got):\n%s", diff)
	}
	if c := Changes(old, old); c != nil {
		t.Errorf("no change reported as %v", c)
	}
}

// TestCollidingFilesRefuseTheMachine: two hand-written registrations
// pinning the same MAC make the machine's request a 409 naming both, and
// consume neither; status shows the shared pin on both.
func TestCollidingFilesRefuseTheMachine(t *testing.T) {
	e := newHandlerEnv(t)
	dir := filepath.Join(e.state, "registrations")
	write(t, filepath.Join(dir, "a1.json"), `{"name": "a1", "macs": ["52:54:00:00:00:01"], "boot_disk": "sda"}`)
	write(t, filepath.Join(dir, "a2.json"), `{"name": "a2", "macs": ["52:54:00:00:00:01"], "boot_disk": "sdb"}`)

	status, msg, _ := e.post(t, "", "application/json", body("9.2", "52:54:00:00:00:01"))
	if status != 409 || !strings.Contains(msg, "a1 and a2") || !strings.Contains(msg, "mac 52:54:00:00:00:01 is pinned by a1 and a2") {
		t.Errorf("answer = %d %q, want 409 naming a1 and a2", status, msg)
	}
	if d, err := e.b.Boot(context.Background(), "52:54:00:00:00:01"); err != nil || d.Node != "" || !strings.Contains(d.Reason, "a1 and a2") {
		t.Errorf("Boot = %+v, %v; want an exit naming a1 and a2", d, err)
	}
	if pending, _ := e.reg.Pending(context.Background()); len(pending) != 2 {
		t.Errorf("pending after the refusal: %d, want both", len(pending))
	}
	st, err := Status(context.Background(), e.reg, e.state)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range st {
		if !strings.Contains(n.Problem, "mac 52:54:00:00:00:01 is pinned by a1 and a2") {
			t.Errorf("status of %s: problem %q", n.Name, n.Problem)
		}
	}
}
