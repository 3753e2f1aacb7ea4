package enroltest_test

import (
	"context"
	"encoding/json"
	"runtime"
	"sync"
	"testing"

	"github.com/plasmactl/plasma-node/internal/storetest"
	"github.com/plasmactl/plasma-node/pxe/enrol"
	"github.com/plasmactl/plasma-node/pxe/enrol/enroltest"
)

// memStore is an embedder's store in memory; its faults break a rule.
type memStore struct {
	mu   sync.Mutex
	data []byte
	// fault is "no lock" (an update reads, yields and writes without
	// holding the lock), "keeps on error" (a failed fn's state is kept),
	// "forgets" (another handle sees an empty store), or none.
	fault string
}

func (m *memStore) Read(context.Context) (enrol.State, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var st enrol.State
	if m.data != nil {
		err := json.Unmarshal(m.data, &st)
		return st, err
	}
	return st, nil
}

func (m *memStore) Update(ctx context.Context, fn func(enrol.State) (enrol.State, error)) (enrol.State, error) {
	if m.fault != "no lock" {
		m.mu.Lock()
		defer m.mu.Unlock()
	}
	var st enrol.State
	if m.data != nil {
		if err := json.Unmarshal(m.data, &st); err != nil {
			return st, err
		}
	}
	if m.fault == "no lock" {
		runtime.Gosched()
	}
	out, err := fn(st)
	if err != nil && m.fault != "keeps on error" {
		return enrol.State{}, err
	}
	data, _ := json.Marshal(out)
	m.data = data
	return out, err
}

func harness(fault string) enroltest.Harness {
	return enroltest.Harness{
		New: func(enroltest.T) enrol.Store { return &memStore{fault: fault} },
		Another: func(_ enroltest.T, s enrol.Store) enrol.Store {
			if fault == "forgets" {
				return &memStore{}
			}
			return s
		},
	}
}

func TestMemStorePasses(t *testing.T) { enroltest.Run(t, harness("")) }

// TestSuiteRejectsBrokenStores: each fault is found by the check named.
func TestSuiteRejectsBrokenStores(t *testing.T) {
	storetest.RejectsFaults(t, enroltest.Checks(), [][2]string{
		{"no lock", "RacingUpdatesSerialise"},
		{"no lock", "RacingEnrolmentsGiveNoNameTwice"},
		{"keeps on error", "FailedUpdateKeepsNothing"},
		{"forgets", "SharedByAnotherHandle"},
	}, func(_ *testing.T, fault string) enroltest.Harness { return harness(fault) })
}
