package sitewindowtest_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/plasmactl/plasma-node/internal/storetest"
	"github.com/plasmactl/plasma-node/pxe/sitewindow"
	"github.com/plasmactl/plasma-node/pxe/sitewindow/sitewindowtest"
)

// broken is the state folder's store with one fault.
type broken struct {
	*sitewindow.Dir
	fault string
}

func (b broken) Read(ctx context.Context) (*sitewindow.Window, error) {
	w, err := b.Dir.Read(ctx)
	switch {
	case w != nil && b.fault == "drops the secure boot":
		w.SecureBoot = false
	case w == nil && err == nil && b.fault == "reads none as an empty window":
		w = &sitewindow.Window{}
	}
	return w, err
}

func (b broken) Open(ctx context.Context, w sitewindow.Window) error {
	switch b.fault {
	case "opens over an open window":
		b.Dir.Close(ctx)
	case "keeps a passed window":
		if cur, err := b.Dir.Read(ctx); err == nil && cur != nil {
			return &sitewindow.OpenError{Current: *cur}
		}
	}
	return b.Dir.Open(ctx, w)
}

func (b broken) Close(ctx context.Context) (bool, error) {
	open, err := b.Dir.Close(ctx)
	if b.fault == "closes saying none was open" {
		open = false
	}
	return open, err
}

func (b broken) End(ctx context.Context, w sitewindow.Window) error {
	if b.fault == "ends any window" {
		_, err := b.Dir.Close(ctx)
		return err
	}
	return b.Dir.End(ctx, w)
}

func (b broken) Hosts(ctx context.Context, since time.Time) ([]sitewindow.Host, error) {
	if b.fault == "lists hosts not seen lately" {
		since = time.Time{}
	}
	return b.Dir.Hosts(ctx, since)
}

func (b broken) Changes(ctx context.Context) <-chan struct{} {
	if b.fault == "signals no change" {
		return make(chan struct{})
	}
	return b.Dir.Changes(ctx)
}

func harness(fault string) sitewindowtest.Harness {
	return sitewindowtest.Harness{New: func(t sitewindowtest.T) sitewindow.Store {
		return broken{Dir: sitewindow.OpenDir(filepath.Join(t.TempDir(), "api")), fault: fault}
	}}
}

// TestAWorkingStorePassesOnARecorder: the folder's store, behind the
// wrapper with no fault, passes every check on a Recorder too.
func TestAWorkingStorePassesOnARecorder(t *testing.T) {
	for _, c := range sitewindowtest.Checks() {
		if c.Name == "ChangesAreSignalled" {
			continue // slow: the folder's signal is checked by TestDirConformance
		}
		if f := storetest.Failures(harness(""), c); len(f) > 0 {
			t.Errorf("%s failed the folder's store: %v", c.Name, f)
		}
	}
}

// TestTheSuiteFailsABrokenStore feeds the suite the folder's store with
// one fault at a time: each is found by the check named.
func TestTheSuiteFailsABrokenStore(t *testing.T) {
	for _, tc := range []struct{ fault, check string }{
		{"reads none as an empty window", "NoneIsNil"},
		{"drops the secure boot", "OpenIsReadBack"},
		{"opens over an open window", "SecondOpenIsRefusedNamingTheFirst"},
		{"keeps a passed window", "APassedWindowIsReplaced"},
		{"closes saying none was open", "CloseRemoves"},
		{"ends any window", "EndRemovesItsOwnOnly"},
		{"lists hosts not seen lately", "HostsSeenSince"},
		{"signals no change", "ChangesAreSignalled"},
	} {
		t.Run(tc.fault+"/"+tc.check, func(t *testing.T) {
			t.Parallel()
			storetest.Rejects(t, harness(tc.fault), sitewindowtest.Checks(), tc.check)
		})
	}
}
