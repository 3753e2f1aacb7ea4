package postgres_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/plasmactl/plasma-node/internal/pgtest"
	"github.com/plasmactl/plasma-node/pxe/idempotency"
	"github.com/plasmactl/plasma-node/pxe/store/postgres"
)

// TestManyKeysAtOnceDoNotStarveThePool: more requests of different keys
// at once than the pool has connections each take their key's lock (a
// connection held until unlock) and then need another connection for
// their Get and Put. Lock must leave connections for that work: with
// every connection held by a lock, each request waited for a connection
// until the store's timeout (bench/apiload on PostgreSQL: registration
// p99 of 10.8 s with 16 at once on the pool of 16).
func TestManyKeysAtOnceDoNotStarveThePool(t *testing.T) {
	ctx := t.Context()
	srv := pgtest.Start(t)
	db, err := postgres.OpenDB(context.Background(), srv.NewDatabase(t), postgres.DBOptions{MaxConns: 4, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	s := postgres.OpenReplies(db)
	const n = 16
	start := time.Now()
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			key := fmt.Sprint("key-", i)
			unlock := s.Lock(ctx, key)
			defer unlock()
			if _, err := s.Get(ctx, key); err != nil {
				t.Errorf("Get %s: %v", key, err)
				return
			}
			if err := s.Put(ctx, key, idempotency.Reply{Request: "req", Status: 201, Body: key, Time: time.Now().UTC()}); err != nil {
				t.Errorf("Put %s: %v", key, err)
			}
		})
	}
	wg.Wait()
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("%d requests of their own keys on a pool of 4 took %v; want well under the 5 s timeout", n, took)
	}
}
