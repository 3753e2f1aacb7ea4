package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/plasmactl/plasma-node/answer"
	"github.com/plasmactl/plasma-node/internal/pgtest"
	"github.com/plasmactl/plasma-node/pxe/registry"
	"github.com/plasmactl/plasma-node/pxe/store/postgres"
)

func openStore(t *testing.T, conn string) (*postgres.DB, *postgres.Registrations) {
	t.Helper()
	db, err := postgres.OpenDB(context.Background(), conn, postgres.DBOptions{MaxConns: 8})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	return db, postgres.OpenRegistrations(db, nil)
}

func reg(name, mac string) registry.Registration {
	return registry.Registration{Name: name, MACs: []string{mac}, BootDisk: answer.BootDisk{Kind: answer.BootDiskName, Value: "sda"}}
}

// consumeAcrossHosts: four hosts (a pool each) race 1 000 consumes of
// ten registrations: exactly one wins each, and a registration made
// through one host is seen pending through every other at once.
func consumeAcrossHosts(t *testing.T, srv *pgtest.Server) {
	ctx := context.Background()
	conn := srv.NewDatabase(t)
	var hosts []*postgres.Registrations
	for range 4 {
		_, s := openStore(t, conn)
		hosts = append(hosts, s)
	}
	for i := range 10 {
		if _, err := hosts[i%4].Register(ctx, reg(fmt.Sprintf("node%d", i), fmt.Sprintf("52:54:00:00:01:%02x", i)), registry.RegisterOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for i, h := range hosts {
		if p, err := registry.Pending(ctx, h); err != nil || len(p) != 10 {
			t.Fatalf("host %d sees %d pending, %v; want the 10 registered through the others", i, len(p), err)
		}
	}
	var mu sync.Mutex
	wins := map[string]int{}
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range 1000 {
		wg.Go(func() {
			<-start
			name := fmt.Sprintf("node%d", i%10)
			_, err := hosts[i%4].Consume(ctx, name, registry.ConsumeRecord{ClientIP: fmt.Sprintf("10.1.%d.%d", i/256, i%256)})
			switch {
			case err == nil:
				mu.Lock()
				wins[name]++
				mu.Unlock()
			case !errors.Is(err, registry.ErrAlreadyConsumed):
				t.Errorf("consume %s through host %d: %v", name, i%4, err)
			}
		})
	}
	close(start)
	wg.Wait()
	total := 0
	for i := range 10 {
		if n := wins[fmt.Sprintf("node%d", i)]; n != 1 {
			t.Errorf("node%d consumed %d times, want once", i, n)
		}
		total += wins[fmt.Sprintf("node%d", i)]
	}
	if total != 10 {
		t.Errorf("1 000 racing consumes across 4 hosts gave %d answers, want 10", total)
	}
}

// killedConsumer: a consumer whose connection dies mid-transaction,
// having deleted the pending row, leaves the registration pending.
func killedConsumer(t *testing.T, srv *pgtest.Server) {
	ctx := context.Background()
	conn := srv.NewDatabase(t)
	db, s := openStore(t, conn)
	if _, err := s.Register(ctx, reg("node1", "52:54:00:00:02:01"), registry.RegisterOptions{}); err != nil {
		t.Fatal(err)
	}
	tx, err := db.Pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, "DELETE FROM np_registrations_pending WHERE name = 'node1'"); err != nil {
		t.Fatal(err)
	}
	var pid int
	if err := tx.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&pid); err != nil {
		t.Fatal(err)
	}
	srv.Exec(t, fmt.Sprintf("SELECT pg_terminate_backend(%d)", pid))
	_ = tx.Rollback(ctx)
	if r, err := s.Get(ctx, "node1"); err != nil || r.Consumed != nil {
		t.Fatalf("after a consumer died mid-transaction: Get = %+v, %v; want node1 pending", r, err)
	}
	if _, err := s.Consume(ctx, "node1", registry.ConsumeRecord{}); err != nil {
		t.Errorf("Consume after the dead consumer: %v", err)
	}
}
