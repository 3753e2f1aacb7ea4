package eventstest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/plasmactl/plasma-node/internal/storetest"
	"github.com/plasmactl/plasma-node/pxe/events"
)

// T is what a case needs of a test ([storetest.T]).
type T = storetest.T

// Harness makes the stores the cases run on.
type Harness struct {
	// New returns a new, empty store whose size bound is about maxBytes
	// of events (their JSON form), or its default when maxBytes is 0.
	// Required.
	New func(t T, maxBytes int64) events.Store
	// Writer returns a second writer on the state of s, as another
	// process or host would open it, with the same bound. Nil: the cases
	// of two writers use s for both.
	Writer func(t T, s events.Store) events.Store
	// Wait bounds how long a case waits for an event to arrive. Zero
	// means 10 s.
	Wait time.Duration
}

// Check is one property of the suite: its Name says what it checks.
type Check = storetest.Check[Harness]

// Checks returns the suite's checks, in the order Run runs them.
func Checks() []Check {
	return []Check{
		{Name: "appends are read in order", Run: appendAndRead},
		{Name: "a read resumes after an id", Run: resume},
		{Name: "an id the store never gave is refused", Run: badID},
		{Name: "a follower gets each event as it is appended", Run: followNew},
		{Name: "a follower of some kinds gets those and no other", Run: followKinds},
		{Name: "concurrent appends keep one order and resume from any id", Run: concurrent},
		{Name: "the size bound holds and keeps the newest events", Run: sizeBound},
		{Name: "a rotation loses no event", Run: rotation},
		{Name: "two writers order and rotate without losing an event", Run: twoWriters},
	}
}

// Run runs every case as a subtest of t.
func Run(t *testing.T, h Harness) { storetest.Run(t, h, Checks()) }

// eventSize is about the JSON size of the suite's events.
const eventSize = 300

func ev(node string) events.Event {
	return events.Event{Kind: events.Answer, Node: node, Status: 200, Detail: strings.Repeat("d", eventSize-100)}
}

func nodes(recs []events.Record) []string {
	out := make([]string, len(recs))
	for i, r := range recs {
		out[i] = r.Event.Node
	}
	return out
}

func names(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = prefix + strconv.Itoa(i)
	}
	return out
}

func wait(h Harness) time.Duration {
	if h.Wait > 0 {
		return h.Wait
	}
	return 10 * time.Second
}

func appendAll(t T, s events.Store, nodes ...string) {
	t.Helper()
	for _, n := range nodes {
		storetest.NoError(t, s.Append(context.Background(), ev(n)), "append "+n)
	}
}

func readAll(t T, s events.Store, after string) []events.Record {
	t.Helper()
	recs, err := s.Read(context.Background(), after, 0)
	storetest.NoError(t, err, fmt.Sprintf("read after %q", after))
	return recs
}

func appendAndRead(t T, h Harness) {
	s := h.New(t, 0)
	ctx := context.Background()
	if recs := readAll(t, s, ""); len(recs) != 0 {
		t.Errorf("a new store reads %v, want nothing", nodes(recs))
	}
	before := time.Now().Add(-time.Second)
	storetest.NoError(t, s.Append(ctx, ev("a"), ev("b"), ev("c")), "append")
	appendAll(t, s, "d", "e")
	recs := readAll(t, s, "")
	if got := nodes(recs); !slices.Equal(got, []string{"a", "b", "c", "d", "e"}) {
		t.Fatalf("read %v, want a b c d e", got)
	}
	ids := map[string]bool{}
	for _, r := range recs {
		if r.ID == "" || r.ID == events.FromNow || ids[r.ID] {
			t.Errorf("event %s has id %q: want one of its own", r.Event.Node, r.ID)
		}
		ids[r.ID] = true
		if r.Event.Time.Before(before) || r.Event.Kind != events.Answer || r.Event.Status != 200 {
			t.Errorf("event %s read as %+v: want it as appended, with the time of its append", r.Event.Node, r.Event)
		}
	}
	if recs, err := s.Read(ctx, "", 2); err != nil || !slices.Equal(nodes(recs), []string{"a", "b"}) {
		t.Errorf("read of at most 2 = %v, %v; want a b", nodes(recs), err)
	}
}

