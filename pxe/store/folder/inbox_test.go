package folder_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/plasmactl/plasma-node/pxe/discovery"
	"github.com/plasmactl/plasma-node/pxe/discovery/discoverytest"
	"github.com/plasmactl/plasma-node/pxe/store/folder"
)

func TestInboxConformance(t *testing.T) {
	dirs := map[discovery.Store]string{}
	limits := map[discovery.Store]discovery.Limits{}
	open := func(t discoverytest.T, dir string, l discovery.Limits) discovery.Store {
		s, err := folder.OpenInbox(dir, l)
		if err != nil {
			t.Fatalf("OpenInbox: %v", err)
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
	s, err := folder.OpenInbox(dir, discovery.Limits{Max: 1})
	if err != nil {
		t.Fatal(err)
	}
	ctx, now := context.Background(), time.Now()
	if _, err := s.Put(ctx, discoverytest.Report("52:54:00:00:00:01", "S1", "D1"), now); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, folder.InboxFile)
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("%s has mode %v, want 0600", folder.InboxFile, st.Mode().Perm())
	}
	before, _ := os.ReadFile(path)
	if _, err := s.Put(ctx, discoverytest.Report("52:54:00:00:00:02", "S2", "D2"), now); err == nil {
		t.Fatal("a second machine in an inbox of one was kept")
	}
	after, _ := os.ReadFile(path)
	if string(before) != string(after) {
		t.Error("a refused Put changed the inboxFile")
	}
}

func TestOpenRefusesAMissingFolder(t *testing.T) {
	if _, err := folder.OpenInbox(filepath.Join(t.TempDir(), "missing"), discovery.Limits{}); err == nil {
		t.Error("OpenInbox of a missing folder succeeded")
	}
}
