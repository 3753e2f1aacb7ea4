package idempotencytest

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/plasmactl/plasma-node/internal/storetest"
	"github.com/plasmactl/plasma-node/pxe/apitype"
	"github.com/plasmactl/plasma-node/pxe/idempotency"
)

// T is what a check needs of a test ([storetest.T]).
type T = storetest.T

// Harness gives the suite stores of the implementation under test: New
// is required; a nil Reopen skips the check of a restart.
type Harness = storetest.Harness[idempotency.Store]

// Check is one conformance check.
type Check = storetest.Check[Harness]

// Checks returns the suite's checks.
func Checks() []Check {
	return []Check{
		{Name: "ReplayGetsTheSameReply", Run: replay},
		{Name: "AnotherBodyIsRefused", Run: anotherBody},
		{Name: "KeysApart", Run: keysApart},
		{Name: "AfterARestart", Run: afterRestart},
		{Name: "PastItsDay", Run: pastItsDay},
		{Name: "RacingRequests", Run: racing},
	}
}

// Run runs every check as a subtest of t.
func Run(t *testing.T, h Harness) { storetest.Run(t, h, Checks()) }

func reply(req string, status int, body string) idempotency.Reply {
	return idempotency.Reply{Request: req, Status: status, Body: body, Time: time.Now().UTC().Truncate(time.Millisecond)}
}

func same(a, b idempotency.Reply) bool {
	return a.Request == b.Request && a.Status == b.Status && a.Body == b.Body && a.Time.Equal(b.Time)
}

// serve does what the API does with a POST under key whose request hash
// is req: under the key's lock, a kept reply is the answer (refused when
// its request is another), else work runs and its reply is kept.
func serve(t T, s idempotency.Store, key, req string, work func() idempotency.Reply) (got idempotency.Reply, refused bool) {
	ctx := context.Background()
	t.Helper()
	unlock := s.Lock(ctx, key)
	defer unlock()
	prev, err := s.Get(ctx, key)
	if err != nil {
		t.Errorf("Get %q: %v", key, err)
		return idempotency.Reply{}, false
	}
	if prev != nil {
		return *prev, prev.Request != req
	}
	r := work()
	if err := s.Put(ctx, key, r); err != nil {
		t.Errorf("Put %q: %v", key, err)
	}
	return r, false
}

func replay(t T, h Harness) {
	ctx := context.Background()
	s := h.New(t)
	if r, err := s.Get(ctx, "never-used"); err != nil || r != nil {
		t.Errorf("Get of an unused key = %+v, %v; want none", r, err)
	}
	body := `{"name":"node1","macs":["52:54:00:aa:00:01"]}` + "\n"
	first := reply("req-1", 201, body)
	runs := 0
	work := func() idempotency.Reply { runs++; return first }
	got, refused := serve(t, s, "key-1", "req-1", work)
	if refused || !same(got, first) {
		t.Errorf("first request = %+v (refused %v); want its own reply", got, refused)
	}
	for range 3 {
		got, refused = serve(t, s, "key-1", "req-1", work)
		if refused || !same(got, first) {
			t.Errorf("repeat = %+v (refused %v); want the first reply %+v", got, refused, first)
		}
	}
	if runs != 1 {
		t.Errorf("the request ran %d times under one key, want once", runs)
	}
	big := reply("req-big", 201, strings.Repeat("b", apitype.MaxBody))
	if err := s.Put(ctx, "key-big", big); err != nil {
		t.Fatalf("Put of a reply of MaxBody bytes: %v", err)
	}
	if r, err := s.Get(ctx, "key-big"); err != nil || r == nil || !same(*r, big) {
		t.Errorf("Get of a reply of MaxBody bytes = %v, %v; want it whole", r != nil, err)
	}
}

