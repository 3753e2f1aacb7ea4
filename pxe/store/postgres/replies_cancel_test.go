package postgres_test

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/plasmactl/plasma-node/internal/pgtest"
	"github.com/plasmactl/plasma-node/pxe/store/postgres"
)

// TestACancelledLockEndsItsWait: a Lock waiting for the cross-host lock
// another host holds returns promptly once its request's context is
// cancelled, and the database stops waiting for it (pg_stat_activity no
// longer shows pg_advisory_lock active), well before the store's own
// timeout; the key's Get then fails with the cancellation rather than
// let the request run unserialised.
func TestACancelledLockEndsItsWait(t *testing.T) {
	const (
		timeout = 30 * time.Second
		prompt  = 3 * time.Second
		wait    = "SELECT pg_advisory_lock"
	)
	ctx := t.Context()
	srv := pgtest.Start(t)
	conn := srv.NewDatabase(t)
	db, err := postgres.OpenDB(ctx, conn, postgres.DBOptions{Timeout: timeout})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	s := postgres.OpenReplies(db)
	other, err := pgx.Connect(ctx, conn)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close(context.Background())
	h := sha256.Sum256([]byte("key-1"))
	if _, err := other.Exec(ctx, "SELECT pg_advisory_lock($1, $2)", int32(0x6e70), int32(binary.BigEndian.Uint32(h[:4]))); err != nil {
		t.Fatal(err)
	}

	call, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan func(), 1)
	go func() { done <- s.Lock(call, "key-1") }()
	srv.WaitRunning(t, wait, 1, prompt)
	cancel()
	cancelled := time.Now()
	var unlock func()
	select {
	case unlock = <-done:
		t.Logf("the cancelled Lock returned %v after the cancel", time.Since(cancelled))
	case <-time.After(prompt):
		t.Fatalf("the cancelled Lock has not returned %v after the cancel", prompt)
	}
	defer unlock()
	srv.WaitRunning(t, wait, 0, prompt)
	t.Logf("the database stopped waiting %v after the cancel", time.Since(cancelled))
	if r, err := s.Get(ctx, "key-1"); !errors.Is(err, context.Canceled) {
		t.Errorf("Get of the key whose Lock was cancelled = %v, %v; want an error wrapping context.Canceled", r, err)
	}
}
