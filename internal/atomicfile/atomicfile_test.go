package atomicfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
)

func TestWriteFileReplacesAndSetsMode(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f.yaml")
	if err := WriteFile(p, []byte("one\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(p, []byte("two\n"), 0o640); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(p)
	if err != nil || string(b) != "two\n" {
		t.Fatalf("content = %q, %v; want two", b, err)
	}
	st, _ := os.Stat(p)
	if st.Mode().Perm() != 0o640 {
		t.Errorf("mode = %v, want 0640", st.Mode().Perm())
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Errorf("folder holds %d entries, want only the file", len(ents))
	}
}

func TestWriteFileIntoMissingFolderLeavesNothing(t *testing.T) {
	p := filepath.Join(t.TempDir(), "missing", "f")
	if err := WriteFile(p, []byte("x"), 0o644); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("err = %v, want ErrNotExist", err)
	}
}

func TestCreateExclusiveHasOneWinner(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "node.yaml")
	var wins, exists atomic.Int32
	var wg sync.WaitGroup
	for range 50 {
		wg.Go(func() {
			err := CreateExclusive(p, []byte("x"), 0o644)
			switch {
			case err == nil:
				wins.Add(1)
			case errors.Is(err, fs.ErrExist):
				exists.Add(1)
			default:
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if wins.Load() != 1 || exists.Load() != 49 {
		t.Errorf("wins = %d, exists = %d; want 1 and 49", wins.Load(), exists.Load())
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Errorf("folder holds %d entries, want 1 (no temp files left)", len(ents))
	}
}

func TestCleanTempRemovesOnlyTempFiles(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{".tmp-a.yaml-123", "a.yaml", ".lock"} {
		os.WriteFile(filepath.Join(dir, n), nil, 0o644)
	}
	if err := CleanTemp(dir); err != nil {
		t.Fatal(err)
	}
	var got []string
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		got = append(got, e.Name())
	}
	if len(got) != 2 || got[0] != ".lock" || got[1] != "a.yaml" {
		t.Errorf("left %v, want [.lock a.yaml]", got)
	}
	if err := CleanTemp(filepath.Join(dir, "none")); err != nil {
		t.Errorf("CleanTemp of a missing folder: %v", err)
	}
}
