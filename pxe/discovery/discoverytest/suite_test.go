package discoverytest_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/plasmactl/plasma-node/internal/storetest"
	"github.com/plasmactl/plasma-node/pxe/discovery"
	"github.com/plasmactl/plasma-node/pxe/discovery/discoverytest"
)

// memStore is an embedder's store in memory; its faults break a rule.
type memStore struct {
	mu   sync.Mutex
	l    discovery.Limits
	recs []discovery.Record
	// fault is one of "no bound" (it keeps every machine), "append
	// only" (a re-post adds an entry), "no expiry" (it keeps entries
	// forever), or none.
	fault string
}

func (m *memStore) Put(_ context.Context, r discovery.Report, now time.Time) (discovery.Record, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	l := m.l
	if m.fault == "no bound" {
		l.Max = 1 << 30
	}
	if m.fault == "no expiry" {
		l.TTL = 1 << 62
	}
	if m.fault == "append only" {
		rec := discovery.Record{ID: r.NICs[0].MAC, Report: r, FirstSeen: now, LastSeen: now}
		m.recs = append(m.recs, rec)
		return rec, nil
	}
	out, rec, err := discovery.Put(m.recs, r, now, l)
	if err != nil {
		return rec, err
	}
	m.recs = out
	return rec, nil
}

func (m *memStore) List(_ context.Context, now time.Time) ([]discovery.Record, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	l := m.l
	if m.fault == "no expiry" {
		l.TTL = 1 << 62
	}
	out := discovery.Live(m.recs, now, l)
	for i := range out {
		out[i] = out[i].Clone()
	}
	return out, nil
}

func (m *memStore) Remove(_ context.Context, id string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for i, r := range m.recs {
		if r.ID == id {
			m.recs = append(m.recs[:i:i], m.recs[i+1:]...)
			return nil
		}
	}
	return fmt.Errorf("%w: %s", discovery.ErrNotFound, id)
}

func harness(fault string) discoverytest.Harness {
	return discoverytest.Harness{New: func(_ discoverytest.T, l discovery.Limits) discovery.Store {
		return &memStore{l: l.WithDefaults(), fault: fault}
	}}
}

func TestMemoryStoreConformance(t *testing.T) {
	discoverytest.Run(t, harness(""))
}

// TestTheSuiteRejectsBrokenStores feeds each check a store breaking the
// rule it checks: the check must fail.
func TestTheSuiteRejectsBrokenStores(t *testing.T) {
	storetest.RejectsFaults(t, discoverytest.Checks(), [][2]string{
		{"no bound", "Bound"},
		{"no bound", "FloodStaysWithinBound"},
		{"append only", "RepostUpdatesLastSeen"},
		{"append only", "SameSerialIsSameMachine"},
		{"no expiry", "Expiry"},
	}, func(_ *testing.T, fault string) discoverytest.Harness { return harness(fault) })
}
