package windowtest_test

import (
	"context"
	"testing"
	"time"

	"github.com/plasmactl/plasma-node/internal/storetest"
	"github.com/plasmactl/plasma-node/pxe/store/folder"
	"github.com/plasmactl/plasma-node/pxe/window"
	"github.com/plasmactl/plasma-node/pxe/window/windowtest"
)

// brokenSite is the state folder's site window with one fault.
type brokenSite struct {
	*folder.SiteWindow
	fault string
}

func (b brokenSite) Read(ctx context.Context) (*window.Site, error) {
	w, err := b.SiteWindow.Read(ctx)
	switch {
	case w != nil && b.fault == "drops the secure boot":
		w.SecureBoot = false
	case w == nil && err == nil && b.fault == "reads none as an empty window":
		w = &window.Site{}
	}
	return w, err
}

func (b brokenSite) Open(ctx context.Context, w window.Site) error {
	switch b.fault {
	case "opens over an open window":
		b.SiteWindow.Close(ctx)
	case "keeps a passed window":
		if cur, err := b.SiteWindow.Read(ctx); err == nil && cur != nil {
			return &window.OpenError{Current: *cur}
		}
	}
	return b.SiteWindow.Open(ctx, w)
}

func (b brokenSite) Close(ctx context.Context) (bool, error) {
	open, err := b.SiteWindow.Close(ctx)
	if b.fault == "closes saying none was open" {
		open = false
	}
	return open, err
}

func (b brokenSite) End(ctx context.Context, w window.Site) error {
	if b.fault == "ends any window" {
		_, err := b.SiteWindow.Close(ctx)
		return err
	}
	return b.SiteWindow.End(ctx, w)
}

func (b brokenSite) Hosts(ctx context.Context, since time.Time) ([]window.Host, error) {
	if b.fault == "lists hosts not seen lately" {
		since = time.Time{}
	}
	return b.SiteWindow.Hosts(ctx, since)
}

func (b brokenSite) Changes(ctx context.Context) <-chan struct{} {
	if b.fault == "signals no change" {
		return make(chan struct{})
	}
	return b.SiteWindow.Changes(ctx)
}

func siteHarness(fault string) windowtest.Harness {
	return windowtest.Harness{NewSite: func(t windowtest.T) window.SiteStore {
		return brokenSite{SiteWindow: folder.OpenSiteWindow(t.TempDir()), fault: fault}
	}}
}

// TestAWorkingSiteStorePassesOnARecorder: the folder's store, behind the
// wrapper with no fault, passes every check on a Recorder too.
func TestAWorkingSiteStorePassesOnARecorder(t *testing.T) {
	for _, c := range windowtest.Checks() {
		if c.Name == "ChangesAreSignalled" {
			continue // slow: the folder's signal is checked by TestDirConformance
		}
		if f := storetest.Failures(siteHarness(""), c); len(f) > 0 {
			t.Errorf("%s failed the folder's store: %v", c.Name, f)
		}
	}
}

// TestTheSuiteFailsABrokenSiteStore feeds the suite the folder's site window with
// one fault at a time: each is found by the check named.
func TestTheSuiteFailsABrokenSiteStore(t *testing.T) {
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
			storetest.Rejects(t, siteHarness(tc.fault), windowtest.Checks(), tc.check)
		})
	}
}
