// Package tofutest finds, for tests, the real OpenTofu binary and the
// provider plugin mirror that .ci/tools.sh builds, and writes a CLI
// configuration that installs providers from that mirror only, so tests
// run offline.
//
// It builds nothing and downloads nothing: a missing tool skips the test,
// or fails it when PLASMA_E2E=1.
package tofutest

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// Environment variables read by this package.
const (
	// EnvBinary names the tofu binary to test with, overriding
	// .tools/bin/tofu and PATH.
	EnvBinary = "PLASMA_TOFU"
	// EnvMirror names the provider mirror folder, overriding
	// .tools/mirror.
	EnvMirror = "PLASMA_TOFU_MIRROR"
	// EnvE2E, set to 1, turns a skip for a missing tool into a failure.
	EnvE2E = "PLASMA_E2E"
)

// Providers .ci/tools.sh puts in the mirror, as NAMESPACE/TYPE/VERSION.
const (
	Local  = "hashicorp/local/1.4.0"
	Hcloud = "hetznercloud/hcloud/1.60.1"
	// OVH and Scaleway are built from ../shared/vendor by
	// build-plugins.sh, which .ci/tools.sh runs.
	OVH      = "ovh/ovh/2.19.0"
	Scaleway = "scaleway/scaleway/2.81.0"
)

const module = "github.com/plasmactl/plasma-node"

// Missing skips t, saying why, or fails it when PLASMA_E2E=1.
func Missing(t testing.TB, format string, args ...any) {
	t.Helper()
	if os.Getenv(EnvE2E) == "1" {
		t.Fatalf("missing tool (PLASMA_E2E=1; run .ci/tools.sh): "+format, args...)
	}
	t.Skipf("missing tool (run .ci/tools.sh): "+format, args...)
}

// ModuleRoot returns the folder of the plasma-node go.mod above the
// current directory, or "" if there is none.
func ModuleRoot() string {
	dir, err := os.Getwd()
	if err != nil {
		return ""
	}
	for {
		if isModuleRoot(filepath.Join(dir, "go.mod")) {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}

func isModuleRoot(gomod string) bool {
	f, err := os.Open(gomod)
	if err != nil {
		return false
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if fields := strings.Fields(s.Text()); len(fields) == 2 && fields[0] == "module" {
			return fields[1] == module
		}
	}
	return false
}

// Binary returns the absolute path of the tofu binary to test with:
// $PLASMA_TOFU, else .tools/bin/tofu under the module root, else tofu on
// PATH. It calls [Missing] when there is none.
func Binary(t testing.TB) string {
	t.Helper()
	if p := os.Getenv(EnvBinary); p != "" {
		if !executable(p) {
			Missing(t, "%s=%s is not an executable file", EnvBinary, p)
		}
		abs, err := filepath.Abs(p)
		if err != nil {
			t.Fatal(err)
		}
		return abs
	}
	if root := ModuleRoot(); root != "" {
		if p := filepath.Join(root, ".tools", "bin", "tofu"); executable(p) {
			return p
		}
	}
	if p, err := exec.LookPath("tofu"); err == nil {
		if abs, err := filepath.Abs(p); err == nil {
			return abs
		}
	}
	Missing(t, "no tofu: set %s, build .tools/bin/tofu, or put tofu on PATH", EnvBinary)
	return ""
}

// Mirror returns the provider mirror folder, $PLASMA_TOFU_MIRROR or
// .tools/mirror under the module root, after checking that it holds each
// of providers (NAMESPACE/TYPE/VERSION, like [Local]) for this platform
// under registry.opentofu.org. It calls [Missing] otherwise.
func Mirror(t testing.TB, providers ...string) string {
	t.Helper()
	dir := os.Getenv(EnvMirror)
	if dir == "" {
		root := ModuleRoot()
		if root == "" {
			Missing(t, "no provider mirror: set %s or run in the module", EnvMirror)
			return ""
		}
		dir = filepath.Join(root, ".tools", "mirror")
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range providers {
		parts := strings.Split(p, "/")
		if len(parts) != 3 {
			t.Fatalf("tofutest.Mirror: provider %q: want NAMESPACE/TYPE/VERSION", p)
		}
		ns, typ, ver := parts[0], parts[1], parts[2]
		bin := filepath.Join(dir, "registry.opentofu.org", ns, typ, ver,
			runtime.GOOS+"_"+runtime.GOARCH, "terraform-provider-"+typ+"_v"+ver)
		if !executable(bin) {
			Missing(t, "provider %s not in mirror %s", p, dir)
		}
	}
	return dir
}

// CLIConfig writes a CLI configuration into a fresh t.TempDir() folder
// that installs providers from mirror only, never the network, and
// returns its path, to be given to tofu as TF_CLI_CONFIG_FILE.
func CLIConfig(t testing.TB, mirror string) string {
	t.Helper()
	rc := filepath.Join(t.TempDir(), "tofurc")
	body := "provider_installation {\n" +
		"  filesystem_mirror {\n" +
		"    path    = " + quote(mirror) + "\n" +
		"    include = [\"registry.opentofu.org/*/*\", \"registry.terraform.io/*/*\"]\n" +
		"  }\n" +
		"}\n"
	if err := os.WriteFile(rc, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return rc
}

func quote(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "${", "$${", "%{", "%%{")
	return `"` + r.Replace(s) + `"`
}

func executable(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0
}
