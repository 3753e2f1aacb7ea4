package folder_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/plasmactl/plasma-node/pxe/store/folder"
	"github.com/plasmactl/plasma-node/pxe/window"
)

// TestSiteWindowRecordIsPrivateAndABadOneIsReplaced: the record is 0600; one
// that does not parse is an error naming its file, and an open replaces
// it.
func TestSiteWindowRecordIsPrivateAndABadOneIsReplaced(t *testing.T) {
	state := t.TempDir()
	s := folder.OpenSiteWindow(state)
	path := filepath.Join(state, "api", window.FileName)
	if err := s.Open(t.Context(), window.Site{Opened: at(0), Deadline: at(3600e9)}); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("record: %v %v", fi, err)
	}
	os.WriteFile(path, []byte("{"), 0o600)
	if _, err := s.Read(t.Context()); err == nil {
		t.Fatal("a bad record read")
	}
	if err := s.Open(t.Context(), window.Site{Opened: at(0), Deadline: at(3600e9)}); err != nil {
		t.Errorf("open over a bad record: %v", err)
	}
}

func at(d time.Duration) time.Time { return time.Now().Add(d).UTC().Round(time.Millisecond) }
