package discoveryfile_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/plasmactl/plasma-node/pxe/discovery"
	"github.com/plasmactl/plasma-node/pxe/discovery/discoveryfile"
	"github.com/plasmactl/plasma-node/pxe/discovery/discoverytest"
)

func TestFileStoreConformance(t *testing.T) {
	dirs := map[discovery.Store]string{}
	limits := map[discovery.Store]discovery.Limits{}
	open := func(t discoverytest.T, dir string, l discovery.Limits) discovery.Store {
		s, err := discoveryfile.Open(dir, l)
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
		dirs[s], limits[s] = dir, l
		return s
	}
	discoverytest.Run(t, discoverytest.Harness{
		New: func(st discoverytest.T, l discovery.Limits) discovery.Store {
			return open(st, t.TempDir(), l)
		},
		Reopen: func(st discoverytest.T, s discovery.Store) discovery.Store {
			return open(st, dirs[s], limits[s])
		},
	})
}

func TestTheFileIsPrivateAndAFailedPutWritesNothing(t *testing.T) {
	dir := t.TempDir()
	s, err := discoveryfile.Open(dir, discovery.Limits{Max: 1})
	if err != nil {
		t.Fatal(err)
	}
	ctx, now := context.Background(), time.Now()
	if _, err := s.Put(ctx, discoverytest.Report("52:54:00:00:00:01", "S1", "D1"), now); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, discoveryfile.FileName)
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("%s has mode %v, want 0600", discoveryfile.FileName, st.Mode().Perm())
	}
	before, _ := os.ReadFile(path)
	if _, err := s.Put(ctx, discoverytest.Report("52:54:00:00:00:02", "S2", "D2"), now); err == nil {
		t.Fatal("a second machine in an inbox of one was kept")
	}
	after, _ := os.ReadFile(path)
	if string(before) != string(after) {
		t.Error("a refused Put changed the file")
	}
}

func TestOpenRefusesAMissingFolder(t *testing.T) {
	if _, err := discoveryfile.Open(filepath.Join(t.TempDir(), "missing"), discovery.Limits{}); err == nil {
		t.Error("Open of a missing folder succeeded")
	}
}
