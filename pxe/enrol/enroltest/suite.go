package enroltest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/plasmactl/plasma-node/internal/storetest"
	"github.com/plasmactl/plasma-node/pxe/discovery"
	"github.com/plasmactl/plasma-node/pxe/enrol"
)

// T is what a check needs of a test ([storetest.T]).
type T = storetest.T

// Harness gives the suite stores of the implementation under test.
type Harness struct {
	// New returns a new, empty store. Required.
	New func(t T) enrol.Store
	// Another opens s's state as another process or host does, both
	// used at once. Nil runs the races on one handle only.
	Another func(t T, s enrol.Store) enrol.Store
}

// Check is one conformance check.
type Check = storetest.Check[Harness]

// Checks returns the suite's checks.
func Checks() []Check {
	return []Check{
		{Name: "EmptyReadsEmpty", Run: emptyReadsEmpty},
		{Name: "UpdateKeeps", Run: updateKeeps},
		{Name: "FailedUpdateKeepsNothing", Run: failedUpdateKeepsNothing},
		{Name: "SharedByAnotherHandle", Run: sharedByAnotherHandle},
		{Name: "RacingUpdatesSerialise", Run: racingUpdatesSerialise},
		{Name: "RacingEnrolmentsGiveNoNameTwice", Run: racingEnrolmentsGiveNoNameTwice},
	}
}

// Run runs every check as a subtest of t.
func Run(t *testing.T, h Harness) { storetest.Run(t, h, Checks()) }

var ctx = context.Background()

// Rule returns a rule named name of priority prio matching machines of
// the MAC prefix 52:54:00, named by template.
func Rule(name string, prio int, template string) enrol.Rule {
	return enrol.Rule{Name: name, Priority: prio, Match: enrol.Match{MACPrefix: "52:54:00"}, Hostname: template}
}

// Machine returns an inbox entry of one NIC, 52:54:00:00:HI:LO for i,
// with the disk serial DISK-i.
func Machine(i int) discovery.Record {
	mac := fmt.Sprintf("52:54:00:00:%02x:%02x", i>>8&0xff, i&0xff)
	return discovery.Record{ID: mac, Report: discovery.Report{
		NICs:  []discovery.NIC{{MAC: mac}},
		Disks: []discovery.Disk{{Name: "vda", Serial: fmt.Sprintf("DISK-%d", i), SizeBytes: 32e9}},
	}}
}

func emptyReadsEmpty(t T, h Harness) {
	s := h.New(t)
	st, err := s.Read(ctx)
	storetest.NoError(t, err, "read a new store")
	if len(st.Rules) > 0 || len(st.Counters) > 0 || len(st.Held) > 0 {
		t.Errorf("a new store holds %+v, want nothing", st)
	}
}

func updateKeeps(t T, h Harness) {
	s := h.New(t)
	st, err := s.Update(ctx, func(st enrol.State) (enrol.State, error) { return st.Add(Rule("a", 1, "a-{n}"), false) })
	storetest.NoError(t, err, "add a rule")
	if len(st.Rules) != 1 {
		t.Fatalf("update returned %d rules, want 1", len(st.Rules))
	}
	got, err := s.Read(ctx)
	storetest.NoError(t, err, "read")
	if len(got.Rules) != 1 || got.Rules[0].Name != "a" || got.Rules[0].Hostname != "a-{n}" || got.Rules[0].Match.MACPrefix != "52:54:00" {
		t.Errorf("read %+v after adding rule a", got.Rules)
	}
}

func failedUpdateKeepsNothing(t T, h Harness) {
	s := h.New(t)
	_, err := s.Update(ctx, func(st enrol.State) (enrol.State, error) { return st.Add(Rule("a", 1, "a-{n}"), false) })
	storetest.NoError(t, err, "add a rule")
	boom := errors.New("boom")
	_, err = s.Update(ctx, func(st enrol.State) (enrol.State, error) {
		st, _ = st.Add(Rule("b", 2, "b-{n}"), false)
		return st, boom
	})
	if !errors.Is(err, boom) {
		t.Errorf("an update whose fn failed returned %v, want fn's error", err)
	}
	got, err := s.Read(ctx)
	storetest.NoError(t, err, "read")
	if len(got.Rules) != 1 {
		t.Errorf("a failed update kept %d rules, want the 1 before it", len(got.Rules))
	}
}

