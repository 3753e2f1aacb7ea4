package folder

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/plasmactl/plasma-node/pxe/registry"
)

var created = time.Date(2026, 7, 6, 12, 0, 0, 0, time.UTC)

func mustPool(t testing.TB, spec string) registry.DataPool {
	t.Helper()
	p, err := registry.ParsePoolSpec(spec)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// readFixture reads a registration file of TAPPaaS's from the registry's
// fixtures.
func readFixture(t testing.TB, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "registry", "testdata", "registry", name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}
