package windowtest

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"sync"
	"testing"
	"time"

	"github.com/plasmactl/plasma-node/internal/storetest"
	"github.com/plasmactl/plasma-node/pxe/window"
)

// T is what a check needs of a test ([storetest.T]).
type T = storetest.T

// Harness gives the suite stores of the implementations under test:
// the window serving on a host ([window.Store]), the site's window
// ([window.SiteStore]), or both. The checks of a store the harness does
// not make pass without checking.
type Harness struct {
	// New returns a new, empty store of a host's window for one check;
	// nil skips the host's checks.
	New func(t T) window.Store
	// Hold takes s's window lock as a window serving on addr would, and
	// returns what lets it go. Nil skips the check of Holder.
	Hold func(t T, s window.Store, addr string) (release func())
	// NewSite returns a new, empty store of the site's window for one
	// check; nil skips the site's checks.
	NewSite func(t T) window.SiteStore
	// OtherSite returns another host's store on the same state as s;
	// nil for a store one host has (the state folder's), which skips
	// the check across hosts.
	OtherSite func(t T, s window.SiteStore) window.SiteStore
}

// Check is one conformance check.
type Check = storetest.Check[Harness]

// Checks returns the suite's checks: the host's, then the site's.
func Checks() []Check {
	return []Check{
		{Name: "NoneReadsAsNone", Run: onHost(noneReadsAsNone)},
		{Name: "RoundTrip", Run: onHost(roundTrip)},
		{Name: "RemovedReadsAsNone", Run: onHost(removedReadsAsNone)},
		{Name: "NewerWindowKept", Run: onHost(newerWindowKept)},
		{Name: "ConcurrentWriters", Run: onHost(concurrentWriters)},
		{Name: "Holder", Run: onHost(holder)},
		{Name: "NoneIsNil", Run: onSite(noneIsNil)},
		{Name: "OpenIsReadBack", Run: onSite(openIsReadBack)},
		{Name: "SecondOpenIsRefusedNamingTheFirst", Run: onSite(secondOpen)},
		{Name: "APassedWindowIsReplaced", Run: onSite(passedReplaced)},
		{Name: "CloseRemoves", Run: onSite(closeRemoves)},
		{Name: "EndRemovesItsOwnOnly", Run: onSite(endOwn)},
		{Name: "HostsSeenSince", Run: onSite(hostsSince)},
		{Name: "ChangesAreSignalled", Run: onSite(changesSignalled)},
		{Name: "AnotherHostSeesAndIsRefused", Run: onSite(anotherHost)},
	}
}

// Run runs every check as a subtest of t.
func Run(t *testing.T, h Harness) { storetest.Run(t, h, Checks()) }

// onHost runs a check of the host's store when h makes one.
func onHost(run func(T, Harness)) func(T, Harness) {
	return func(t T, h Harness) {
		if h.New == nil {
			t.Logf("no New: the host's window is not checked")
			return
		}
		run(t, h)
	}
}

// onSite runs a check of the site's store when h makes one.
func onSite(run func(T, Harness)) func(T, Harness) {
	return func(t T, h Harness) {
		if h.NewSite == nil {
			t.Logf("no NewSite: the site's window is not checked")
			return
		}
		run(t, h)
	}
}

func record(pid int, ttl time.Duration) *window.Record {
	started := time.Date(2026, 12, 4, 5, 0, 0, 123456789, time.UTC)
	r := &window.Record{
		PID:             pid,
		Unit:            fmt.Sprintf("node-provisioner-%d.service", pid),
		HTTP:            fmt.Sprintf("127.0.0.1:%d", 8000+pid%1000),
		DHCPInterface:   "eth1",
		TFTP:            "0.0.0.0:69",
		URL:             fmt.Sprintf("https://10.0.0.1:%d/answer", 8000+pid%1000),
		Started:         started,
		CertFingerprint: "sha256:ab:cd",
	}
	if ttl > 0 {
		r.Deadline = started.Add(ttl)
	}
	return r
}

// equal compares two records, their times by instant.
func equal(a, b *window.Record) bool {
	if a == nil || b == nil {
		return a == b
	}
	x, y := *a, *b
	if !x.Started.Equal(y.Started) || !x.Deadline.Equal(y.Deadline) || x.Deadline.IsZero() != y.Deadline.IsZero() {
		return false
	}
	x.Started, y.Started, x.Deadline, y.Deadline = time.Time{}, time.Time{}, time.Time{}, time.Time{}
	return x == y
}

func none(t T, s window.Store, what string) {
	ctx := context.Background()
	t.Helper()
	if r, err := s.Read(ctx); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Read %s = %+v, %v; want an error wrapping fs.ErrNotExist", what, r, err)
	}
}

