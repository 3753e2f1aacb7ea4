package eventstest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/plasmactl/plasma-node/internal/storetest"
	"github.com/plasmactl/plasma-node/pxe/events"
	"github.com/plasmactl/plasma-node/pxe/events/eventstest"
)

// memStore is an event store in memory, bounded by its events' JSON
// size: a correct one, and broken ones by its knobs.
type memStore struct {
	max int64

	// loseEvery > 0 drops every loseEvery-th append without an error.
	loseEvery int
	// resumeAt makes a read after an id start at that id's event
	// instead of after it.
	resumeAt bool

	mu      sync.Mutex
	recs    []events.Record
	sizes   []int64
	size    int64
	seq     int
	appends int
	woken   chan struct{}
}

func newMem(max int64) *memStore {
	if max <= 0 {
		max = 8 << 20
	}
	return &memStore{max: max, woken: make(chan struct{})}
}

func (m *memStore) Append(_ context.Context, evs ...events.Event) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, e := range evs {
		m.appends++
		if m.loseEvery > 0 && m.appends%m.loseEvery == 0 {
			continue
		}
		if e.Time.IsZero() {
			e.Time = time.Now().UTC()
		}
		b, _ := json.Marshal(e)
		m.seq++
		m.recs = append(m.recs, events.Record{ID: "m" + strconv.Itoa(m.seq), Event: e})
		m.sizes = append(m.sizes, int64(len(b)))
		m.size += int64(len(b))
		for m.size > m.max && len(m.recs) > 1 {
			m.size -= m.sizes[0]
			m.recs, m.sizes = m.recs[1:], m.sizes[1:]
		}
	}
	close(m.woken)
	m.woken = make(chan struct{})
	return nil
}

// after returns the records after id, and a channel closed at the next
// append.
func (m *memStore) after(id string) ([]events.Record, <-chan struct{}, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	switch id {
	case "":
		return slices.Clone(m.recs), m.woken, nil
	case events.FromNow:
		return nil, m.woken, nil
	}
	n, err := strconv.Atoi(strings.TrimPrefix(id, "m"))
	if !strings.HasPrefix(id, "m") || err != nil || n < 0 {
		return nil, nil, fmt.Errorf("%w: %q", events.ErrBadID, id)
	}
	if m.resumeAt {
		n--
	}
	i, _ := slices.BinarySearchFunc(m.recs, n+1, func(r events.Record, n int) int {
		k, _ := strconv.Atoi(r.ID[1:])
		return k - n
	})
	return slices.Clone(m.recs[i:]), m.woken, nil
}

func (m *memStore) Read(_ context.Context, after string, max int) ([]events.Record, error) {
	recs, _, err := m.after(after)
	if max > 0 && len(recs) > max {
		recs = recs[:max]
	}
	return recs, err
}

func (m *memStore) Follow(ctx context.Context, after string, fn func(events.Record) error) error {
	recs, woken, err := m.after(after)
	if err != nil {
		return err
	}
	if after == events.FromNow {
		m.mu.Lock()
		after = "m" + strconv.Itoa(m.seq)
		m.mu.Unlock()
	}
	for {
		for _, r := range recs {
			if err := fn(r); err != nil {
				return err
			}
			after = r.ID
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-woken:
		}
		if recs, woken, err = m.after(after); err != nil {
			return err
		}
	}
}

// TestAMemoryStorePasses: a correct store passes every case, through
// the fake T as through the testing package: the suite fails a store for
// what it does, not for how it is run.
func TestAMemoryStorePasses(t *testing.T) {
	h := eventstest.Harness{New: func(_ eventstest.T, max int64) events.Store { return newMem(max) }}
	eventstest.Run(t, h)
	for _, c := range eventstest.Checks() {
		if failures := storetest.Failures(h, c); len(failures) > 0 {
			t.Errorf("%s: failed on a fake T: %v", c.Name, failures)
		}
	}
}

// TestTheSuiteFailsBrokenStores feeds the suite stores that lose an
// event, resume from the wrong id, or keep no size bound, and sees the
// cases that check each fail.
func TestTheSuiteFailsBrokenStores(t *testing.T) {
	const loses, resumes, unbounded = "loses every 97th event", "resumes at the id's own event", "keeps no size bound"
	storetest.RejectsFaults(t, eventstest.Checks(), [][2]string{
		{loses, "concurrent appends keep one order and resume from any id"},
		{loses, "the size bound holds and keeps the newest events"},
		{loses, "a rotation loses no event"},
		{loses, "two writers order and rotate without losing an event"},
		{resumes, "a read resumes after an id"},
		{resumes, "concurrent appends keep one order and resume from any id"},
		{resumes, "a rotation loses no event"},
		{resumes, "two writers order and rotate without losing an event"},
		{unbounded, "the size bound holds and keeps the newest events"},
	}, func(_ *testing.T, fault string) eventstest.Harness {
		return eventstest.Harness{Wait: 300 * time.Millisecond, New: func(_ eventstest.T, max int64) events.Store {
			m := newMem(max)
			switch fault {
			case loses:
				m.loseEvery = 97
			case resumes:
				m.resumeAt = true
			case unbounded:
				m.max = 1 << 40
			}
			return m
		}}
	})
}

// leakyKinds is a store whose own kind filter lets every event through.
type leakyKinds struct{ *memStore }

func (l leakyKinds) FollowKinds(ctx context.Context, after string, _ []events.Kind, fn func(events.Record) error) error {
	return l.Follow(ctx, after, fn)
}

// TestTheSuiteFailsALeakyKindFilter: a store's own filter of kinds is
// checked too, not only the one FollowKinds falls back to.
func TestTheSuiteFailsALeakyKindFilter(t *testing.T) {
	h := eventstest.Harness{Wait: 300 * time.Millisecond, New: func(_ eventstest.T, max int64) events.Store { return leakyKinds{newMem(max)} }}
	for _, c := range eventstest.Checks() {
		f := storetest.Failures(h, c)
		if c.Name == "a follower of some kinds gets those and no other" && len(f) == 0 {
			t.Errorf("case %q passed a store whose kind filter lets every event through", c.Name)
		}
		if c.Name != "a follower of some kinds gets those and no other" && len(f) > 0 {
			t.Errorf("case %q failed: %v", c.Name, f)
		}
	}
}
