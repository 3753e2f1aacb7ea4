package installtest_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/plasmactl/plasma-node/internal/storetest"
	"github.com/plasmactl/plasma-node/pxe/registry"
	"github.com/plasmactl/plasma-node/pxe/registry/installtest"
)

// memStore is a store of install reports in memory, with one fault when
// fault is set.
type memStore struct {
	mu    sync.Mutex
	fault string
	ins   []registry.Install
}

func (m *memStore) Put(_ context.Context, in registry.Install) error {
	if m.fault != "any name" {
		if err := registry.ValidateName(in.Name); err != nil {
			return err
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.fault == "drops host keys" {
		in.Report.HostKeys = nil
	}
	if i := slices.IndexFunc(m.ins, func(x registry.Install) bool { return x.Name == in.Name }); i >= 0 && m.fault != "appends" {
		m.ins[i] = in
		return nil
	}
	m.ins = append(m.ins, in)
	return nil
}

func (m *memStore) Get(_ context.Context, name string) (registry.Install, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, in := range m.ins {
		if in.Name == name {
			return in, nil
		}
	}
	return registry.Install{}, fmt.Errorf("%s: %w", name, registry.ErrNoInstall)
}

func (m *memStore) List(_ context.Context) ([]registry.Install, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := slices.Clone(m.ins)
	if m.fault != "unsorted" {
		slices.SortFunc(out, func(a, b registry.Install) int { return strings.Compare(a.Name, b.Name) })
	}
	return out, nil
}

func TestMemoryStoreConformance(t *testing.T) {
	installtest.Run(t, installtest.Harness{New: func(installtest.T) registry.Installs { return &memStore{} }})
}

// TestTheSuiteFailsABrokenStore feeds the suite a store with one fault at
// a time: each is found by the check named.
func TestTheSuiteFailsABrokenStore(t *testing.T) {
	storetest.RejectsFaults(t, installtest.Checks(), [][2]string{
		{"drops host keys", "PutGetList"},
		{"unsorted", "PutGetList"},
		{"appends", "PutReplaces"},
		{"any name", "InvalidNameRefused"},
		{"forgets on reopen", "Reopen"},
	}, func(_ *testing.T, fault string) installtest.Harness {
		h := installtest.Harness{New: func(installtest.T) registry.Installs { return &memStore{fault: fault} }}
		h.Reopen = func(_ installtest.T, s registry.Installs) registry.Installs {
			if fault == "forgets on reopen" {
				return &memStore{}
			}
			return s
		}
		return h
	})
}
