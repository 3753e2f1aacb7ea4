package window_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/plasmactl/plasma-node/pxe/window"
)

// TestSiteDirRecordIsPrivateAndABadOneIsReplaced: the record is 0600; one
// that does not parse is an error naming its file, and an open replaces
// it.
func TestSiteDirRecordIsPrivateAndABadOneIsReplaced(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "api")
	s := window.OpenSiteDir(dir)
	if err := s.Open(t.Context(), window.Site{Opened: at(0), Deadline: at(3600e9)}); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(s.Path())
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("record: %v %v", fi, err)
	}
	os.WriteFile(s.Path(), []byte("{"), 0o600)
	if _, err := s.Read(t.Context()); err == nil {
		t.Fatal("a bad record read")
	}
	if err := s.Open(t.Context(), window.Site{Opened: at(0), Deadline: at(3600e9)}); err != nil {
		t.Errorf("open over a bad record: %v", err)
	}
}

func at(d time.Duration) time.Time { return time.Now().Add(d).UTC().Round(time.Millisecond) }
