package folder_test

import (
	"path/filepath"
	"testing"

	"github.com/plasmactl/plasma-node/pxe/registry"
	"github.com/plasmactl/plasma-node/pxe/registry/storetest"
	"github.com/plasmactl/plasma-node/pxe/store/folder"
)

// FileHarness is the conformance harness of the state folder's store.
func registrationsHarness(tb testing.TB) storetest.Harness {
	return storetest.Harness{
		New: func(t storetest.T) registry.Registrations {
			s, err := folder.OpenRegistrations(tb.TempDir(), nil)
			if err != nil {
				t.Fatalf("open: %v", err)
			}
			return s
		},
		Reopen: func(t storetest.T, s registry.Registrations) registry.Registrations {
			s2, err := folder.OpenRegistrations(filepath.Dir(s.(*folder.Registrations).Dir()), nil)
			if err != nil {
				t.Fatalf("reopen: %v", err)
			}
			return s2
		},
		CrashConsume: func(t storetest.T, s registry.Registrations, name string, recorded bool) {
			if err := folder.CrashConsume(s.(*folder.Registrations), name, recorded); err != nil {
				t.Fatalf("crash: %v", err)
			}
		},
	}
}

// TestRegistrationsConformance runs the store conformance suite against the
// state folder's registrations.
func TestRegistrationsConformance(t *testing.T) {
	storetest.Run(t, registrationsHarness(t))
}
