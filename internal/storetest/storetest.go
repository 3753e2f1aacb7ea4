package storetest

import (
	"fmt"
	"os"
	"runtime"
	"slices"
	"sync"
	"testing"
)

// T is what a check needs of a test: testing.TB's reporting, temporary
// folders and clean-ups. *testing.T has it, and so has [Recorder].
// Fatalf must end the check (testing's does, with runtime.Goexit); a
// check calls it from its own goroutine only, Errorf and Logf from any.
type T interface {
	Helper()
	Logf(format string, args ...any)
	Errorf(format string, args ...any)
	Fatalf(format string, args ...any)
	TempDir() string
	Cleanup(func())
}

// Harness gives a suite stores S of the implementation under test, for
// the suites that need no more than a new store and the same state
// opened again.
type Harness[S any] struct {
	// New returns a new, empty store for one check. Required.
	New func(t T) S
	// Reopen opens s's state again, as a restarted process would, and
	// returns the new handle; s is not used afterwards. Nil skips the
	// checks of a restart.
	Reopen func(t T, s S) S
}

// Check is one conformance check of a suite whose harness is H.
type Check[H any] struct {
	// Name names it, as a subtest.
	Name string
	// Run runs it on a store of h.
	Run func(t T, h H)
}

// Run runs each of checks on h as a subtest of t.
func Run[H any](t *testing.T, h H, checks []Check[H]) {
	t.Helper()
	for _, c := range checks {
		t.Run(c.Name, func(t *testing.T) { c.Run(t, h) })
	}
}

// runCheck runs c on t in a goroutine of its own, so that a Fatalf that
// calls runtime.Goexit ends the check only, and returns when it ended.
func runCheck[H any](t T, h H, c Check[H]) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		c.Run(t, h)
	}()
	<-done
}

// Failures runs c on h with a [Recorder], in a goroutine of its own so
// that a Fatalf ends the check only, then its clean-ups, and returns what
// c and its clean-ups reported: none when it passed.
func Failures[H any](h H, c Check[H]) []string {
	r := &Recorder{}
	runCheck(r, h, c)
	r.Close()
	return r.Failures()
}

// NoError ends the check when err is not nil, saying what failed.
func NoError(t T, err error, what string) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// Race runs fn(i) for each i below n, each in a goroutine of its own,
// all let go at once, and returns their errors by i.
func Race(n int, fn func(i int) error) []error {
	errs := make([]error, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			<-start
			errs[i] = fn(i)
		})
	}
	close(start)
	wg.Wait()
	return errs
}

// Rejects runs the check named of checks on h, a store broken so that
// the check must fail it, logs its first failure on t and returns them
// all. It fails t when the check passes h, or when checks has no check
// of that name (a check removed from the suite).
func Rejects[H any](t T, h H, checks []Check[H], name string) []string {
	t.Helper()
	i := slices.IndexFunc(checks, func(c Check[H]) bool { return c.Name == name })
	if i < 0 {
		t.Fatalf("the suite has no check %s", name)
	}
	f := Failures(h, checks[i])
	if len(f) == 0 {
		t.Errorf("%s passed a broken store", name)
	} else {
		t.Logf("%s found: %s", name, f[0])
	}
	return f
}

// RejectsFaults is a suite's broken-store self-test: for each of faults,
// a fault and the check that must find it, it runs that check on
// broken(t, fault), which it must fail ([Rejects]), and on broken(t, ""),
// the same store without a fault, which it must pass; each as a subtest
// of t named fault/check.
func RejectsFaults[H any](t *testing.T, checks []Check[H], faults [][2]string, broken func(t *testing.T, fault string) H) {
	t.Helper()
	for _, f := range faults {
		t.Run(f[0]+"/"+f[1], func(t *testing.T) {
			Rejects(t, broken(t, f[0]), checks, f[1])
			i := slices.IndexFunc(checks, func(c Check[H]) bool { return c.Name == f[1] })
			if got := Failures(broken(t, ""), checks[i]); len(got) > 0 {
				t.Errorf("%s failed the store without a fault: %v", f[1], got)
			}
		})
	}
}

// Recorder is a [T] that records what a check reports instead of failing
// a test; its Fatalf records and ends the check's goroutine. Its zero
// value is ready; [Recorder.Close] runs its clean-ups and removes its
// temporary folders. Safe for concurrent use.
type Recorder struct {
	mu       sync.Mutex
	failures []string
	cleanups []func()
	dirs     []string
}

var _ T = (*Recorder)(nil)

// Helper does nothing.
func (r *Recorder) Helper() {}

// Logf drops the words.
func (r *Recorder) Logf(string, ...any) {}

// Errorf records a failure.
func (r *Recorder) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.failures = append(r.failures, fmt.Sprintf(format, args...))
}

// Fatalf records a failure and ends the calling goroutine.
func (r *Recorder) Fatalf(format string, args ...any) {
	r.Errorf(format, args...)
	runtime.Goexit()
}

// TempDir returns a new temporary folder, removed by Close; it panics
// when none can be made, as a check cannot go on without it.
func (r *Recorder) TempDir() string {
	d, err := os.MkdirTemp("", "storetest")
	if err != nil {
		panic(fmt.Sprintf("storetest: temporary folder: %v", err))
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.dirs = append(r.dirs, d)
	return d
}

// Cleanup adds fn to what Close runs, last added first.
func (r *Recorder) Cleanup(fn func()) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.cleanups = append(r.cleanups, fn)
}

// Failures returns what was reported so far.
func (r *Recorder) Failures() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.failures)
}

// Close runs the clean-ups, last added first, and removes the temporary
// folders.
func (r *Recorder) Close() {
	r.mu.Lock()
	fns, dirs := r.cleanups, r.dirs
	r.cleanups, r.dirs = nil, nil
	r.mu.Unlock()
	for _, fn := range slices.Backward(fns) {
		fn()
	}
	for _, d := range dirs {
		os.RemoveAll(d)
	}
}
