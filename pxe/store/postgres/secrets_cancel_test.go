package postgres

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/plasmactl/plasma-node/internal/pgtest"
)

// TestACancelledCallEndsItsStatement: a write blocked in the database
// (another connection holds its row locked) returns context.Canceled
// promptly once its caller's context is cancelled, and the database
// stops running its statement (pg_stat_activity no longer shows it
// active), well before the store's own timeout. A store that made its
// own context kept waiting for the lock.
func TestACancelledCallEndsItsStatement(t *testing.T) {
	const (
		timeout = 30 * time.Second // the store's own bound: far off
		prompt  = 3 * time.Second  // a cancelled call ends within it
		write   = "INSERT INTO np_secrets"
	)
	ctx := t.Context()
	srv := pgtest.Start(t)
	conn := srv.NewDatabase(t)
	db, err := OpenDB(ctx, conn, DBOptions{Timeout: timeout})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	s, err := OpenSecrets(ctx, db, filepath.Join(t.TempDir(), "store.key"), SecretsOptions{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.WriteBMCPassword(ctx, "node1", "first-Pa55"); err != nil {
		t.Fatal(err)
	}
	locker, err := pgx.Connect(ctx, conn)
	if err != nil {
		t.Fatal(err)
	}
	defer locker.Close(context.Background())
	tx, err := locker.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(context.Background())
	if _, err := tx.Exec(ctx, "SELECT 1 FROM np_secrets WHERE kind = 'bmc' AND name = 'node1' FOR UPDATE"); err != nil {
		t.Fatal(err)
	}

	call, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := s.WriteBMCPassword(call, "node1", "second-Pa55")
		done <- err
	}()
	srv.WaitRunning(t, write, 1, prompt) // the write waits for the row
	cancel()
	cancelled := time.Now()
	select {
	case err := <-done:
		took := time.Since(cancelled)
		if !errors.Is(err, context.Canceled) {
			t.Errorf("the cancelled write = %v, want an error wrapping context.Canceled", err)
		}
		if took > prompt {
			t.Errorf("the cancelled write returned after %v, want within %v", took, prompt)
		}
		t.Logf("the cancelled write returned %v after the cancel", took)
	case <-time.After(prompt):
		t.Fatalf("the cancelled write has not returned %v after the cancel", prompt)
	}
	gone := srv.WaitRunning(t, write, 0, prompt)
	t.Logf("the database stopped the statement %v after the cancel (%v after the call returned)", time.Since(cancelled), gone)

	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if pw, err := s.ReadBMCPassword(ctx, "node1"); err != nil || pw != "first-Pa55" {
		t.Errorf("after the cancelled write ReadBMCPassword = %q, %v; want the first password", pw, err)
	}
}
