package regbackend_test

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/plasmactl/plasma-node/answer"
	"github.com/plasmactl/plasma-node/pxe/backend/regbackend"
	"github.com/plasmactl/plasma-node/pxe/events"
	"github.com/plasmactl/plasma-node/pxe/registry"
	"github.com/plasmactl/plasma-node/pxe/store/folder"
)

// The window follows the BMC actions through it.
var _ events.KindFollower = (*regbackend.Backend)(nil)

// TestBackendAllowReadsNothingOnThePacketPath: with lists older than
// AllowRefresh, Allow answers at once from the last ones and the re-read
// runs beside it; with fresh lists it allocates nothing.
func TestBackendAllowReadsNothingOnThePacketPath(t *testing.T) {
	for _, refresh := range []time.Duration{time.Nanosecond, time.Hour} {
		state := t.TempDir()
		reg, err := folder.OpenRegistrations(state, nil)
		if err != nil {
			t.Fatal(err)
		}
		sec, err := folder.OpenSecrets(t.TempDir() + "/secrets")
		if err != nil {
			t.Fatal(err)
		}
		b, err := regbackend.New(regbackend.Config{Store: reg, Secrets: sec, StateDir: state, Events: folder.OpenEvents(folder.EventsPath(state), folder.EventsOptions{}), AllowRefresh: refresh})
		if err != nil {
			t.Fatal(err)
		}
		defer b.Close()
		if _, err := reg.Put(context.Background(), registry.Registration{Name: "a", MACs: []string{"52:54:00:00:00:01"}, BootDisk: answer.BootDisk{Kind: answer.BootDiskName, Value: "sda"}}); err != nil {
			t.Fatal(err)
		}
		known, _ := net.ParseMAC("52:54:00:00:00:01")
		if !b.Allow(known) {
			t.Fatal("the pinned MAC is not admitted")
		}
		if refresh == time.Hour {
			if regbackend.RaceEnabled {
				continue // the race detector allocates on its own
			}
			if n := testing.AllocsPerRun(100, func() { b.Allow(known) }); n != 0 {
				t.Errorf("Allow allocates %v times a call, want 0", n)
			}
			continue
		}
		for regbackend.AllowBusy(b) { // the re-read the first call may have started
			time.Sleep(time.Millisecond)
		}
		if err := reg.Delete(context.Background(), "a"); err != nil {
			t.Fatal(err)
		}
		if !b.Allow(known) {
			t.Error("Allow read the registrations on the packet path: its first answer after the removal is already the new one")
		}
		deadline := time.Now().Add(2 * time.Second)
		for b.Allow(known) && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond)
		}
		if b.Allow(known) {
			t.Error("the removal was not seen by the background re-read within 2 s")
		}
	}
}

func TestBackendAllow(t *testing.T) {
	state := t.TempDir()
	reg, err := folder.OpenRegistrations(state, nil)
	if err != nil {
		t.Fatal(err)
	}
	sec, err := folder.OpenSecrets(t.TempDir() + "/secrets")
	if err != nil {
		t.Fatal(err)
	}
	b, err := regbackend.New(regbackend.Config{Store: reg, Secrets: sec, StateDir: state, Events: folder.OpenEvents(folder.EventsPath(state), folder.EventsOptions{}), AllowRefresh: time.Nanosecond})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	ctx := context.Background()
	known, _ := net.ParseMAC("52:54:00:00:00:01")
	stranger, _ := net.ParseMAC("52:54:00:00:00:99")
	put := func(name string, macs ...string) {
		t.Helper()
		if _, err := reg.Put(ctx, registry.Registration{Name: name, MACs: macs, BootDisk: answer.BootDisk{Kind: answer.BootDiskName, Value: "sda"}}); err != nil {
			t.Fatal(err)
		}
	}
	// Allow answers from lists re-read in the background: a change is
	// seen within AllowRefresh and one read.
	allow := func(mac net.HardwareAddr, want bool) bool {
		t.Helper()
		for deadline := time.Now().Add(2 * time.Second); b.Allow(mac) != want && time.Now().Before(deadline); {
			time.Sleep(time.Millisecond)
		}
		return b.Allow(mac)
	}
	if allow(known, false) {
		t.Error("with nothing registered a MAC was admitted")
	}
	put("a", "52:54:00:00:00:01")
	if k, s := allow(known, true), allow(stranger, false); !k || s {
		t.Errorf("pinned registration: known %v, stranger %v; want true, false", k, s)
	}
	put("b")
	if !allow(stranger, true) {
		t.Error("a registration that pins nothing should admit any PXE client")
	}
	posted, _ := net.ParseMAC("52:54:00:00:00:42")
	if _, err := reg.Consume(ctx, "b", registry.ConsumeRecord{MACs: []string{"52:54:00:00:00:42"}}); err != nil {
		t.Fatal(err)
	}
	if allow(stranger, false) {
		t.Error("a consumed registration still admits strangers")
	}
	if !allow(posted, true) {
		t.Error("the MAC a consumed registration's installer posted is not admitted (its second boot must reach the exit script)")
	}
	if _, err := reg.Consume(ctx, "a", registry.ConsumeRecord{}); err != nil {
		t.Fatal(err)
	}
	if !allow(known, true) {
		t.Error("the MAC a consumed registration pins is not admitted (its second boot must reach the exit script)")
	}
}

