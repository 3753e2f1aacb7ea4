package daemon

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

	pxestore "github.com/plasmactl/plasma-node/pxe/store"
	"github.com/plasmactl/plasma-node/pxe/store/folder"
	"github.com/plasmactl/plasma-node/pxe/window"

	"github.com/plasmactl/plasma-node/pxe"
)

// slowOpen is a log handler that holds the window's "provisioning window
// open" record for delay: a window slow to start, as on a loaded host or
// one whose store answers slowly.
type slowOpen struct{ delay time.Duration }

func (h slowOpen) Enabled(context.Context, slog.Level) bool { return true }

func (h slowOpen) Handle(_ context.Context, r slog.Record) error {
	if r.Message == "provisioning window open" {
		time.Sleep(h.delay)
	}
	return nil
}

func (h slowOpen) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h slowOpen) WithGroup(string) slog.Handler      { return h }

// TestAWindowSlowToStartStopsAtTheSitesDeadline: a host whose window
// takes 700 ms to start serving stops it at the site's deadline, not
// 700 ms later, and as a window that expired; no poll of the store
// stops it here (as while the store cannot be read).
func TestAWindowSlowToStartStopsAtTheSitesDeadline(t *testing.T) {
	state := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	log := slog.New(slog.DiscardHandler)
	cfg := pxe.Config{StateDir: state, HTTPAddr: "127.0.0.1:0", Logger: slog.New(slowOpen{delay: 700 * time.Millisecond})}
	w := newWindows(ctx, state, folder.OpenSiteWindow(state), window.Host{Name: "a"}, cfg, log)
	stores, err := pxestore.Open(t.Context(), state, pxestore.Options{SecretsDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	w.stores = stores
	now := time.Now().UTC()
	rec := window.Site{Opened: now, Deadline: now.Add(1500 * time.Millisecond)}
	w.mu.Lock()
	_, err = w.startLocked(rec)
	r := w.cur
	w.mu.Unlock()
	if err != nil {
		t.Fatalf("start: %v", err)
	}
	select {
	case <-r.done:
	case <-time.After(10 * time.Second):
		t.Fatal("the window still serves 10 s after its start")
	}
	if late := time.Since(rec.Deadline); late > 300*time.Millisecond {
		t.Errorf("the window stopped %s after the site's deadline, want at it", late.Round(time.Millisecond))
	}
	if !errors.Is(r.err, pxe.ErrWindowExpired) {
		t.Errorf("the window ended with %v, want %v", r.err, pxe.ErrWindowExpired)
	}
}
