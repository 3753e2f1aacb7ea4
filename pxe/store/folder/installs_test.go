package folder_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/plasmactl/plasma-node/internal/storetest"
	"github.com/plasmactl/plasma-node/pxe/registry"
	"github.com/plasmactl/plasma-node/pxe/registry/installtest"
	"github.com/plasmactl/plasma-node/pxe/store/folder"
)

func TestInstallsConformance(t *testing.T) {
	tb := t
	installtest.Run(t, installtest.Harness{
		New: func(t installtest.T) registry.Installs {
			s, err := folder.OpenInstalls(tb.TempDir())
			storetest.NoError(t, err, "open")
			return s
		},
		Reopen: func(t installtest.T, s registry.Installs) registry.Installs {
			r, err := folder.OpenInstalls(filepath.Dir(s.(*folder.Installs).Dir()))
			storetest.NoError(t, err, "reopen")
			return r
		},
	})
}

// TestReportFilesArePrivate: the folder is 0700 and each report 0600 (it
// names the node's address and MACs).
func TestReportFilesArePrivate(t *testing.T) {
	dir := t.TempDir()
	s, err := folder.OpenInstalls(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Put(context.Background(), installtest.Sample("pve1")); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]os.FileMode{filepath.Join(dir, "installs"): 0o700, filepath.Join(dir, "installs", "pve1.json"): 0o600} {
		st, err := os.Stat(path)
		if err != nil || st.Mode().Perm() != want {
			t.Errorf("%s: %v, %v; want mode %v", path, st.Mode().Perm(), err, want)
		}
	}
}

// TestAFileNotARegularFileIsAnError: a FIFO in a report's place is an
// error naming it, not a hang.
func TestAFileNotARegularFileIsAnError(t *testing.T) {
	dir := t.TempDir()
	s, err := folder.OpenInstalls(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := mkfifo(filepath.Join(dir, "installs", "pve1.json")); err != nil {
		t.Skip("no FIFO here:", err)
	}
	if _, err := s.Get(context.Background(), "pve1"); err == nil {
		t.Error("Get of a FIFO succeeded")
	}
}