// hangingStore is a store whose reads wait while hang is set, as a
// database that stopped answering.
type hangingStore struct {
	registry.Registrations
	hang chan struct{} // closed: reads go on
	mu   chan struct{}
}

func (h *hangingStore) Scan(ctx context.Context) ([]registry.Registration, []registry.Broken, error) {
	<-h.gate()
	return h.Registrations.Scan(ctx)
}

func (h *hangingStore) gate() chan struct{} {
	h.mu <- struct{}{}
	defer func() { <-h.mu }()
	return h.hang
}

// TestAllowFailsClosedWhenTheStoreHangs: lists that cannot be read again
// for AllowMaxAge admit nobody (no offer), and the machine is admitted
// again once a read succeeds, with no restart.
func TestAllowFailsClosedWhenTheStoreHangs(t *testing.T) {
	state := t.TempDir()
	reg, err := folder.OpenRegistrations(state, nil)
	if err != nil {
		t.Fatal(err)
	}
	open := make(chan struct{})
	close(open)
	hs := &hangingStore{Registrations: reg, hang: open, mu: make(chan struct{}, 1)}
	sec, err := folder.OpenSecrets(t.TempDir() + "/secrets")
	if err != nil {
		t.Fatal(err)
	}
	b, err := regbackend.New(regbackend.Config{Store: hs, Secrets: sec, StateDir: state, Events: folder.OpenEvents(folder.EventsPath(state), folder.EventsOptions{}),
		AllowRefresh: 20 * time.Millisecond, AllowMaxAge: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if _, err := reg.Put(context.Background(), registry.Registration{Name: "a", MACs: []string{"52:54:00:00:00:01"}, BootDisk: answer.BootDisk{Kind: answer.BootDiskName, Value: "sda"}}); err != nil {
		t.Fatal(err)
	}
	known, _ := net.ParseMAC("52:54:00:00:00:01")
	if !b.Allow(known) {
		t.Fatal("the pinned MAC is not admitted")
	}
	stuck := make(chan struct{})
	hs.mu <- struct{}{}
	hs.hang = stuck
	<-hs.mu
	start := time.Now()
	for b.Allow(known) && time.Since(start) < 2*time.Second {
		time.Sleep(5 * time.Millisecond)
	}
	if d := time.Since(start); b.Allow(known) || d < 250*time.Millisecond || d > time.Second {
		t.Errorf("with the store hanging the MAC was admitted for %v, want until AllowMaxAge (300 ms), then not", d)
	}
	hs.mu <- struct{}{}
	hs.hang = open
	<-hs.mu
	close(stuck)
	deadline := time.Now().Add(2 * time.Second)
	for !b.Allow(known) && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if !b.Allow(known) {
		t.Error("the MAC is not admitted again within 2 s of the store answering")
	}
}
