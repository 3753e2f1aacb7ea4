package regbackend_test

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/plasmactl/plasma-node/pxe/backend/regbackend"
	"github.com/plasmactl/plasma-node/pxe/registry"
	"github.com/plasmactl/plasma-node/pxe/store/folder"
)

// TestSecureBootFollowsTheRegistrations: a registration asking for the
// Secure Boot chain makes its MACs boot it, pending and once consumed
// (an installed machine with Secure Boot on gets grub's exit, not an
// iPXE it cannot run); others do not; the file keeps the setting.
func TestSecureBootFollowsTheRegistrations(t *testing.T) {
	state := t.TempDir()
	store, err := folder.OpenRegistrations(state, nil)
	if err != nil {
		t.Fatal(err)
	}
	bd, _ := registry.ParseBootDisk("any")
	created := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, r := range []registry.Registration{
		{Name: "sb", MACs: []string{"52:54:00:00:00:01"}, BootDisk: bd, SecureBoot: true, Created: created},
		{Name: "plain", MACs: []string{"52:54:00:00:00:02"}, BootDisk: bd, Created: created},
		{Name: "done", MACs: []string{"52:54:00:00:00:03"}, BootDisk: bd, SecureBoot: true, Created: created},
	} {
		if _, err := store.Put(context.Background(), r); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := store.Consume(context.Background(), "done", registry.ConsumeRecord{Time: created, MACs: []string{"52:54:00:00:00:03"}}); err != nil {
		t.Fatal(err)
	}
	sec, err := folder.OpenSecrets(t.TempDir() + "/secrets")
	if err != nil {
		t.Fatal(err)
	}
	b, err := regbackend.New(regbackend.Config{Store: store, Secrets: sec, StateDir: state, Events: folder.OpenEvents(folder.EventsPath(state), folder.EventsOptions{}), AllowRefresh: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	for mac, want := range map[string]bool{"52:54:00:00:00:01": true, "52:54:00:00:00:02": false, "52:54:00:00:00:03": true, "52:54:00:00:00:99": false} {
		hw, _ := net.ParseMAC(mac)
		if got := b.SecureBoot(hw); got != want {
			t.Errorf("SecureBoot(%s) = %v; want %v", mac, got, want)
		}
	}
	got, err := store.Get(context.Background(), "sb")
	if err != nil || !got.SecureBoot {
		t.Errorf("read back: %+v, %v; want SecureBoot", got, err)
	}
	hw, _ := net.ParseMAC("52:54:00:00:00:01")
	if n := testing.AllocsPerRun(100, func() { b.SecureBoot(hw) }); n != 0 && !regbackend.RaceEnabled {
		t.Errorf("SecureBoot allocates %v times per call; the offer path wants none", n)
	}
}
