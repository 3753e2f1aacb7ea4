package lockfile

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestTryLockNamesTheHolder(t *testing.T) {
	p := filepath.Join(t.TempDir(), ".lock")
	l, err := TryLock(p, "plasma-node provision")
	if err != nil {
		t.Fatal(err)
	}
	_, err = TryLock(p, "other")
	if !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), "plasma-node provision (pid ") {
		t.Fatalf("err = %v, want ErrLocked naming the holder", err)
	}
	if err := l.Unlock(); err != nil {
		t.Fatal(err)
	}
	l2, err := TryLock(p, "other")
	if err != nil {
		t.Fatalf("after Unlock: %v", err)
	}
	l2.Unlock()
}

func TestHeldErrorGivesTheHolderAndRelabelUpdatesIt(t *testing.T) {
	p := filepath.Join(t.TempDir(), ".lock")
	l, err := TryLock(p, "window on :0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Unlock()
	if err := l.Relabel("window on 127.0.0.1:8090"); err != nil {
		t.Fatal(err)
	}
	_, err = TryLock(p, "other")
	var held *HeldError
	if !errors.As(err, &held) {
		t.Fatalf("err = %v, want a *HeldError", err)
	}
	if diff := cmp.Diff(&HeldError{Path: p, Who: "window on 127.0.0.1:8090", PID: os.Getpid()}, held, cmpopts.IgnoreFields(HeldError{}, "Since")); diff != "" {
		t.Errorf("holder (-want +got):\n%s", diff)
	}
	if time.Since(held.Since) > time.Minute {
		t.Errorf("Since = %v, want about now", held.Since)
	}
}

func TestAcquireWaitsAndGivesUp(t *testing.T) {
	p := filepath.Join(t.TempDir(), ".lock")
	l, err := TryLock(p, "first")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	if _, err := Acquire(ctx, p, "second", 10*time.Millisecond); !errors.Is(err, ErrLocked) {
		t.Fatalf("err = %v, want ErrLocked", err)
	}
	if d := time.Since(start); d < 90*time.Millisecond {
		t.Errorf("gave up after %v, want about 100ms", d)
	}
	go func() { time.Sleep(50 * time.Millisecond); l.Unlock() }()
	l2, err := Acquire(context.Background(), p, "second", 10*time.Millisecond)
	if err != nil {
		t.Fatalf("Acquire after release: %v", err)
	}
	l2.Unlock()
}

// TestUnlockMarksTheRecordReleased: a released lock's file does not
// name its last holder as if it held it still; a killed holder's record
// (never released) stays as it was written.
func TestUnlockMarksTheRecordReleased(t *testing.T) {
	path := filepath.Join(t.TempDir(), ".lock")
	l, err := TryLock(path, "plasma-node provision")
	if err != nil {
		t.Fatal(err)
	}
	held, _ := os.ReadFile(path)
	if err := l.Unlock(); err != nil {
		t.Fatal(err)
	}
	after, _ := os.ReadFile(path)
	want := strings.TrimSuffix(string(held), ")\n") + ", released)\n"
	if string(after) != want {
		t.Errorf("the file after Unlock = %q, want %q", after, want)
	}
	l2, err := TryLock(path, "plasma-node allocate")
	if err != nil {
		t.Fatal(err)
	}
	defer l2.Unlock()
	if l2.Previous() != l.Record() {
		t.Errorf("Previous = %q, want the last holder's Record %q", l2.Previous(), l.Record())
	}
}
