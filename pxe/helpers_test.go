package pxe

import (
	"os"
	"os/exec"
	"testing"
)

// needTool returns the path of a command a test needs. It skips the test
// when the command is missing, or fails it under PLASMA_E2E=1.
func needTool(t testing.TB, name, pkg string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("PLASMA_E2E") == "1" {
			t.Fatalf("%s not found (Debian package %s); PLASMA_E2E=1 needs it", name, pkg)
		}
		t.Skipf("%s not found (Debian package %s)", name, pkg)
	}
	return p
}
