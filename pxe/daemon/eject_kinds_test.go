package daemon

import (
	"context"
	"log/slog"
	"slices"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/plasmactl/plasma-node/pxe/events"
	"github.com/plasmactl/plasma-node/pxe/power/powertest"
	"github.com/plasmactl/plasma-node/pxe/store"
)

// kindsSpy is an event store that says how the window's ejector follows
// it: a window's own DHCP offers, TFTP reads and boot steps are most of
// its log, and decoding each of them again cost proxy-DHCP a third of
// its offers per second (bench/run.sh dhcp, 9a6f3e5 against ddd5415).
type kindsSpy struct {
	events.Store
	mu     sync.Mutex
	follow int
	kinds  [][]events.Kind
	begun  chan struct{}
}

func (s *kindsSpy) Follow(ctx context.Context, after string, fn func(events.Record) error) error {
	s.mu.Lock()
	s.follow++
	s.mu.Unlock()
	close(s.begun)
	<-ctx.Done()
	return ctx.Err()
}

func (s *kindsSpy) FollowKinds(ctx context.Context, after string, kinds []events.Kind, fn func(events.Record) error) error {
	s.mu.Lock()
	s.kinds = append(s.kinds, slices.Clone(kinds))
	s.mu.Unlock()
	close(s.begun)
	<-ctx.Done()
	return ctx.Err()
}

// TestEjectFollowsOnlyInstalledEvents: the ejector asks the event store
// for the installed events only, through the store's own kind filter,
// never for every event.
func TestEjectFollowsOnlyInstalledEvents(t *testing.T) {
	ctx := t.Context()
	stores, err := store.Open(ctx, t.TempDir(), store.Options{SecretsDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	spy := &kindsSpy{Store: stores.Events(), begun: make(chan struct{})}
	b := &bmcs{stores: stores, events: spy, media: powertest.NewMedia(t), log: slog.New(slog.DiscardHandler)}
	stop := ejectWhileOpen(ctx, b)
	<-spy.begun
	stop()
	spy.mu.Lock()
	defer spy.mu.Unlock()
	if spy.follow != 0 {
		t.Errorf("the ejector followed every event (%d Follow calls); want the installed ones only", spy.follow)
	}
	if diff := cmp.Diff([][]events.Kind{{events.Installed}}, spy.kinds); diff != "" {
		t.Errorf("kinds followed (-want +got):\n%s", diff)
	}
}
