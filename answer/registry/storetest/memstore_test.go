package storetest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/plasmactl/plasma-node/answer"
	"github.com/plasmactl/plasma-node/answer/registry"
	"github.com/plasmactl/plasma-node/answer/registry/storetest"
	"github.com/plasmactl/plasma-node/pxe/secret/secretfile"
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

func samePin(a, b registry.Pin) bool { return a.Kind == b.Kind && strings.EqualFold(a.Value, b.Value) }

func (s *memStore) Register(_ context.Context, r registry.Registration, opts registry.RegisterOptions) (registry.RegisterResult, error) {
	var res registry.RegisterResult
	if err := registry.ValidateHostname(r.Name); err != nil {
		return res, err
	}
	r.MACs = slices.Clone(r.MACs)
	for i, m := range r.MACs {
		n, err := registry.NormalizeMAC(m)
		if err != nil {
			return res, err
		}
		r.MACs[i] = n
	}
	if r.Created.IsZero() {
		r.Created = time.Now().UTC().Truncate(time.Second)
	}
	r.Consumed = nil
	if err := r.Validate(); err != nil {
		return res, err
	}
	if data, err := json.Marshal(r); err != nil || len(data) > registry.MaxRegistrationSize {
		return res, fmt.Errorf("registration %s: %w: larger than %d bytes", r.Name, registry.ErrInvalidRegistration, registry.MaxRegistrationSize)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, o := range sorted(s.pending) {
		if o.Name == r.Name {
			continue
		}
		for _, p := range r.Pins() {
			if !slices.ContainsFunc(o.Pins(), func(q registry.Pin) bool { return samePin(p, q) }) {
				continue
			}
			if !opts.Replace {
				return registry.RegisterResult{}, &registry.PinTakenError{Name: r.Name, Pin: p, Holder: o.Name}
			}
			switch p.Kind {
			case registry.PinMAC:
				o.MACs = slices.DeleteFunc(o.MACs, func(m string) bool { return strings.EqualFold(m, p.Value) })
			case registry.PinSerial:
				o.Serial = ""
			case registry.PinUUID:
				o.UUID = ""
			}
			res.Moved = append(res.Moved, registry.PinMove{Pin: p, From: o.Name, Removed: !o.Pinned()})
		}
		if o.Pinned() {
			s.pending[o.Name] = o
		} else {
			delete(s.pending, o.Name)
		}
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

func (s *memStore) Rearm(_ context.Context, name string, force bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.consumed[name]
	switch {
	case !ok:
		return fmt.Errorf("rearm %s: %w", name, registry.ErrNotFound)
	case !r.Consumed.Undelivered && !force:
		return fmt.Errorf("rearm %s: %w", name, registry.ErrDelivered)
	}
	if _, ok := s.pending[name]; ok {
		return fmt.Errorf("rearm %s: %w: a pending registration of that name exists", name, registry.ErrInvalidRegistration)
	}
	r.Consumed = nil
	s.pending[name] = r
	delete(s.consumed, name)
	return nil
}

// TestBackendOverAnEmbeddersStore: the window's backend takes any
// Registrations, and boots what that store holds.
func TestBackendOverAnEmbeddersStore(t *testing.T) {
	ctx := context.Background()
	secrets, err := secretfile.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	store := newMemStore()
	b, err := registry.NewBackend(registry.BackendConfig{Store: store, Secrets: secrets, StateDir: t.TempDir()})
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
// (the README's "Bringing your own store" shows it).
func TestMemoryStoreConformance(t *testing.T) {
	storetest.Run(t, storetest.Harness{
		New: func(storetest.T) registry.Registrations { return newMemStore() },
		// Reopen, CrashConsume: a store in memory has no restart.
	})
}