func noneReadsAsNone(t T, h Harness) {
	ctx := context.Background()
	s := h.New(t)
	none(t, s, "of a new store")
	if held, err := s.Holder(ctx); err != nil || held != nil {
		t.Errorf("Holder of a new store = %+v, %v; want none", held, err)
	}
	if err := s.Remove(ctx, 1234); err != nil {
		t.Errorf("Remove with no window = %v, want nil", err)
	}
	none(t, s, "after removing none")
}

func roundTrip(t T, h Harness) {
	ctx := context.Background()
	s := h.New(t)
	for _, want := range []*window.Record{record(101, 2*time.Hour), record(102, 0), {PID: 103, HTTP: "[::1]:8080", Started: time.Now().UTC()}} {
		if err := s.Write(ctx, want); err != nil {
			t.Fatalf("Write: %v", err)
		}
		got, err := s.Read(ctx)
		if err != nil {
			t.Fatalf("Read: %v", err)
		}
		if !equal(got, want) {
			t.Errorf("Read = %+v\nwant %+v", got, want)
		}
		if want.Deadline.IsZero() != got.Deadline.IsZero() {
			t.Errorf("a deadline of %v read back as %v", want.Deadline, got.Deadline)
		}
	}
}

func removedReadsAsNone(t T, h Harness) {
	ctx := context.Background()
	s := h.New(t)
	if err := s.Write(ctx, record(201, time.Hour)); err != nil {
		t.Fatalf("Write: %v", err)
	}
	if err := s.Remove(ctx, 201); err != nil {
		t.Fatalf("Remove: %v", err)
	}
	none(t, s, "of a removed window")
	if err := s.Remove(ctx, 201); err != nil {
		t.Errorf("Remove twice = %v, want nil", err)
	}
	again := record(202, time.Hour)
	if err := s.Write(ctx, again); err != nil {
		t.Fatalf("Write after a removal: %v", err)
	}
	if got, err := s.Read(ctx); err != nil || !equal(got, again) {
		t.Errorf("Read of a window after a removed one = %+v, %v; want the new one", got, err)
	}
}

func newerWindowKept(t T, h Harness) {
	ctx := context.Background()
	s := h.New(t)
	if err := s.Write(ctx, record(301, time.Hour)); err != nil {
		t.Fatalf("Write: %v", err)
	}
	newer := record(302, 2*time.Hour)
	if err := s.Write(ctx, newer); err != nil {
		t.Fatalf("Write: %v", err)
	}
	if err := s.Remove(ctx, 301); err != nil {
		t.Fatalf("Remove of the older window: %v", err)
	}
	if got, err := s.Read(ctx); err != nil || !equal(got, newer) {
		t.Errorf("after the older window's Remove, Read = %+v, %v; want the newer window kept", got, err)
	}
}

func concurrentWriters(t T, h Harness) {
	ctx := context.Background()
	s := h.New(t)
	const n = 16
	written := make([]*window.Record, n)
	for i := range n {
		written[i] = record(400+i, time.Duration(i+1)*time.Minute)
	}
	if err := s.Write(ctx, written[0]); err != nil {
		t.Fatalf("Write: %v", err)
	}
	known := func(r *window.Record) bool {
		for _, w := range written {
			if equal(r, w) {
				return true
			}
		}
		return false
	}
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			if err := s.Write(ctx, written[i]); err != nil {
				t.Errorf("Write %d: %v", i, err)
			}
		})
		for range 3 {
			wg.Go(func() {
				r, err := s.Read(ctx)
				if err != nil || !known(r) {
					t.Errorf("a Read among writers = %+v, %v; want one whole record written", r, err)
				}
			})
		}
	}
	wg.Wait()
	if r, err := s.Read(ctx); err != nil || !known(r) {
		t.Errorf("after the writers Read = %+v, %v; want one of theirs", r, err)
	}
}

func holder(t T, h Harness) {
	ctx := context.Background()
	if h.Hold == nil {
		t.Logf("no Hold: Holder not checked")
		return
	}
	s := h.New(t)
	release := h.Hold(t, s, "127.0.0.1:8443")
	held, err := s.Holder(ctx)
	switch {
	case err != nil:
		t.Errorf("Holder while held: %v", err)
	case held == nil:
		t.Errorf("Holder while held = none, want the window on 127.0.0.1:8443")
	default:
		if held.HTTP != "127.0.0.1:8443" || held.PID <= 0 || !errors.Is(held, window.ErrOpen) {
			t.Errorf("Holder while held = %+v; want the window on 127.0.0.1:8443, its process and ErrOpen", held)
		}
	}
	release()
	if held, err := s.Holder(ctx); err != nil || held != nil {
		t.Errorf("Holder after the window let go = %+v, %v; want none", held, err)
	}
}
