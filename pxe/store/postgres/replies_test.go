package postgres_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/plasmactl/plasma-node/internal/pgtest"
	"github.com/plasmactl/plasma-node/pxe/idempotency"
	"github.com/plasmactl/plasma-node/pxe/idempotency/idempotencytest"
	"github.com/plasmactl/plasma-node/pxe/store/postgres"
)

func openReplies(t idempotencytest.T, conn string) *postgres.Replies {
	db, err := postgres.OpenDB(context.Background(), conn, postgres.DBOptions{})
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	if c, ok := t.(interface{ Cleanup(func()) }); ok {
		c.Cleanup(db.Close)
	}
	return postgres.OpenReplies(db)
}

// TestRepliesConformance runs the idempotency records' suite on a real
// PostgreSQL, a database per check; Reopen is a second pool, as a
// restarted process or another host opens it.
func TestRepliesConformance(t *testing.T) {
	t.Parallel()
	srv := pgtest.Start(t)
	var mu sync.Mutex
	conns := map[idempotency.Store]string{}
	keep := func(s idempotency.Store, conn string) idempotency.Store {
		mu.Lock()
		defer mu.Unlock()
		conns[s] = conn
		return s
	}
	idempotencytest.Run(t, idempotencytest.Harness{
		New: func(t idempotencytest.T) idempotency.Store {
			conn := srv.NewDatabase(t.(testing.TB))
			return keep(openReplies(t, conn), conn)
		},
		Reopen: func(t idempotencytest.T, s idempotency.Store) idempotency.Store {
			mu.Lock()
			conn := conns[s]
			mu.Unlock()
			return keep(openReplies(t, conn), conn)
		},
	})
	t.Run("RacingRequestsOnTwoHostsRunOnce", func(t *testing.T) { racingHosts(t, srv) })
}

// racingHosts: 32 requests of one key, split between two hosts (a pool
// each), each taking the key's lock, run the work once and agree on one
// reply.
func racingHosts(t *testing.T, srv *pgtest.Server) {
	ctx := t.Context()
	conn := srv.NewDatabase(t)
	hosts := []idempotency.Store{openReplies(t, conn), openReplies(t, conn)}
	const n = 32
	got := make([]string, n)
	var mu sync.Mutex
	ran := 0
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			s := hosts[i%2]
			unlock := s.Lock(ctx, "shared")
			defer unlock()
			prev, err := s.Get(ctx, "shared")
			if err != nil {
				t.Errorf("Get: %v", err)
				return
			}
			if prev != nil {
				got[i] = prev.Body
				return
			}
			mu.Lock()
			ran++
			mu.Unlock()
			time.Sleep(5 * time.Millisecond)
			r := idempotency.Reply{Request: "req", Status: 201, Body: fmt.Sprintf("reply of racer %d on host %d", i, i%2), Time: time.Now().UTC()}
			if err := s.Put(ctx, "shared", r); err != nil {
				t.Errorf("Put: %v", err)
			}
			got[i] = r.Body
		})
	}
	wg.Wait()
	if ran != 1 {
		t.Errorf("%d of %d racing requests of one key on two hosts ran, want 1", ran, n)
	}
	for i := range n {
		if got[i] != got[0] {
			t.Errorf("racer %d got %q, racer 0 %q; want one reply for all", i, got[i], got[0])
		}
	}
}
