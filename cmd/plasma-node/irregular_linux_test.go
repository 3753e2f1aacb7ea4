package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// irregularKinds make path something a writer must not replace: each
// returns what the refusal says it is.
var irregularKinds = map[string]func(t *testing.T, path string) string{
	"a symbolic link": func(t *testing.T, path string) string {
		target := filepath.Join(t.TempDir(), "target.yaml")
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(target, data, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Remove(path); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, path); err != nil {
			t.Fatal(err)
		}
		return "a symbolic link to " + target
	},
	"a FIFO": func(t *testing.T, path string) string {
		if err := os.Remove(path); err != nil {
			t.Fatal(err)
		}
		if err := syscall.Mkfifo(path, 0o644); err != nil {
			t.Fatal(err)
		}
		return "a FIFO"
	},
	"a folder": func(t *testing.T, path string) string {
		if err := os.Remove(path); err != nil {
			t.Fatal(err)
		}
		if err := os.Mkdir(path, 0o755); err != nil {
			t.Fatal(err)
		}
		return "a folder"
	},
}

// tree returns every entry under dir (but the lock file) with its kind
// and, for a regular file or a link, its content or target.
func tree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.Name() == ".lock" {
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		switch {
		case d.Type()&os.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			b, _ := os.ReadFile(target)
			out[rel] = "link to " + target + ": " + string(b)
		case d.Type().IsRegular():
			b, _ := os.ReadFile(p)
			out[rel] = string(b)
		default:
			out[rel] = d.Type().String()
		}
		return nil
	})
	return out
}

// TestWritersRefuseIrregularFiles: with a node file or platform.yaml
// that is a symbolic link, a FIFO or a folder, every command that
// writes node or platform files refuses before writing anything, naming
// the file and what it is.
func TestWritersRefuseIrregularFiles(t *testing.T) {
	commands := map[string][]string{
		"allocate":       {"allocate", "node001", "-e", "demo", "platform.cognition.data"},
		"deallocate":     {"deallocate", "node001", "-e", "demo", "platform.foundation.cluster.control"},
		"add --hostname": {"add", "demo", "--hostname", "node009"},
		"delete":         {"delete", "node001", "-e", "demo", "--force"},
		"refresh":        {"refresh", "demo"},
		"provision":      {"provision", "demo", "--auto-approve"},
		"join":           {"join", "demo", "--server-id", "x1", "--pool", "p"},
		"destroy":        {"destroy", "demo", "--force"},
	}
	files := map[string]string{
		"a node file":   "platforms/demo/nodes/node002.yaml",
		"platform.yaml": "platforms/demo/platform.yaml",
	}
	for cname, args := range commands {
		for fname, file := range files {
			for kname, make := range irregularKinds {
				if fname == "platform.yaml" && kname != "a symbolic link" {
					continue // a platform.yaml that cannot be read is no platform
				}
				t.Run(cname+"/"+fname+" is "+kname, func(t *testing.T) {
					dir := setup(t)
					what := make(t, filepath.Join(dir, file))
					before := tree(t, dir)
					r := plasma(t, dir, args...)
					if r.code == 0 {
						t.Fatalf("exit 0, want a refusal\n%s%s", r.stdout, r.err)
					}
					if fname != "platform.yaml" || cname != "join" && cname != "provision" && cname != "destroy" {
						if !strings.Contains(r.err, file) || !strings.Contains(r.err, what) || !strings.Contains(r.err, "not a regular file") {
							t.Errorf("stderr does not name %s as %s:\n%s", file, what, r.err)
						}
					}
					if diff := cmp.Diff(before, tree(t, dir)); diff != "" {
						t.Errorf("files changed (-before +after):\n%s", diff)
					}
				})
			}
		}
	}
}

// TestAllocateRefusesASymlinkedNode: the case, allocate of the
// node whose own file is a link.
func TestAllocateRefusesASymlinkedNode(t *testing.T) {
	dir := setup(t)
	what := irregularKinds["a symbolic link"](t, filepath.Join(dir, "platforms/demo/nodes/node001.yaml"))
	before := tree(t, dir)
	r := plasma(t, dir, "allocate", "node001", "platform.cognition.data")
	if r.code != 2 || !strings.Contains(r.err, "node001.yaml") || !strings.Contains(r.err, what) {
		t.Errorf("allocate of a symlinked node: exit %d, stderr %q; want 2 naming the link", r.code, r.err)
	}
	if diff := cmp.Diff(before, tree(t, dir)); diff != "" {
		t.Errorf("files changed (-before +after):\n%s", diff)
	}
}
