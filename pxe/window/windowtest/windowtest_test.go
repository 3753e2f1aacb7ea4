package windowtest_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"

	"github.com/plasmactl/plasma-node/internal/storetest"
	"github.com/plasmactl/plasma-node/pxe/store/folder"
	"github.com/plasmactl/plasma-node/pxe/window"
	"github.com/plasmactl/plasma-node/pxe/window/windowtest"
)

// dirHarness runs the host's checks on folder.Window in temporary state
// folders; wrap, when set, puts a fault in front of each.
func dirHarness(tb testing.TB, wrap func(folder.Window) window.Store) windowtest.Harness {
	var mu sync.Mutex
	dirs := map[window.Store]folder.Window{}
	return windowtest.Harness{
		New: func(t windowtest.T) window.Store {
			d := folder.Window(tb.TempDir())
			var s window.Store = d
			if wrap != nil {
				s = wrap(d)
			}
			mu.Lock()
			dirs[s] = d
			mu.Unlock()
			return s
		},
		Hold: func(t windowtest.T, s window.Store, addr string) func() {
			mu.Lock()
			d := dirs[s]
			mu.Unlock()
			l, err := window.Lock(string(d), addr)
			if err != nil {
				t.Fatalf("lock: %v", err)
			}
			return func() { l.Unlock() }
		},
	}
}

// TestDirConformance runs the suite on the state folder's stores.
func TestDirConformance(t *testing.T) {
	h := dirHarness(t, nil)
	h.NewSite = func(t windowtest.T) window.SiteStore { return folder.OpenSiteWindow(t.TempDir()) }
	windowtest.Run(t, h)
}

// broken wraps the state folder's window with one fault.
type broken struct {
	folder.Window
	fault string
}

func (b broken) Read(ctx context.Context) (*window.Record, error) {
	r, err := b.Window.Read(ctx)
	if b.fault == "none is no error" && errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return r, err
}

func (b broken) Write(ctx context.Context, w *window.Record) error {
	switch b.fault {
	case "drops the deadline":
		c := *w
		c.Deadline = c.Started
		w = &c
	case "writes part of a record in place":
		path := filepath.Join(string(b.Window), window.FileName)
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
		if err != nil {
			return err
		}
		defer f.Close()
		fmt.Fprintf(f, `{"pid": %d, `, w.PID)
		runtime.Gosched()
		fmt.Fprintf(f, `"http": %q, "started": %q}`, w.HTTP, w.Started.Format("2006-01-02T15:04:05.999999999Z07:00"))
		return nil
	}
	return b.Window.Write(ctx, w)
}

func (b broken) Remove(ctx context.Context, pid int) error {
	switch b.fault {
	case "remove keeps":
		return nil
	case "remove ignores the pid":
		if w, err := b.Window.Read(ctx); err == nil {
			pid = w.PID
		}
	}
	return b.Window.Remove(ctx, pid)
}

func (b broken) Holder(ctx context.Context) (*window.HeldError, error) {
	if b.fault == "no holder" {
		return nil, nil
	}
	return b.Window.Holder(ctx)
}

// TestTheSuiteFailsABrokenHostStore feeds the suite a state folder's window
// with one fault at a time: each is found by the check named.
func TestTheSuiteFailsABrokenHostStore(t *testing.T) {
	for _, tc := range []struct{ fault, check string }{
		{"none is no error", "NoneReadsAsNone"},
		{"none is no error", "RemovedReadsAsNone"},
		{"drops the deadline", "RoundTrip"},
		{"remove keeps", "RemovedReadsAsNone"},
		{"remove ignores the pid", "NewerWindowKept"},
		{"writes part of a record in place", "ConcurrentWriters"},
		{"no holder", "Holder"},
	} {
		t.Run(tc.fault+"/"+tc.check, func(t *testing.T) {
			h := dirHarness(t, func(d folder.Window) window.Store { return broken{Window: d, fault: tc.fault} })
			storetest.Rejects(t, h, windowtest.Checks(), tc.check)
		})
	}
}
