package discoverytest

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/plasmactl/plasma-node/internal/storetest"
	"github.com/plasmactl/plasma-node/pxe/discovery"
)

// T is what a check needs of a test ([storetest.T]).
type T = storetest.T

// Harness gives the suite stores of the implementation under test.
type Harness struct {
	// New returns a new, empty store bounded by l. Required.
	New func(t T, l discovery.Limits) discovery.Store
	// Reopen opens s's state again, as a restarted process would. Nil
	// skips the check that entries persist.
	Reopen func(t T, s discovery.Store) discovery.Store
}

// Check is one conformance check.
type Check = storetest.Check[Harness]

// Checks returns the suite's checks.
func Checks() []Check {
	return []Check{
		{Name: "PutListRemove", Run: putListRemove},
		{Name: "RepostUpdatesLastSeen", Run: repostUpdatesLastSeen},
		{Name: "SameSerialIsSameMachine", Run: sameSerialIsSameMachine},
		{Name: "OldestFirst", Run: oldestFirst},
		{Name: "Expiry", Run: expiry},
		{Name: "Bound", Run: bound},
		{Name: "FloodStaysWithinBound", Run: floodStaysWithinBound},
		{Name: "Persists", Run: persists},
	}
}

// Run runs every check as a subtest of t.
func Run(t *testing.T, h Harness) { storetest.Run(t, h, Checks()) }

// t0 is the suite's clock's start.
var t0 = time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)

// Report returns a report of one machine with the NIC MAC mac, the DMI
// serial serial and one disk with the serial disk.
func Report(mac, serial, disk string) discovery.Report {
	return discovery.Report{
		NICs:        []discovery.NIC{{MAC: mac, Link: "up", SpeedMbps: 1000, Driver: "virtio_net"}},
		DMI:         discovery.DMI{Vendor: "QEMU", Product: "Standard PC", Serial: serial},
		CPU:         discovery.CPU{Model: "QEMU Virtual CPU", Threads: 2},
		MemoryBytes: 2 << 30,
		Disks:       []discovery.Disk{{Name: "vda", SizeBytes: 8 << 30, Serial: disk, Transport: "virtio"}},
	}
}

func mac(i int) string { return fmt.Sprintf("52:54:00:00:%02x:%02x", i>>8&0xff, i&0xff) }

func put(t T, s discovery.Store, r discovery.Report, now time.Time) discovery.Record {
	t.Helper()
	rec, err := s.Put(context.Background(), r, now)
	storetest.NoError(t, err, "Put "+r.NICs[0].MAC)
	return rec
}

func list(t T, s discovery.Store, now time.Time) []discovery.Record {
	t.Helper()
	recs, err := s.List(context.Background(), now)
	storetest.NoError(t, err, "List")
	return recs
}

func ids(recs []discovery.Record) []string {
	out := make([]string, len(recs))
	for i, r := range recs {
		out[i] = r.ID
	}
	return out
}

func sameIDs(t T, what string, got []discovery.Record, want ...string) {
	t.Helper()
	g := ids(got)
	if fmt.Sprint(g) != fmt.Sprint(want) {
		t.Errorf("%s: entries %v, want %v", what, g, want)
	}
}

func putListRemove(t T, h Harness) {
	ctx := context.Background()
	s := h.New(t, discovery.Limits{})
	rec := put(t, s, Report(mac(1), "S1", "D1"), t0)
	if rec.ID != mac(1) || !rec.FirstSeen.Equal(t0) || !rec.LastSeen.Equal(t0) {
		t.Errorf("Put returned %s first %v last %v, want %s seen at %v", rec.ID, rec.FirstSeen, rec.LastSeen, mac(1), t0)
	}
	rec.Disks[0].Serial = "changed by the caller"
	got := list(t, s, t0)
	sameIDs(t, "after a Put", got, mac(1))
	if len(got) == 1 && (got[0].Disks[0].Serial != "D1" || got[0].DMI.Serial != "S1" || got[0].MemoryBytes != 2<<30) {
		t.Errorf("List gives %+v, not the report put", got[0])
	}
	storetest.NoError(t, s.Remove(ctx, mac(1)), "Remove")
	sameIDs(t, "after Remove", list(t, s, t0))
	if err := s.Remove(ctx, mac(1)); !errors.Is(err, discovery.ErrNotFound) {
		t.Errorf("Remove of a removed entry: %v, want ErrNotFound", err)
	}
}

func repostUpdatesLastSeen(t T, h Harness) {
	s := h.New(t, discovery.Limits{})
	put(t, s, Report(mac(2), "S2", "D1"), t0)
	later := t0.Add(time.Minute)
	r := Report(mac(2), "S2", "D2")
	r.NICs = append(r.NICs, discovery.NIC{MAC: mac(1)})
	rec := put(t, s, r, later)
	got := list(t, s, later)
	sameIDs(t, "after a re-post", got, mac(2))
	if len(got) != 1 {
		return
	}
	if !got[0].FirstSeen.Equal(t0) || !got[0].LastSeen.Equal(later) || !rec.LastSeen.Equal(later) {
		t.Errorf("re-post: first %v last %v, want first %v last %v", got[0].FirstSeen, got[0].LastSeen, t0, later)
	}
	if got[0].Disks[0].Serial != "D2" || len(got[0].NICs) != 2 {
		t.Errorf("re-post did not replace the report: %+v", got[0].Report)
	}
}

