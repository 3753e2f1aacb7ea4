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
	mu     sync.Mutex
	l      discovery.Limits
	recs   []discovery.Record
	faults faults
}

type faults struct {
	noBound    bool // keeps every machine
	appendOnly bool // a re-post adds an entry
	noExpiry   bool // keeps entries forever
}

func (m *memStore) Put(_ context.Context, r discovery.Report, now time.Time) (discovery.Record, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	l := m.l
	if m.faults.noBound {
		l.Max = 1 << 30
	}
	if m.faults.noExpiry {
		l.TTL = 1 << 62
	}
	if m.faults.appendOnly {
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
	if m.faults.noExpiry {
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

func harness(f faults) discoverytest.Harness {
	return discoverytest.Harness{New: func(_ discoverytest.T, l discovery.Limits) discovery.Store {
		return &memStore{l: l.WithDefaults(), faults: f}
	}}
}

func TestMemoryStoreConformance(t *testing.T) {
	discoverytest.Run(t, harness(faults{}))
}

// TestTheSuiteRejectsBrokenStores feeds each check a store breaking the
// rule it checks: the check must fail.
func TestTheSuiteRejectsBrokenStores(t *testing.T) {
	cases := map[string]struct {
		check  string
		faults faults
	}{
		"a store without a bound":         {"Bound", faults{noBound: true}},
		"a flood into a store unbounded":  {"FloodStaysWithinBound", faults{noBound: true}},
		"a store adding every re-post":    {"RepostUpdatesLastSeen", faults{appendOnly: true}},
		"a store merging no DMI serial":   {"SameSerialIsSameMachine", faults{appendOnly: true}},
		"a store whose entries never end": {"Expiry", faults{noExpiry: true}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			storetest.Rejects(t, harness(tc.faults), discoverytest.Checks(), tc.check)
		})
	}
}
