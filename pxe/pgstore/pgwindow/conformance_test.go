package pgwindow_test

import (
	"context"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/plasmactl/plasma-node/internal/pgtest"
	"github.com/plasmactl/plasma-node/pxe/pgstore"
	"github.com/plasmactl/plasma-node/pxe/pgstore/pgwindow"
	"github.com/plasmactl/plasma-node/pxe/window"
	"github.com/plasmactl/plasma-node/pxe/window/windowtest"
)

func open(t windowtest.T, conn string) (*pgstore.DB, *pgwindow.Store) {
	db, err := pgstore.Open(context.Background(), conn, pgstore.Options{})
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	if c, ok := t.(interface{ Cleanup(func()) }); ok {
		c.Cleanup(db.Close)
	}
	return db, pgwindow.Open(db)
}

// TestPostgresConformance runs the window state's suite on a real
// PostgreSQL, a database per check; Hold takes the lock as a window
// does.
func TestPostgresConformance(t *testing.T) {
	srv := pgtest.Start(t)
	windowtest.Run(t, windowtest.Harness{
		New: func(t windowtest.T) window.Store {
			_, s := open(t, srv.NewDatabase(t.(testing.TB)))
			return s
		},
		Hold: func(t windowtest.T, s window.Store, addr string) func() {
			l, err := s.(*pgwindow.Store).Lock(context.Background(), addr)
			if err != nil {
				t.Fatalf("lock: %v", err)
			}
			return func() { l.Unlock() }
		},
	})
	t.Run("OneWindowAcrossHosts", func(t *testing.T) { oneWindowAcrossHosts(t, srv) })
}

// oneWindowAcrossHosts: of two hosts (a pool each), the second's Lock
// is refused naming the first's window, which both read as the holder;
// once the first's session dies (its host killed), the lock is free and
// the second takes it.
func oneWindowAcrossHosts(t *testing.T, srv *pgtest.Server) {
	ctx := context.Background()
	conn := srv.NewDatabase(t)
	dbA, a := open(t, conn)
	_, b := open(t, conn)
	la, err := a.Lock(ctx, "10.0.0.1:8443")
	if err != nil {
		t.Fatal(err)
	}
	_, err = b.Lock(ctx, "10.0.0.2:8443")
	var held *window.HeldError
	if !errors.As(err, &held) || !errors.Is(err, window.ErrOpen) || held.HTTP != "10.0.0.1:8443" || held.PID != os.Getpid() {
		t.Fatalf("the second host's Lock = %v, want a HeldError naming 10.0.0.1:8443 and pid %d", err, os.Getpid())
	}
	if h, err := b.Holder(); err != nil || h == nil || h.HTTP != "10.0.0.1:8443" {
		t.Fatalf("the second host's Holder = %+v, %v; want the first's window", h, err)
	}
	if err := la.Relabel("10.0.0.1:9443"); err != nil {
		t.Fatal(err)
	}
	if h, err := b.Holder(); err != nil || h == nil || h.HTTP != "10.0.0.1:9443" {
		t.Fatalf("after Relabel the second host's Holder = %+v, %v; want 10.0.0.1:9443", h, err)
	}
	// The first host dies: the server ends its lock's session.
	if _, err := dbA.Pool.Exec(ctx, "SELECT pg_terminate_backend(backend_pid) FROM np_window_holder"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { h, err := b.Holder(); return err == nil && h == nil }, "the dead host's lock to read as none")
	lb, err := b.Lock(ctx, "10.0.0.2:8443")
	if err != nil {
		t.Fatalf("the second host's Lock after the first died: %v", err)
	}
	if h, err := a.Holder(); err != nil || h == nil || h.HTTP != "10.0.0.2:8443" {
		t.Errorf("the first host's Holder = %+v, %v; want the second's window", h, err)
	}
	if err := lb.Unlock(); err != nil {
		t.Fatal(err)
	}
	if h, err := a.Holder(); err != nil || h != nil {
		t.Errorf("after Unlock Holder = %+v, %v; want none", h, err)
	}
}

func waitFor(t *testing.T, ok func() bool, what string) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if ok() {
			return
		}
	}
	t.Fatalf("waited 5 s for %s", what)
}
