package regfile_test

import (
	"path/filepath"
	"testing"

	"github.com/plasmactl/plasma-node/pxe/registry"
	"github.com/plasmactl/plasma-node/pxe/registry/regfile"
	"github.com/plasmactl/plasma-node/pxe/registry/storetest"
)

// FileHarness is the conformance harness of the state folder's store.
func fileHarness(tb testing.TB) storetest.Harness {
	return storetest.Harness{
		New: func(t storetest.T) registry.Registrations {
			s, err := regfile.Open(tb.TempDir(), nil)
			if err != nil {
				t.Fatalf("open: %v", err)
			}
			return s
		},
		Reopen: func(t storetest.T, s registry.Registrations) registry.Registrations {
			s2, err := regfile.Open(filepath.Dir(s.(*regfile.Store).Dir()), nil)
			if err != nil {
				t.Fatalf("reopen: %v", err)
			}
			return s2
		},
		CrashConsume: func(t storetest.T, s registry.Registrations, name string, recorded bool) {
			if err := regfile.CrashConsume(s.(*regfile.Store), name, recorded); err != nil {
				t.Fatalf("crash: %v", err)
			}
		},
	}
}

// TestFileStoreConformance runs the store conformance suite against the
// state folder's registrations.
func TestFileStoreConformance(t *testing.T) {
	storetest.Run(t, fileHarness(t))
}
