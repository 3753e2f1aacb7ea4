package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
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
