package atomicfile

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// TempPrefix starts the name of every temporary file this package creates.
// A temporary file left by a killed writer can be recognised by it and
// removed with [CleanTemp].
const TempPrefix = ".tmp-"

// WriteFile writes data to a temporary file in the folder of name, syncs it
// to disk, gives it mode perm and renames it over name, then syncs the
// folder. On any error the temporary file is removed and name is untouched.
func WriteFile(name string, data []byte, perm os.FileMode) error {
	st, err := Stage(name, data, perm)
	if err != nil {
		return err
	}
	return st.Commit()
}

// Staged is a file written and synced under a temporary name in the
// folder of its final name, not yet in place: [Staged.Commit] renames it
// there, [Staged.Discard] removes it. It lets a caller do every write
// that can fail before a step it cannot take back, and the cheap rename
// after.
type Staged struct {
	name, tmp string
}

// Stage writes data as a [Staged] file for name with mode perm. A killed
// process leaves it as a temporary file that [CleanTemp] removes.
func Stage(name string, data []byte, perm os.FileMode) (_ *Staged, err error) {
	dir, base := filepath.Split(name)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, TempPrefix+base+"-*")
	if err != nil {
		return nil, fmt.Errorf("write %s: %w", name, err)
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if err = f.Chmod(perm); err != nil {
		return nil, fmt.Errorf("write %s: %w", name, err)
	}
	if _, err = f.Write(data); err != nil {
		return nil, fmt.Errorf("write %s: %w", name, err)
	}
	if err = f.Sync(); err != nil {
		return nil, fmt.Errorf("write %s: sync: %w", name, err)
	}
	if err = f.Close(); err != nil {
		return nil, fmt.Errorf("write %s: %w", name, err)
	}
	return &Staged{name: name, tmp: tmp}, nil
}

// Commit renames the staged file over its name and syncs the folder. On
// error the staged file is removed.
func (s *Staged) Commit() error {
	if err := s.Place(); err != nil {
		return err
	}
	return SyncDir(filepath.Dir(s.name))
}

// Place renames the staged file over its name without syncing the
// folder: the caller syncs it ([SyncDir]) before anything relies on the
// rename having reached the disk, and may do so after releasing a lock,
// so that waiters share one journal commit. On error the staged file is
// removed.
func (s *Staged) Place() error {
	if err := os.Rename(s.tmp, s.name); err != nil {
		os.Remove(s.tmp)
		return fmt.Errorf("write %s: %w", s.name, err)
	}
	return nil
}

// Discard removes the staged file; name is untouched.
func (s *Staged) Discard() { os.Remove(s.tmp) }

// CreateExclusive writes data to name like [WriteFile], but fails with an
// error matching [os.ErrExist] when name already exists. It links the
// synced temporary file into place, so a concurrent creator cannot be
// overwritten.
func CreateExclusive(name string, data []byte, perm os.FileMode) (err error) {
	dir, base := filepath.Split(name)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, TempPrefix+base+"-*")
	if err != nil {
		return fmt.Errorf("create %s: %w", name, err)
	}
	tmp := f.Name()
	defer os.Remove(tmp)
	defer f.Close()
	if err = f.Chmod(perm); err != nil {
		return fmt.Errorf("create %s: %w", name, err)
	}
	if _, err = f.Write(data); err != nil {
		return fmt.Errorf("create %s: %w", name, err)
	}
	if err = f.Sync(); err != nil {
		return fmt.Errorf("create %s: sync: %w", name, err)
	}
	if err = os.Link(tmp, name); err != nil {
		return fmt.Errorf("create %s: %w", name, err)
	}
	return SyncDir(dir)
}

// SyncDir flushes a folder's entries (a rename or a new file) to disk.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, os.ErrInvalid) {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	return nil
}

// IsTemp reports whether a file name (not a path) is one of this package's
// temporary files.
func IsTemp(base string) bool { return strings.HasPrefix(base, TempPrefix) }

// ErrNotWritable is wrapped by [Probe]'s error for a folder a file cannot
// be written to (read-only, full, no permission).
var ErrNotWritable = errors.New("not writable")

// Probe proves that a file can be written into dir; its error wraps
// [ErrNotWritable] and the cause.
func Probe(dir string) error {
	st, err := Stage(filepath.Join(dir, ".probe"), []byte("probe\n"), 0o600)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrNotWritable, err)
	}
	st.Discard()
	return nil
}

// CleanTemp removes the temporary files a killed writer left in dir. It
// must only run while the caller holds the lock that guards dir's writers.
func CleanTemp(dir string) error {
	ents, err := os.ReadDir(dir)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		return fmt.Errorf("clean %s: %w", dir, err)
	}
	for _, e := range ents {
		if IsTemp(e.Name()) {
			if err := os.Remove(filepath.Join(dir, e.Name())); err != nil && !errors.Is(err, os.ErrNotExist) {
				return fmt.Errorf("clean %s: %w", dir, err)
			}
		}
	}
	return nil
}
