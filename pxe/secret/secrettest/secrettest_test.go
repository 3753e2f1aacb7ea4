package secrettest_test

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/plasmactl/plasma-node/internal/storetest"
	"github.com/plasmactl/plasma-node/pxe/secret"
	"github.com/plasmactl/plasma-node/pxe/secret/secrettest"
	"github.com/plasmactl/plasma-node/pxe/store/folder"
)

// folderHarness runs the suite on folder.Secrets in temporary folders.
func folderHarness(tb testing.TB, wrap func(*folder.Secrets) secret.Store) secrettest.NodeHarness {
	return inFolders(func(t secrettest.T) (secret.Store, string) {
		f, err := folder.OpenSecrets(filepath.Join(tb.TempDir(), "secrets"))
		if err != nil {
			t.Fatalf("open: %v", err)
		}
		if wrap != nil {
			return wrap(f), f.Dir()
		}
		return f, f.Dir()
	})
}

// inFolders is a harness of stores that keep their secrets in a folder:
// open returns a new store and its folder, whose files are what it
// keeps.
func inFolders[S comparable](open func(t secrettest.T) (S, string)) secrettest.Harness[S] {
	dirs := map[S]string{}
	var mu sync.Mutex
	return secrettest.Harness[S]{
		New: func(t secrettest.T) S {
			s, dir := open(t)
			mu.Lock()
			dirs[s] = dir
			mu.Unlock()
			return s
		},
		Kept: func(t secrettest.T, s S) []secrettest.Kept {
			mu.Lock()
			dir := dirs[s]
			mu.Unlock()
			if _, err := os.Stat(dir); err != nil {
				return nil
			}
			return keptIn(t, dir)
		},
	}
}

// keptIn returns the files of dir as Kept, each with its folder's group
// and others bits.
func keptIn(t secrettest.T, dir string) []secrettest.Kept {
	di, err := os.Stat(dir)
	if err != nil {
		t.Fatalf("kept: %v", err)
	}
	var out []secrettest.Kept
	err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		out = append(out, secrettest.Kept{Where: path, Mode: fi.Mode().Perm() | di.Mode().Perm()&0o077, Data: data})
		return nil
	})
	if err != nil {
		t.Fatalf("kept: %v", err)
	}
	return out
}

func TestFolderConformance(t *testing.T) {
	secrettest.Run(t, folderHarness(t, nil))
}

// broken wraps the folder with one fault.
type broken struct {
	*folder.Secrets
	fault string
}

func (b *broken) WriteBMCPassword(ctx context.Context, name, pw string) (string, error) {
	switch b.fault {
	case "world-readable":
		where, err := b.Secrets.WriteBMCPassword(ctx, name, pw)
		if err == nil {
			os.Chmod(where, 0o644)
		}
		return where, err
	case "one file for all":
		name = "all"
	case "quotes the password":
		where, err := b.Secrets.WriteBMCPassword(ctx, name, pw)
		if err != nil {
			err = fmt.Errorf("%w (password %q)", err, pw)
		}
		return where, err
	}
	return b.Secrets.WriteBMCPassword(ctx, name, pw)
}

func (b *broken) ReadBMCPassword(ctx context.Context, name string) (string, error) {
	if b.fault == "one file for all" {
		name = "all"
	}
	if b.fault == "none is no error" {
		if _, err := os.Stat(b.BMCPasswordPath(name)); err != nil {
			return "", nil
		}
	}
	return b.Secrets.ReadBMCPassword(ctx, name)
}

func (b *broken) RemoveBMCPassword(ctx context.Context, name string) error {
	if b.fault == "remove keeps" {
		return nil
	}
	return b.Secrets.RemoveBMCPassword(ctx, name)
}

func (b *broken) StageRootPassword(ctx context.Context, name, pw string) (secret.Staged, error) {
	st, err := b.Secrets.StageRootPassword(ctx, name, pw)
	if err == nil && b.fault == "discard commits" {
		return commitOnDiscard{st}, nil
	}
	return st, err
}

type commitOnDiscard struct{ secret.Staged }

func (c commitOnDiscard) Discard() { c.Commit(context.Background()) }

// TestTheSuiteFailsABrokenStore feeds the suite a folder with one fault
// at a time: each is found by the check named.
func TestTheSuiteFailsABrokenStore(t *testing.T) {
	storetest.RejectsFaults(t, secrettest.Checks(), [][2]string{
		{"world-readable", "KeptPrivately"},
		{"one file for all", "BMCRoundTrip"},
		{"quotes the password", "BMCRefusals"},
		{"remove keeps", "BMCRoundTrip"},
		{"remove keeps", "RemovedLeavesNothing"},
		{"discard commits", "RootStaged"},
		{"none is no error", "BMCRoundTrip"},
		{"one file for all", "ConcurrentWriters"},
	}, func(t *testing.T, fault string) secrettest.NodeHarness {
		return folderHarness(t, func(f *folder.Secrets) secret.Store { return &broken{Secrets: f, fault: fault} })
	})
}
