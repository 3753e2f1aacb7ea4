package registry

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/plasmactl/plasma-node/answer"
)

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
