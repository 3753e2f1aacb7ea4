package plasmanode_test

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestLibrariesDoNotPullCLIPackages keeps the CLI framework out of the
// packages other programs embed.
func TestLibrariesDoNotPullCLIPackages(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		if os.Getenv("PLASMA_E2E") == "1" {
			t.Fatal("needs the go command")
		}
		t.Skip("needs the go command")
	}
	libs := []string{".", "./nodes", "./zones", "./ipam", "./answer", "./pxe"}
	out, err := exec.Command("go", append([]string{"list", "-deps", "-f", "{{.ImportPath}}"}, libs...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, dep := range strings.Fields(string(out)) {
		if strings.HasPrefix(dep, "github.com/spf13/") || strings.HasSuffix(dep, "/internal/cli") {
			t.Errorf("a library package depends on %s", dep)
		}
	}
}

// TestOnlyTheIPMIDriverLinksGoIPMI keeps the IPMI stack in pxe/bmc/ipmi:
// the SDK, the registry, the window and the pxe provider store and check
// BMC endpoints without linking it.
func TestOnlyTheIPMIDriverLinksGoIPMI(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		if os.Getenv("PLASMA_E2E") == "1" {
			t.Fatal("needs the go command")
		}
		t.Skip("needs the go command")
	}
	libs := []string{".", "./answer/registry", "./pxe", "./pxe/bmc", "./providers/pxe", "./cmd/plasma-node"}
	out, err := exec.Command("go", append([]string{"list", "-deps", "-f", "{{.ImportPath}}"}, libs...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, dep := range strings.Fields(string(out)) {
		if strings.HasPrefix(dep, "github.com/bougou/go-ipmi") {
			t.Errorf("one of %v depends on %s", libs, dep)
		}
	}
}