func sameSerialIsSameMachine(t T, h Harness) {
	s := h.New(t, discovery.Limits{})
	put(t, s, Report(mac(3), "S3", "D1"), t0)
	put(t, s, Report(mac(4), "S3", "D1"), t0.Add(time.Second))
	sameIDs(t, "a second NIC of the same DMI serial", list(t, s, t0.Add(time.Second)), mac(3))
	put(t, s, Report(mac(5), "To Be Filled By O.E.M.", "D1"), t0)
	put(t, s, Report(mac(6), "To Be Filled By O.E.M.", "D1"), t0)
	sameIDs(t, "two machines of a placeholder serial", list(t, s, t0.Add(time.Second)), mac(3), mac(5), mac(6))
}

func oldestFirst(t T, h Harness) {
	s := h.New(t, discovery.Limits{})
	put(t, s, Report(mac(9), "A", ""), t0.Add(2*time.Second))
	put(t, s, Report(mac(8), "B", ""), t0)
	put(t, s, Report(mac(7), "C", ""), t0.Add(time.Second))
	put(t, s, Report(mac(8), "B", ""), t0.Add(3*time.Second))
	sameIDs(t, "List", list(t, s, t0.Add(3*time.Second)), mac(8), mac(7), mac(9))
}

func expiry(t T, h Harness) {
	s := h.New(t, discovery.Limits{TTL: time.Hour})
	put(t, s, Report(mac(1), "S1", ""), t0)
	put(t, s, Report(mac(2), "S2", ""), t0.Add(30*time.Minute))
	sameIDs(t, "an hour on", list(t, s, t0.Add(time.Hour)), mac(2))
	rec := put(t, s, Report(mac(1), "S1", ""), t0.Add(2*time.Hour))
	if !rec.FirstSeen.Equal(t0.Add(2 * time.Hour)) {
		t.Errorf("an expired machine seen again: first seen %v, want %v (a new entry)", rec.FirstSeen, t0.Add(2*time.Hour))
	}
	sameIDs(t, "two hours on", list(t, s, t0.Add(2*time.Hour)), mac(1))
}

func bound(t T, h Harness) {
	s := h.New(t, discovery.Limits{Max: 3, TTL: time.Hour})
	for i := range 3 {
		put(t, s, Report(mac(i), fmt.Sprint("S", i), ""), t0)
	}
	if _, err := s.Put(context.Background(), Report(mac(3), "S3", ""), t0); !errors.Is(err, discovery.ErrFull) {
		t.Errorf("a fourth machine in an inbox of 3: %v, want ErrFull", err)
	}
	put(t, s, Report(mac(1), "S1", "new disk"), t0.Add(time.Minute))
	sameIDs(t, "full", list(t, s, t0.Add(time.Minute)), mac(0), mac(1), mac(2))
	put(t, s, Report(mac(3), "S3", ""), t0.Add(time.Hour))
	sameIDs(t, "once two expired", list(t, s, t0.Add(time.Hour)), mac(1), mac(3))
}

// floodStaysWithinBound posts many machines at once: the inbox keeps its
// bound, the rest are refused with ErrFull.
func floodStaysWithinBound(t T, h Harness) {
	const machines, max = 200, 10
	s := h.New(t, discovery.Limits{Max: max})
	kept, full := 0, 0
	var other []error
	for _, err := range storetest.Race(machines, func(i int) error {
		_, err := s.Put(context.Background(), Report(mac(i), fmt.Sprint("F", i), ""), t0)
		return err
	}) {
		switch {
		case err == nil:
			kept++
		case errors.Is(err, discovery.ErrFull):
			full++
		default:
			other = append(other, err)
		}
	}
	if kept != max || full != machines-max || len(other) > 0 {
		t.Errorf("a flood of %d into %d: %d kept, %d full, other errors %v", machines, max, kept, full, other)
	}
	if n := len(list(t, s, t0)); n != max {
		t.Errorf("after the flood the inbox holds %d, want %d", n, max)
	}
}

func persists(t T, h Harness) {
	if h.Reopen == nil {
		t.Logf("no Reopen: skipped")
		return
	}
	s := h.New(t, discovery.Limits{})
	put(t, s, Report(mac(1), "S1", "D1"), t0)
	s = h.Reopen(t, s)
	got := list(t, s, t0)
	sameIDs(t, "reopened", got, mac(1))
	if len(got) == 1 && (got[0].Disks[0].Serial != "D1" || !got[0].FirstSeen.Equal(t0)) {
		t.Errorf("reopened entry %+v", got[0])
	}
}