func resume(t T, h Harness) {
	s := h.New(t, 0)
	all := names("n", 20)
	appendAll(t, s, all...)
	recs := readAll(t, s, "")
	if !slices.Equal(nodes(recs), all) {
		t.Fatalf("read %v, want %v", nodes(recs), all)
	}
	for i, r := range recs {
		if got := nodes(readAll(t, s, r.ID)); !slices.Equal(got, all[i+1:]) {
			t.Errorf("read after the id of %s = %v, want %v", r.Event.Node, got, all[i+1:])
		}
	}
	if got := readAll(t, s, events.FromNow); len(got) != 0 {
		t.Errorf("read from now = %v, want nothing", nodes(got))
	}
	appendAll(t, s, "late")
	if got := nodes(readAll(t, s, recs[len(recs)-1].ID)); !slices.Equal(got, []string{"late"}) {
		t.Errorf("read after the last id, once one more was appended = %v, want late", got)
	}
}

func badID(t T, h Harness) {
	s := h.New(t, 0)
	appendAll(t, s, "a")
	for _, id := range []string{"not an id", "-1", "x-y-z"} {
		if _, err := s.Read(context.Background(), id, 0); !errors.Is(err, events.ErrBadID) {
			t.Errorf("read after %q = %v, want ErrBadID", id, err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		err := s.Follow(ctx, id, func(events.Record) error { return nil })
		cancel()
		if !errors.Is(err, events.ErrBadID) {
			t.Errorf("follow after %q = %v, want ErrBadID", id, err)
		}
	}
}

// follower collects what Follow gives after an id, until stopped.
type follower struct {
	mu   sync.Mutex
	recs []events.Record
	more chan struct{}
	err  chan error
	stop context.CancelFunc
}

// follow follows s after an id: of kinds only when some are given
// (events.FollowKinds), else of every kind.
func follow(s events.Store, after string, kinds ...events.Kind) *follower {
	ctx, cancel := context.WithCancel(context.Background())
	f := &follower{more: make(chan struct{}, 1), err: make(chan error, 1), stop: cancel}
	run := s.Follow
	if len(kinds) > 0 {
		run = func(ctx context.Context, after string, fn func(events.Record) error) error {
			return events.FollowKinds(ctx, s, after, kinds, fn)
		}
	}
	go func() {
		f.err <- run(ctx, after, func(r events.Record) error {
			f.mu.Lock()
			f.recs = append(f.recs, r)
			f.mu.Unlock()
			select {
			case f.more <- struct{}{}:
			default:
			}
			return nil
		})
	}()
	return f
}

// until waits for n events (or the harness's Wait) and returns those got.
func (f *follower) until(h Harness, n int) []events.Record {
	deadline := time.After(wait(h))
	for {
		f.mu.Lock()
		got := slices.Clone(f.recs)
		f.mu.Unlock()
		if len(got) >= n {
			return got
		}
		select {
		case <-f.more:
		case err := <-f.err:
			f.err <- err
			return got
		case <-deadline:
			return got
		}
	}
}

func (f *follower) close(t T) {
	t.Helper()
	f.stop()
	if err := <-f.err; !errors.Is(err, context.Canceled) {
		t.Errorf("follow ended with %v, want the context's error", err)
	}
}

func followNew(t T, h Harness) {
	s := h.New(t, 0)
	appendAll(t, s, "old")
	mid := readAll(t, s, "")
	now := follow(s, events.FromNow)
	from := follow(s, mid[0].ID)
	all := follow(s, "")
	time.Sleep(50 * time.Millisecond) // the followers are open
	start := time.Now()
	appendAll(t, s, "new")
	got := now.until(h, 1)
	took := time.Since(start)
	now.close(t)
	if !slices.Equal(nodes(got), []string{"new"}) {
		t.Errorf("a follower from now got %v, want new", nodes(got))
	}
	if took > wait(h)/2 {
		t.Errorf("the follower got the event %v after it was appended", took)
	}
	if got := nodes(from.until(h, 1)); !slices.Equal(got, []string{"new"}) {
		t.Errorf("a follower after old got %v, want new", got)
	}
	from.close(t)
	if got := nodes(all.until(h, 2)); !slices.Equal(got, []string{"old", "new"}) {
		t.Errorf("a follower from the oldest got %v, want old new", got)
	}
	all.close(t)
}

// followKinds: a follower of some kinds (events.FollowKinds: the store's
// own filter, or Follow with one) gets those, in order, and no other,
// whatever the other events' details say.
func followKinds(t T, h Harness) {
	s := h.New(t, 0)
	in := []events.Event{
		{Kind: events.Answer, Node: "a", Detail: `"kind":"bmc"`},
		{Kind: events.BMC, Node: "b"},
		{Kind: events.DHCPOffer, MAC: "52:54:00:00:00:01", Node: "c", Detail: `kind": "bmc"`},
		{Kind: events.Installed, Node: "d"},
		{Kind: events.BMC, Node: "e", Detail: `"kind":"answer" \"kind\":\"x\"`},
		{Kind: events.TFTP, Node: "f", Detail: `{"kind" : "installed"}`},
	}
	storetest.NoError(t, s.Append(context.Background(), in...), "append")
	f := follow(s, "", events.BMC, events.Installed)
	f.until(h, 3)
	storetest.NoError(t, s.Append(context.Background(), events.Event{Kind: events.Answer, Node: "g"}, events.Event{Kind: events.BMC, Node: "h"}), "append")
	var g []string
	for _, r := range f.until(h, 4) {
		g = append(g, string(r.Event.Kind)+":"+r.Event.Node)
	}
	f.close(t)
	want := []string{"bmc:b", "installed:d", "bmc:e", "bmc:h"}
	if !slices.Equal(g, want) {
		t.Errorf("a follower of bmc and installed events got %v, want %v", g, want)
	}
}

// inOrder checks that got holds each of want's events once, each
// writer's (by prefix) in its order.
func inOrder(t T, who string, got []string, writers map[string]int) {
	t.Helper()
	seen := map[string]bool{}
	next := map[string]int{}
	for _, n := range got {
		if seen[n] {
			t.Errorf("%s got %s twice", who, n)
			return
		}
		seen[n] = true
		p := strings.TrimRight(n, "0123456789")
		if n != p+strconv.Itoa(next[p]) {
			t.Errorf("%s got %s where %s%d was next", who, n, p, next[p])
			return
		}
		next[p]++
	}
	for p, n := range writers {
		if next[p] != n {
			t.Errorf("%s got %d of the %d events of writer %s", who, next[p], n, p)
		}
	}
}

func concurrent(t T, h Harness) {
	s := h.New(t, 0)
	const writers, each = 8, 50
	f := follow(s, "")
	want := map[string]int{}
	var wg sync.WaitGroup
	for w := range writers {
		p := "w" + string(rune('a'+w))
		want[p] = each
		wg.Go(func() {
			for i := range each {
				if err := s.Append(context.Background(), ev(p+strconv.Itoa(i))); err != nil {
					t.Errorf("append: %v", err)
					return
				}
			}
		})
	}
	wg.Wait()
	got := f.until(h, writers*each)
	f.close(t)
	inOrder(t, "the follower", nodes(got), want)
	all := readAll(t, s, "")
	if !slices.Equal(nodes(all), nodes(got)) {
		t.Fatalf("a read gives another order than the follower: one order for every reader is wanted")
	}
	for i := 0; i < len(all); i += 37 {
		if rest := nodes(readAll(t, s, all[i].ID)); !slices.Equal(rest, nodes(all[i+1:])) {
			t.Errorf("read after the id of %s gives %d events, want the %d after it", all[i].Event.Node, len(rest), len(all)-i-1)
		}
	}
}

func sizeBound(t T, h Harness) {
	const bound = 32 << 10
	s := h.New(t, bound)
	appendAll(t, s, "first")
	first := readAll(t, s, "")
	const n = 1000 // about 10 times the bound
	all := names("e", n)
	appendAll(t, s, all...)
	kept := nodes(readAll(t, s, ""))
	if len(kept) == 0 || len(kept)*(eventSize-20) > 2*bound+2*eventSize {
		t.Errorf("%d events of about %d bytes kept under a bound of %d bytes: want at most twice the bound", len(kept), eventSize, bound)
	}
	if len(kept) > 0 && (len(kept) > n || !slices.Equal(kept, all[n-len(kept):])) {
		t.Errorf("kept %s..%s out of order or with gaps: want the newest events, in order", kept[0], kept[len(kept)-1])
	}
	// An id whose event was dropped reads from the oldest kept.
	if got := nodes(readAll(t, s, first[0].ID)); !slices.Equal(got, kept) {
		t.Errorf("read after a dropped event's id gives %d events, want the %d kept", len(got), len(kept))
	}
}

// readAlong appends each of nodes through the writers in turn and reads
// after its last id after each append, as a stream does; it returns
// what it read.
func readAlong(t T, r events.Store, ws []events.Store, all []string) []string {
	t.Helper()
	var got []string
	last := ""
	for i, n := range all {
		storetest.NoError(t, ws[i%len(ws)].Append(context.Background(), ev(n)), "append "+n)
		for _, rec := range readAll(t, r, last) {
			got, last = append(got, rec.Event.Node), rec.ID
		}
	}
	return got
}

func rotation(t T, h Harness) {
	s := h.New(t, 4<<10) // rotates every dozen events
	all := names("r", 300)
	if got := readAlong(t, s, []events.Store{s}, all); !slices.Equal(got, all) {
		t.Errorf("reading along, %d of %d events: %s", len(got), len(all), missing(all, got))
	}
}

func missing(want, got []string) string {
	var out []string
	for _, n := range want {
		if !slices.Contains(got, n) {
			out = append(out, n)
		}
	}
	if len(out) > 8 {
		out = append(out[:8], "…")
	}
	return fmt.Sprintf("missed %v", out)
}

func twoWriters(t T, h Harness) {
	s := h.New(t, 4<<10)
	second := s
	if h.Writer != nil {
		second = h.Writer(t, s)
	}
	// In turn, reading along: every event, in the order appended.
	var all []string
	for i := range 300 {
		all = append(all, []string{"serve", "power"}[i%2]+strconv.Itoa(i/2))
	}
	if got := readAlong(t, s, []events.Store{s, second}, all); !slices.Equal(got, all) {
		t.Errorf("two writers in turn, reading along: %d of %d events, %s", len(got), len(all), missing(all, got))
	}
	// At once, with a follower of each: each writer's events once and in
	// order, the same order for both.
	s2 := h.New(t, 256<<10) // holds them all: a follower may lag
	w2 := s2
	if h.Writer != nil {
		w2 = h.Writer(t, s2)
	}
	f1, f2 := follow(s2, ""), follow(w2, "")
	var wg sync.WaitGroup
	for _, w := range []struct {
		p string
		s events.Store
	}{{"a", s2}, {"b", w2}} {
		wg.Go(func() {
			for i := range 200 {
				if err := w.s.Append(context.Background(), ev(w.p+strconv.Itoa(i))); err != nil {
					t.Errorf("append: %v", err)
					return
				}
			}
		})
	}
	wg.Wait()
	g1, g2 := nodes(f1.until(h, 400)), nodes(f2.until(h, 400))
	f1.close(t)
	f2.close(t)
	inOrder(t, "the first writer's follower", g1, map[string]int{"a": 200, "b": 200})
	if !slices.Equal(g1, g2) {
		t.Errorf("the writers' followers saw two orders (%d and %d events)", len(g1), len(g2))
	}
}
