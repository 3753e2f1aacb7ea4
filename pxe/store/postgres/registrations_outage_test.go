package postgres_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/plasmactl/plasma-node/internal/pgtest"
	"github.com/plasmactl/plasma-node/pxe/registry"
	"github.com/plasmactl/plasma-node/pxe/store/postgres"
)

// TestAnOutageIsAClearFailure: with the database stopped, every call
// fails within the store's timeout with ErrUnavailable naming the store
// without its password, and Consume consumes nothing; once the database
// is back the same pool (no restart of the process) serves again, and
// the registration is still pending and consumed once.
func TestAnOutageIsAClearFailure(t *testing.T) {
	srv := pgtest.Start(t)
	ctx := context.Background()
	db, err := postgres.OpenDB(ctx, srv.NewDatabase(t), postgres.DBOptions{Timeout: 3 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	s := postgres.OpenRegistrations(db, nil)
	if _, err := s.Register(ctx, reg("node1", "52:54:00:00:03:01"), registry.RegisterOptions{}); err != nil {
		t.Fatal(err)
	}
	srv.Stop(t)
	calls := map[string]func() error{
		"Consume": func() error { _, err := s.Consume(ctx, "node1", registry.ConsumeRecord{}); return err },
		"Scan":    func() error { _, _, err := s.Scan(ctx); return err },
		"Get":     func() error { _, err := s.Get(ctx, "node1"); return err },
		"Register": func() error {
			_, err := s.Register(ctx, reg("node2", "52:54:00:00:03:02"), registry.RegisterOptions{})
			return err
		},
	}
	for name, call := range calls {
		start := time.Now()
		err := call()
		var ue *postgres.UnavailableError
		if !errors.Is(err, postgres.ErrUnavailable) || !errors.As(err, &ue) {
			t.Errorf("%s with the database stopped = %v, want ErrUnavailable", name, err)
			continue
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("%s took %v with the database stopped, want within the 3 s timeout", name, d)
		}
		if strings.Contains(err.Error(), pgtest.Password) || !strings.Contains(err.Error(), "127.0.0.1") {
			t.Errorf("%s: %q names the store with its password or not at all", name, err)
		}
	}
	srv.Restart(t)
	var pending []registry.Registration
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if pending, err = registry.Pending(ctx, s); err == nil {
			break
		}
	}
	if err != nil || len(pending) != 1 || pending[0].Name != "node1" {
		t.Fatalf("after the database came back: pending %v, %v; want node1 still pending", pending, err)
	}
	if _, err := s.Consume(ctx, "node1", registry.ConsumeRecord{}); err != nil {
		t.Errorf("Consume after the outage: %v", err)
	}
	if _, err := s.Consume(ctx, "node1", registry.ConsumeRecord{}); !errors.Is(err, registry.ErrAlreadyConsumed) {
		t.Errorf("a second Consume = %v, want ErrAlreadyConsumed", err)
	}
}
