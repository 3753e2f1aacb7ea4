package sitewindow_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/plasmactl/plasma-node/pxe/sitewindow"
	"github.com/plasmactl/plasma-node/pxe/sitewindow/sitewindowtest"
)

// TestDirConformance runs the suite on the state folder's store.
func TestDirConformance(t *testing.T) {
	sitewindowtest.Run(t, sitewindowtest.Harness{
		New: func(t sitewindowtest.T) sitewindow.Store {
			return sitewindow.OpenDir(filepath.Join(t.TempDir(), "api"))
		},
	})
}

// TestDirRecordIsPrivateAndABadOneIsReplaced: the record is 0600; one
// that does not parse is an error naming its file, and an open replaces
// it.
func TestDirRecordIsPrivateAndABadOneIsReplaced(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "api")
	s := sitewindow.OpenDir(dir)
	if err := s.Open(t.Context(), sitewindow.Window{Opened: at(0), Deadline: at(3600e9)}); err != nil {
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
	if err := s.Open(t.Context(), sitewindow.Window{Opened: at(0), Deadline: at(3600e9)}); err != nil {
		t.Errorf("open over a bad record: %v", err)
	}
}
