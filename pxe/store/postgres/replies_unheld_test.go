package postgres_test

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/plasmactl/plasma-node/internal/pgtest"
	"github.com/plasmactl/plasma-node/pxe/store/postgres"
)

// TestALockNotTakenFailsItsGet: with every lock slot held (a pool of 4
// gives one) past the store's timeout, Lock returns without the
// cross-host lock while the database answers; the Get that follows must
// fail (503, the store unavailable), not find no record and let the
// request run while another host may run the same key. Once unlocked,
// the key locks and reads again.
func TestALockNotTakenFailsItsGet(t *testing.T) {
	ctx := t.Context()
	srv := pgtest.Start(t)
	db, err := postgres.OpenDB(context.Background(), srv.NewDatabase(t), postgres.DBOptions{MaxConns: 4, Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	s := postgres.OpenReplies(db)
	a, b := keysOfTwoBuckets()
	unlockA := s.Lock(ctx, a)
	unlockB := s.Lock(ctx, b) // waits the store's timeout for a slot
	if r, err := s.Get(ctx, b); !errors.Is(err, postgres.ErrUnavailable) {
		t.Errorf("Get of a key whose lock was not taken: %v, %v; want an error of the store unavailable", r, err)
	}
	unlockB()
	unlockA()
	unlockB = s.Lock(ctx, b)
	defer unlockB()
	if r, err := s.Get(ctx, b); err != nil || r != nil {
		t.Errorf("Get after the lock was taken: %v, %v; want no record", r, err)
	}
}

// keysOfTwoBuckets returns two keys that do not share the store's
// per-host mutex (the first byte of their hashes differs mod 64).
func keysOfTwoBuckets() (string, string) {
	a := "key-a"
	ha := sha256.Sum256([]byte(a))
	for i := 0; ; i++ {
		b := fmt.Sprint("key-b", i)
		if hb := sha256.Sum256([]byte(b)); hb[0]%64 != ha[0]%64 {
			return a, b
		}
	}
}
