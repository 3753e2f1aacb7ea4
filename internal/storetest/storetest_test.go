package storetest_test

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/plasmactl/plasma-node/internal/storetest"
)

// counter is a store of the harness's own tests: a number that Add must
// raise by one; broken, it raises it by two.
type counter struct {
	n      int
	broken bool
}

func (c *counter) Add() {
	c.n++
	if c.broken {
		c.n++
	}
}

func checks() []storetest.Check[storetest.Harness[*counter]] {
	return []storetest.Check[storetest.Harness[*counter]]{
		{"AddRaisesByOne", func(t storetest.T, h storetest.Harness[*counter]) {
			c := h.New(t)
			c.Add()
			if c.n != 1 {
				t.Fatalf("after one Add the counter is %d, want 1", c.n)
				t.Errorf("not reached: Fatalf ends the check")
			}
		}},
		{"TempDirAndCleanup", func(t storetest.T, h storetest.Harness[*counter]) {
			d := t.TempDir()
			t.Cleanup(func() {
				if _, err := os.Stat(d); err != nil {
					t.Errorf("the temporary folder is gone before the clean-up: %v", err)
				}
			})
		}},
	}
}

func harness(broken bool) storetest.Harness[*counter] {
	return storetest.Harness[*counter]{New: func(storetest.T) *counter { return &counter{broken: broken} }}
}

// TestAGoodStorePasses runs the checks as subtests, and on a Recorder.
func TestAGoodStorePasses(t *testing.T) {
	storetest.Run(t, harness(false), checks())
	for _, c := range checks() {
		if f := storetest.Failures(harness(false), c); len(f) > 0 {
			t.Errorf("%s failed a good store on a Recorder: %v", c.Name, f)
		}
	}
}

// TestRejectsFaults: the self-test runner finds a fault by its check and
// passes the store without it.
func TestRejectsFaults(t *testing.T) {
	storetest.RejectsFaults(t, checks(), [][2]string{{"adds two", "AddRaisesByOne"}}, func(_ *testing.T, fault string) storetest.Harness[*counter] {
		return harness(fault != "")
	})
}

// TestRejects: a broken store fails its check, Fatalf ends the check
// there, and a check missing from the suite is reported.
func TestRejects(t *testing.T) {
	f := storetest.Rejects(t, harness(true), checks(), "AddRaisesByOne")
	if len(f) != 1 || !strings.Contains(f[0], "is 2, want 1") {
		t.Errorf("failures = %q, want the one Fatalf", f)
	}
	if f := storetest.Failures(harness(false), checks()[1]); len(f) > 0 {
		t.Errorf("TempDirAndCleanup, its clean-up included: %v", f)
	}
	missing := &storetest.Recorder{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		storetest.Rejects(missing, harness(true), checks(), "Removed")
	}()
	<-done
	if f := missing.Failures(); len(f) != 1 || !strings.Contains(f[0], "no check Removed") {
		t.Errorf("Rejects of a check the suite lacks: %q", f)
	}
}

// TestRace: each racer's error comes back at its index.
func TestRace(t *testing.T) {
	errs := storetest.Race(5, func(i int) error {
		if i%2 == 1 {
			return fmt.Errorf("racer %d", i)
		}
		return nil
	})
	for i, err := range errs {
		if (err != nil) != (i%2 == 1) || (err != nil && err.Error() != fmt.Sprintf("racer %d", i)) {
			t.Errorf("racer %d returned %v", i, err)
		}
	}
}
