package idempotencytest_test

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/plasmactl/plasma-node/internal/storetest"
	"github.com/plasmactl/plasma-node/pxe/idempotency"
	"github.com/plasmactl/plasma-node/pxe/idempotency/idempotencytest"
	"github.com/plasmactl/plasma-node/pxe/store/folder"
)

// fileHarness runs the suite on folder.OpenReplies in temporary folders;
// wrap, when set, puts a fault in front of each store.
func fileHarness(tb testing.TB, wrap func(idempotency.Store) idempotency.Store) idempotencytest.Harness {
	var mu sync.Mutex
	dirs := map[idempotency.Store]string{}
	open := func(t idempotencytest.T, dir string) idempotency.Store {
		s, err := folder.OpenReplies(dir, nil)
		if err != nil {
			t.Fatalf("open: %v", err)
		}
		if wrap != nil {
			s = wrap(s)
		}
		mu.Lock()
		dirs[s] = dir
		mu.Unlock()
		return s
	}
	return idempotencytest.Harness{
		New: func(t idempotencytest.T) idempotency.Store { return open(t, filepath.Join(tb.TempDir(), "api")) },
		Reopen: func(t idempotencytest.T, s idempotency.Store) idempotency.Store {
			mu.Lock()
			dir := dirs[s]
			mu.Unlock()
			return open(t, dir)
		},
	}
}

func TestDirConformance(t *testing.T) {
	idempotencytest.Run(t, fileHarness(t, nil))
}

// broken wraps the replies folder with one fault.
type broken struct {
	idempotency.Store
	fault string
}

func (b *broken) Lock(ctx context.Context, key string) func() {
	if b.fault == "no lock" {
		return func() {}
	}
	return b.Store.Lock(ctx, key)
}

func (b *broken) Get(ctx context.Context, key string) (*idempotency.Reply, error) {
	switch b.fault {
	case "forgets":
		return nil, nil
	case "one key":
		key = "k"
	case "never expires":
		r, err := b.Store.Get(ctx, key+"#kept")
		if r != nil || err != nil {
			return r, err
		}
	}
	return b.Store.Get(ctx, key)
}

func (b *broken) Put(ctx context.Context, key string, r idempotency.Reply) error {
	switch b.fault {
	case "one key":
		key = "k"
	case "cuts bodies":
		if len(r.Body) > 1024 {
			r.Body = r.Body[:1024]
		}
	case "loses the request":
		r.Request = "last"
	case "never expires":
		r2 := r
		r2.Time = time.Now().UTC()
		if err := b.Store.Put(ctx, key+"#kept", r2); err != nil {
			return err
		}
	}
	return b.Store.Put(ctx, key, r)
}

// TestTheSuiteFailsABrokenStore feeds the suite a replies folder with
// one fault at a time: each is found by the check named.
func TestTheSuiteFailsABrokenStore(t *testing.T) {
	for _, tc := range []struct{ fault, check string }{
		{"forgets", "ReplayGetsTheSameReply"},
		{"forgets", "AnotherBodyIsRefused"},
		{"loses the request", "AnotherBodyIsRefused"},
		{"one key", "KeysApart"},
		{"cuts bodies", "ReplayGetsTheSameReply"},
		{"never expires", "PastItsDay"},
		{"no lock", "RacingRequests"},
	} {
		t.Run(tc.fault+"/"+tc.check, func(t *testing.T) {
			h := fileHarness(t, func(s idempotency.Store) idempotency.Store { return &broken{Store: s, fault: tc.fault} })
			storetest.Rejects(t, h, idempotencytest.Checks(), tc.check)
		})
	}
}
