package pxe

import (
	"context"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/plasmactl/plasma-node/pxe/backend/regbackend"
	"github.com/plasmactl/plasma-node/pxe/events"
	"github.com/plasmactl/plasma-node/pxe/registry"
	"github.com/plasmactl/plasma-node/pxe/secret"
	"github.com/plasmactl/plasma-node/pxe/store"
)

// givenStores are the stores a process opened, counting what the
// window asks of them; their event store keeps the kinds appended.
type givenStores struct {
	*store.Stores
	events *seenEvents

	mu    sync.Mutex
	asked map[string]int
}

func (g *givenStores) ask(what string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.asked[what]++
}

func (g *givenStores) Registrations() registry.Registrations {
	g.ask("registrations")
	return g.Stores.Registrations()
}

func (g *givenStores) Secrets(ctx context.Context) (secret.Store, error) {
	g.ask("secrets")
	return g.Stores.Secrets(ctx)
}

func (g *givenStores) Events() events.Store {
	g.ask("events")
	return g.events
}

func (g *givenStores) Installs() (registry.Installs, error) {
	g.ask("installs")
	return g.Stores.Installs()
}

type seenEvents struct {
	events.Store
	mu    sync.Mutex
	kinds []events.Kind
}

func (s *seenEvents) Append(ctx context.Context, evs ...events.Event) error {
	s.mu.Lock()
	for _, e := range evs {
		s.kinds = append(s.kinds, e.Kind)
	}
	s.mu.Unlock()
	return s.Store.Append(ctx, evs...)
}

// TestTheWindowTakesTheProcesssStores: a window whose backend is built
// over a process's stores (as the daemon builds its windows') answers
// from and records to them: the refusal of an answer request is
// appended to the event store given, and each store is asked for once,
// the window opening none of its own.
func TestTheWindowTakesTheProcesssStores(t *testing.T) {
	dir := t.TempDir()
	opened, err := store.Open(t.Context(), dir, store.Options{SecretsDir: filepath.Join(t.TempDir(), "secrets")})
	if err != nil {
		t.Fatal(err)
	}
	given := &givenStores{Stores: opened, events: &seenEvents{Store: opened.Events()}, asked: map[string]int{}}
	b, err := regbackend.Open(context.Background(), given, regbackend.Options{StateDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	srv, base, done := start(t, Config{StateDir: dir, Backend: b})
	defer func() { srv.cfg.Listener.Close(); <-done }()
	resp, err := http.Post(base+"/answer", "application/json", strings.NewReader("not json"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("answer: %d, want 400", resp.StatusCode)
	}
	given.events.mu.Lock()
	kinds := slices.Clone(given.events.kinds)
	given.events.mu.Unlock()
	if !slices.Contains(kinds, events.Refused) {
		t.Errorf("the given event store got %v, want the refusal", kinds)
	}
	given.mu.Lock()
	defer given.mu.Unlock()
	for _, what := range []string{"registrations", "secrets", "events", "installs"} {
		if given.asked[what] != 1 {
			t.Errorf("the window asked for the %s %d times, want once: %v", what, given.asked[what], given.asked)
		}
	}
}
