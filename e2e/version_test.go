package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestVersionPrintsTheModuleVersion builds both binaries as a program
// that requires plasma-node v0.9.0 (replaced by this checkout) would, and
// checks version prints that version; the binaries built from the
// checkout itself print theirs.
func TestVersionPrintsTheModuleVersion(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	site := t.TempDir()
	goVersion := strings.Join(strings.SplitN(strings.TrimPrefix(runtime.Version(), "go"), ".", 3)[:2], ".")
	gomod := "module example.com/site\n\ngo " + goVersion + "\n\nrequire github.com/plasmactl/plasma-node v0.9.0\n\nreplace github.com/plasmactl/plasma-node => " + root + "\n"
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(site, "go.mod"), []byte(gomod), 0o644)
	os.WriteFile(filepath.Join(site, "go.sum"), sum, 0o644)
	for _, name := range []string{"plasma-node", "node-provisioner"} {
		exe := filepath.Join(site, name)
		build := exec.Command("go", "build", "-o", exe, "github.com/plasmactl/plasma-node/cmd/"+name)
		build.Dir = site
		build.Env = append(os.Environ(), "GOFLAGS=-mod=mod -buildvcs=false", "GOPROXY=off", "GOWORK=off")
		if out, err := build.CombinedOutput(); err != nil {
			t.Fatalf("build %s as a dependency: %v\n%s", name, err, out)
		}
		out, err := exec.Command(exe, "version").Output()
		if got := strings.TrimSpace(string(out)); err != nil || got != name+" v0.9.0" {
			t.Errorf("%s version as a dependency = %q (%v), want %q", name, got, err, name+" v0.9.0")
		}
		out, err = exec.Command(filepath.Join(bin, name), "version").Output()
		if f := strings.Fields(string(out)); err != nil || len(f) != 2 || f[0] != name || !(f[1] == "(devel)" || strings.HasPrefix(f[1], "v")) {
			t.Errorf("%s version = %q (%v)", name, out, err)
		}
	}
}

// TestMakeBuildStampsTheVersion: make build stamps both binaries with the
// checkout's commit, its date and a version made from them (a tag, else
// Go's pseudo-version, whose last part is the commit's first 12 digits),
// and version -o json shows them.
func TestMakeBuildStampsTheVersion(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	git := func(args ...string) string {
		out, err := exec.Command("git", append([]string{"-C", root}, args...)...).Output()
		if err != nil {
			skipOrFail(t, "make build stamps from git, which cannot read %s: %v", root, err)
		}
		return strings.TrimSpace(string(out))
	}
	commit := git("rev-parse", "HEAD")
	when, err := time.Parse(time.RFC3339, git("show", "-s", "--format=%cI", "HEAD"))
	if err != nil {
		t.Fatal(err)
	}
	// Go stamps from a checkout whose .git is a folder; a git worktree's
	// is a file, which Go does not follow: build that one from a clone.
	src := root
	if fi, err := os.Stat(filepath.Join(root, ".git")); err != nil || !fi.IsDir() {
		src = filepath.Join(t.TempDir(), "clone")
		git("clone", "-q", root, src)
	}
	dir := t.TempDir()
	if out, err := exec.Command("make", "-C", src, "build", "BINDIR="+dir).CombinedOutput(); err != nil {
		t.Fatalf("make build: %v\n%s", err, out)
	}
	for _, name := range []string{"plasma-node", "node-provisioner"} {
		out, err := exec.Command(filepath.Join(dir, name), "version", "-o", "json").Output()
		if err != nil {
			t.Fatalf("%s version -o json: %v", name, err)
		}
		var got struct{ Name, Version, Commit, Date string }
		if err := json.Unmarshal(out, &got); err != nil {
			t.Fatalf("%s version -o json: %v\n%s", name, err, out)
		}
		date, err := time.Parse(time.RFC3339, got.Date)
		if got.Name != name || got.Commit != commit || err != nil || !date.Equal(when) {
			t.Errorf("%s version -o json = %s, want commit %s of %s", name, out, commit, when)
		}
		if !strings.HasPrefix(got.Version, "v") || (!strings.Contains(got.Version, commit[:12]) && !strings.Contains(got.Version, ".")) {
			t.Errorf("%s version = %q, want a tag or a pseudo-version of %s", name, got.Version, commit[:12])
		}
		text, _ := exec.Command(filepath.Join(dir, name), "version").Output()
		if want := name + " " + got.Version + "\n"; string(text) != want {
			t.Errorf("%s version = %q, want %q", name, text, want)
		}
	}
}
