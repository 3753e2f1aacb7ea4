package discoverytest_test

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

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

type fakeT struct {
	mu     sync.Mutex
	errors []string
}

func (f *fakeT) Helper()             {}
func (f *fakeT) Logf(string, ...any) {}
func (f *fakeT) Errorf(format string, args ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.errors = append(f.errors, fmt.Sprintf(format, args...))
}
func (f *fakeT) Fatalf(format string, args ...any) {
	f.Errorf(format, args...)
	runtime.Goexit()
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
	checks := map[string]discoverytest.Check{}
	for _, c := range discoverytest.Checks() {
		checks[c.Name] = c
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c, ok := checks[tc.check]
			if !ok {
				t.Fatalf("the suite has no check %s", tc.check)
			}
			ft := &fakeT{}
			discoverytest.RunCheck(ft, harness(tc.faults), c)
			if len(ft.errors) == 0 {
				t.Errorf("%s passed a broken store", tc.check)
			}
		})
	}
}