func anotherBody(t T, h Harness) {
	ctx := context.Background()
	s := h.New(t)
	first := reply("req-first", 201, `{"name":"node1"}`)
	serve(t, s, "key", "req-first", func() idempotency.Reply { return first })
	got, refused := serve(t, s, "key", "req-other", func() idempotency.Reply {
		t.Errorf("a request with another body under a used key ran")
		return reply("req-other", 201, `{"name":"node2"}`)
	})
	if !refused {
		t.Errorf("another body under a used key got %+v, not refused", got)
	}
	if r, err := s.Get(ctx, "key"); err != nil || r == nil || !same(*r, first) {
		t.Errorf("after the refusal Get = %+v, %v; want the first reply kept", r, err)
	}
}

func keysApart(t T, h Harness) {
	ctx := context.Background()
	s := h.New(t)
	keys := []string{"a", "A", "a ", "../a", "a/b", "key-1", "key-2", strings.Repeat("k", 255), strings.Repeat("k", 254) + "j"}
	for i, k := range keys {
		if err := s.Put(ctx, k, reply(fmt.Sprintf("req-%d", i), 200+i, fmt.Sprintf("body %d", i))); err != nil {
			t.Fatalf("Put %q: %v", k, err)
		}
	}
	for i, k := range keys {
		r, err := s.Get(ctx, k)
		if err != nil || r == nil || r.Request != fmt.Sprintf("req-%d", i) || r.Status != 200+i || r.Body != fmt.Sprintf("body %d", i) {
			t.Errorf("Get %.20q = %+v, %v; want its own reply", k, r, err)
		}
	}
}

func afterRestart(t T, h Harness) {
	ctx := context.Background()
	if h.Reopen == nil {
		t.Logf("no Reopen: a restart is not checked")
		return
	}
	s := h.New(t)
	first := reply("req-1", 201, `{"name":"node1"}`)
	if err := s.Put(ctx, "key-1", first); err != nil {
		t.Fatalf("Put: %v", err)
	}
	s = h.Reopen(t, s)
	if r, err := s.Get(ctx, "key-1"); err != nil || r == nil || !same(*r, first) {
		t.Errorf("Get after a restart = %+v, %v; want %+v", r, err, first)
	}
}

func pastItsDay(t T, h Harness) {
	ctx := context.Background()
	s := h.New(t)
	old := reply("req-old", 201, "old")
	old.Time = time.Now().Add(-25 * time.Hour).UTC()
	if err := s.Put(ctx, "old", old); err != nil {
		t.Fatalf("Put: %v", err)
	}
	if r, err := s.Get(ctx, "old"); err != nil || r != nil {
		t.Errorf("Get of a reply past its day = %+v, %v; want none", r, err)
	}
	recent := reply("req-recent", 201, "recent")
	recent.Time = time.Now().Add(-23 * time.Hour).UTC()
	if err := s.Put(ctx, "recent", recent); err != nil {
		t.Fatalf("Put: %v", err)
	}
	if r, err := s.Get(ctx, "recent"); err != nil || r == nil || !same(*r, recent) {
		t.Errorf("Get of a reply 23 hours old = %+v, %v; want it", r, err)
	}
}

func racing(t T, h Harness) {
	s := h.New(t)
	const n = 32
	got := make([]idempotency.Reply, n)
	var runs sync.WaitGroup
	var mu sync.Mutex
	ran := 0
	for i := range n {
		runs.Go(func() {
			got[i], _ = serve(t, s, "shared", "req", func() idempotency.Reply {
				mu.Lock()
				ran++
				mu.Unlock()
				time.Sleep(2 * time.Millisecond) // the request's work
				return reply("req", 201, fmt.Sprintf("reply of racer %d", i))
			})
		})
	}
	runs.Wait()
	if ran != 1 {
		t.Errorf("%d of %d racing requests of one key ran, want 1", ran, n)
	}
	for i := range n {
		if !same(got[i], got[0]) {
			t.Errorf("racer %d got %q, racer 0 %q; want one reply for all", i, got[i].Body, got[0].Body)
		}
	}
}
