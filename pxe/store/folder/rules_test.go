package folder_test

import (
	"sync"
	"testing"

	"github.com/plasmactl/plasma-node/pxe/enrol"
	"github.com/plasmactl/plasma-node/pxe/enrol/enroltest"
	"github.com/plasmactl/plasma-node/pxe/store/folder"
)

// TestRulesConformance runs the rule store's suite on the state folder;
// another handle is a second store on the same folder, as a second
// process opens it, so the races go through the lock file.
func TestRulesConformance(t *testing.T) {
	var mu sync.Mutex
	dirs := map[enrol.Store]string{}
	open := func(dir string) enrol.Store {
		s := folder.OpenRules(dir)
		mu.Lock()
		defer mu.Unlock()
		dirs[s] = dir
		return s
	}
	enroltest.Run(t, enroltest.Harness{
		New: func(st enroltest.T) enrol.Store { return open(st.TempDir()) },
		Another: func(_ enroltest.T, s enrol.Store) enrol.Store {
			mu.Lock()
			dir := dirs[s]
			mu.Unlock()
			return open(dir)
		},
	})
}