func sharedByAnotherHandle(t T, h Harness) {
	if h.Another == nil {
		return
	}
	s := h.New(t)
	_, err := s.Update(ctx, func(st enrol.State) (enrol.State, error) { return st.Add(Rule("a", 1, "a-{n}"), false) })
	storetest.NoError(t, err, "add a rule")
	got, err := h.Another(t, s).Read(ctx)
	storetest.NoError(t, err, "read from another handle")
	if len(got.Rules) != 1 {
		t.Errorf("another handle reads %d rules, want 1", len(got.Rules))
	}
}

// handles returns s and, when the harness opens another, that one.
func handles(t T, h Harness, s enrol.Store) []enrol.Store {
	if h.Another == nil {
		return []enrol.Store{s}
	}
	return []enrol.Store{s, h.Another(t, s)}
}

func racingUpdatesSerialise(t T, h Harness) {
	s := h.New(t)
	hs := handles(t, h, s)
	const n = 100
	seen := make([]int, n)
	errs := storetest.Race(n, func(i int) error {
		_, err := hs[i%len(hs)].Update(ctx, func(st enrol.State) (enrol.State, error) {
			c := st.Counters["x"]
			seen[i] = c.Next
			c.Next++
			if st.Counters == nil {
				st.Counters = map[string]enrol.Counter{}
			}
			st.Counters["x"] = c
			return st, nil
		})
		return err
	})
	for i, err := range errs {
		storetest.NoError(t, err, fmt.Sprintf("update %d", i))
	}
	got, err := s.Read(ctx)
	storetest.NoError(t, err, "read")
	if got.Counters["x"].Next != n {
		t.Errorf("%d racing increments left the counter at %d, want %d", n, got.Counters["x"].Next, n)
	}
	slices.Sort(seen)
	if c := slices.Compact(seen); len(c) != n {
		t.Errorf("%d racing updates saw %d distinct counters, want %d: two saw one state", n, len(c), n)
	}
}

func racingEnrolmentsGiveNoNameTwice(t T, h Harness) {
	s := h.New(t)
	_, err := s.Update(ctx, func(st enrol.State) (enrol.State, error) { return st.Add(Rule("pve", 1, "pve-{n:03}"), false) })
	storetest.NoError(t, err, "add a rule")
	hs := handles(t, h, s)
	const n = 100
	names := make([]string, n)
	now := time.Date(2026, 12, 6, 3, 0, 0, 0, time.UTC)
	errs := storetest.Race(n, func(i int) error {
		_, err := hs[i%len(hs)].Update(ctx, func(st enrol.State) (enrol.State, error) {
			d, out := enrol.Decide(st, Machine(i), enrol.Inputs{Now: now})
			names[i] = d.Name
			return out, d.Err
		})
		return err
	})
	for i, err := range errs {
		storetest.NoError(t, err, fmt.Sprintf("enrolment %d", i))
	}
	slices.Sort(names)
	if c := slices.Compact(slices.Clone(names)); len(c) != n {
		t.Errorf("%d racing enrolments gave %d distinct names, want %d", n, len(c), n)
	}
	if names[0] != "pve-001" || names[n-1] != "pve-100" {
		t.Errorf("names run %s to %s, want pve-001 to pve-100", names[0], names[n-1])
	}
	got, err := s.Read(ctx)
	storetest.NoError(t, err, "read")
	if c := got.Counters["pve"]; c.Enrolled != n || c.Next != n+1 {
		t.Errorf("counter %+v after %d enrolments, want enrolled %d and next %d", c, n, n, n+1)
	}
}
