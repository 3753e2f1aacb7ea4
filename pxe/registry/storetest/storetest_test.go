package storetest_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	suite "github.com/plasmactl/plasma-node/internal/storetest"
	"github.com/plasmactl/plasma-node/pxe/registry"
	"github.com/plasmactl/plasma-node/pxe/registry/storetest"
	"github.com/plasmactl/plasma-node/pxe/store/folder"
)

// broken wraps the file store with one fault.
type broken struct {
	*folder.Registrations
	fault string
	calls atomic.Int64
}

func (b *broken) Consume(ctx context.Context, name string, rec registry.ConsumeRecord) (registry.Registration, error) {
	r, err := b.Registrations.Consume(ctx, name, rec)
	if b.fault == "consumes twice" && errors.Is(err, registry.ErrAlreadyConsumed) {
		return registry.Registration{Name: name}, nil
	}
	return r, err
}

func (b *broken) Register(ctx context.Context, r registry.Registration, opts registry.RegisterOptions) (registry.RegisterResult, error) {
	switch b.fault {
	case "steals pins":
		opts.Replace = true
	case "loses registers":
		if b.calls.Add(1)%7 == 0 {
			return registry.RegisterResult{}, nil
		}
	case "no size bound":
		if len(r.SSHKeys) > 1000 {
			r.SSHKeys = r.SSHKeys[:1000]
		}
	}
	return b.Registrations.Register(ctx, r, opts)
}

func (b *broken) Rearm(ctx context.Context, name string, o registry.RearmOptions) error {
	o.Force = o.Force || b.fault == "re-arms delivered"
	if b.fault == "keeps no wipe-data" {
		o.WipeData = false
	}
	return b.Registrations.Rearm(ctx, name, o)
}

func (b *broken) MarkDelivered(ctx context.Context, name string) error {
	if b.fault == "forgets delivery" {
		return nil
	}
	return b.Registrations.MarkDelivered(ctx, name)
}

func harness(tb testing.TB, fault string) storetest.Harness {
	return storetest.Harness{
		New: func(t storetest.T) registry.Registrations {
			s, err := folder.OpenRegistrations(tb.TempDir(), nil)
			if err != nil {
				t.Fatalf("open: %v", err)
			}
			return &broken{Registrations: s, fault: fault}
		},
		Reopen: func(t storetest.T, s registry.Registrations) registry.Registrations {
			dir := filepath.Dir(s.(*broken).Dir())
			if fault == "forgets on restart" {
				dir = tb.TempDir()
			}
			s2, err := folder.OpenRegistrations(dir, nil)
			if err != nil {
				t.Fatalf("reopen: %v", err)
			}
			return &broken{Registrations: s2, fault: fault}
		},
	}
}

// TestSuiteFailsBrokenStores feeds the suite stores with one fault each
// and checks that the check of that fault fails, and that the same store
// without the fault passes it.
func TestSuiteFailsBrokenStores(t *testing.T) {
	suite.RejectsFaults(t, storetest.Checks(), [][2]string{
		{"consumes twice", "ConsumeOnce"},
		{"steals pins", "PinConflicts"},
		{"steals pins", "RacingPinConflicts"},
		{"loses registers", "ConcurrentRegisters"},
		{"re-arms delivered", "UndeliveredAndRearm"},
		{"forgets delivery", "UndeliveredAndRearm"},
		{"keeps no wipe-data", "UndeliveredAndRearm"},
		{"no size bound", "SizeBounds"},
		{"forgets on restart", "CrashBeforeClaim"},
	}, func(t *testing.T, fault string) storetest.Harness { return harness(t, fault) })
}

// TestREADMEShowsTheSuiteAsRun keeps the example of an embedder's store
// (docs/sdk.md, "Bringing your own store") running the suite the very
// test that runs it.
func TestREADMEShowsTheSuiteAsRun(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "..", "docs", "sdk.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(readme), "## Bringing your own store")
	_, block, ok2 := strings.Cut(section, "```go\n")
	snippet, _, ok3 := strings.Cut(block, "```")
	if !ok || !ok2 || !ok3 {
		t.Fatal("docs/sdk.md has no Go block under \"## Bringing your own store\"")
	}
	src, err := os.ReadFile("memstore_test.go")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(src), snippet) {
		t.Errorf("docs/sdk.md's example is not memstore_test.go's test:\n%s", snippet)
	}
}
