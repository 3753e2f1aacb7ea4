package storetest_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/plasmactl/plasma-node/pxe/backend/regbackend"

	"github.com/plasmactl/plasma-node/answer"
	"github.com/plasmactl/plasma-node/pxe/registry"
	"github.com/plasmactl/plasma-node/pxe/registry/storetest"
	"github.com/plasmactl/plasma-node/pxe/store/folder"
)

// memStore is registrations kept in memory: what an embedder writing a
// store of its own (a database, a service) implements, shown here as
// the smallest store that passes the suite.
type memStore struct {
	mu       sync.Mutex
	pending  map[string]registry.Registration
	consumed map[string]registry.Registration
}

func newMemStore() *memStore {
	return &memStore{pending: map[string]registry.Registration{}, consumed: map[string]registry.Registration{}}
}

func sorted(m map[string]registry.Registration) []registry.Registration {
	out := make([]registry.Registration, 0, len(m))
	for _, r := range m {
		out = append(out, r)
	}
	slices.SortFunc(out, func(a, b registry.Registration) int { return strings.Compare(a.Name, b.Name) })
	return out
}

func (s *memStore) Scan(ctx context.Context) ([]registry.Registration, []registry.Broken, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return sorted(s.pending), nil, ctx.Err()
}

func (s *memStore) Consumed(ctx context.Context) ([]registry.Registration, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return sorted(s.consumed), ctx.Err()
}

func (s *memStore) Get(_ context.Context, name string) (registry.Registration, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.pending[name]
	if !ok {
		return r, fmt.Errorf("%w named %q", registry.ErrNotFound, name)
	}
	return r, nil
}

// Register starts as every store's does, with registry.Prepare, and
// takes pins with registry.TakePins under the store's lock.
func (s *memStore) Register(_ context.Context, r registry.Registration, opts registry.RegisterOptions) (registry.RegisterResult, error) {
	var res registry.RegisterResult
	r, err := registry.Prepare(r)
	if err != nil {
		return res, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	takes, err := registry.TakePins(r, sorted(s.pending), opts.Replace)
	if err != nil {
		return res, err
	}
	for _, t := range takes {
		if t.Left.Pinned() {
			s.pending[t.Left.Name] = t.Left
		} else {
			delete(s.pending, t.Left.Name)
		}
		res.Moved = append(res.Moved, t.Moved...)
	}
	if prev, ok := s.pending[r.Name]; ok {
		res.Previous = &prev
	}
	s.pending[r.Name] = r
	return res, nil
}

func (s *memStore) Delete(_ context.Context, name string) error {
	if err := registry.ValidateName(name); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.pending[name]; !ok {
		return fmt.Errorf("%w named %q", registry.ErrNotFound, name)
	}
	delete(s.pending, name)
	return nil
}

func (s *memStore) Consume(_ context.Context, name string, rec registry.ConsumeRecord) (registry.Registration, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.pending[name]
	if !ok {
		if _, done := s.consumed[name]; done {
			return r, fmt.Errorf("consume %s: %w", name, registry.ErrAlreadyConsumed)
		}
		return r, fmt.Errorf("consume %s: %w", name, registry.ErrNotFound)
	}
	if rec.Time.IsZero() {
		rec.Time = time.Now().UTC()
	}
	r.Consumed = &rec
	delete(s.pending, name)
	s.consumed[name] = r
	return r, nil
}

func (s *memStore) MarkDelivered(_ context.Context, name string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.consumed[name]
	if !ok {
		return fmt.Errorf("mark delivered %s: %w", name, registry.ErrNotFound)
	}
	rec := *r.Consumed
	rec.Undelivered = false
	r.Consumed = &rec
	s.consumed[name] = r
	return nil
}

func (s *memStore) Rearm(_ context.Context, name string, o registry.RearmOptions) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.consumed[name]
	switch {
	case !ok:
		return fmt.Errorf("rearm %s: %w", name, registry.ErrNotFound)
	case !r.Consumed.Undelivered && !o.Force:
		return fmt.Errorf("rearm %s: %w", name, registry.ErrDelivered)
	}
	if _, ok := s.pending[name]; ok {
		return fmt.Errorf("rearm %s: %w: a pending registration of that name exists", name, registry.ErrInvalidRegistration)
	}
	r.Consumed = nil
	r.WipeData = o.WipeData
	s.pending[name] = r
	delete(s.consumed, name)
	return nil
}

// TestBackendOverAnEmbeddersStore: the window's backend takes any
// Registrations, and boots what that store holds.
func TestBackendOverAnEmbeddersStore(t *testing.T) {
	ctx := context.Background()
	secrets, err := folder.OpenSecrets(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	store := newMemStore()
	b, err := regbackend.New(regbackend.Config{Store: store, Secrets: secrets, StateDir: t.TempDir(), Events: folder.OpenEvents(folder.EventsPath(t.TempDir()), folder.EventsOptions{})})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	r := registry.Registration{Name: "pve1", MACs: []string{"52:54:00:00:00:01"}, BootDisk: answer.BootDisk{Kind: answer.BootDiskName, Value: "sda"}}
	if _, err := store.Register(ctx, r, registry.RegisterOptions{}); err != nil {
		t.Fatal(err)
	}
	boot, err := b.Boot(ctx, "52:54:00:00:00:01")
	if err != nil || boot.Node != "pve1" {
		t.Errorf("Boot = %+v, %v; want pve1 from the embedder's store", boot, err)
	}
	if boot, err := b.Boot(ctx, "52:54:00:00:00:02"); err != nil || boot.Node != "" {
		t.Errorf("Boot of another MAC = %+v, %v; want none", boot, err)
	}
}

// TestMemoryStoreConformance is how an embedder's store runs the suite
// (docs/sdk.md's "Bringing your own store" shows it).
func TestMemoryStoreConformance(t *testing.T) {
	storetest.Run(t, storetest.Harness{
		New: func(storetest.T) registry.Registrations { return newMemStore() },
		// Reopen, CrashConsume: a store in memory has no restart.
	})
}
