package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/plasmactl/plasma-node/internal/lockfile"
)

// TestWaitingForALockSaysWhoHoldsIt: a command waiting for a platform's
// lock says at once, in the binary's voice, that it waits and for whom
// (the holder's description and pid), then finishes once the lock is
// free.
func TestWaitingForALockSaysWhoHoldsIt(t *testing.T) {
	dir := setup(t)
	held, err := lockfile.TryLock(filepath.Join(dir, "platforms", "demo", ".lock"), "plasma-node provision")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "--dir", dir, "allocate", "node001", "platform.cognition.data")
	cmd.Env = append(os.Environ(), "PLASMA_NODE_AS_MAIN=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second)
	held.Unlock()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("allocate after the lock was freed: %v\n%s", err, stderr.String())
	}
	want := "plasma-node: warning: waiting for the platform's lock (platform=demo, holder=\"plasma-node provision\", pid=" + itoa(os.Getpid())
	if !strings.Contains(stderr.String(), want) {
		t.Errorf("stderr while waiting:\n%s\nwant a line starting %q", stderr.String(), want)
	}
}

func itoa(n int) string {
	var b []byte
	for n > 0 {
		b = append([]byte{byte('0' + n%10)}, b...)
		n /= 10
	}
	return string(b)
}

// TestEmptyValuesAndPlainSeconds: an empty flag value is refused as bad
// input, exit 2, writing nothing; --timeout takes plain seconds.
func TestEmptyValuesAndPlainSeconds(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{
		{"add", "demo", "--provider", "manual", "--domain", ""},
		{"add", "demo", "--provider", "", "--domain", "example.com"},
	} {
		if r := plasma(t, dir, args...); r.code != 2 || !strings.Contains(r.err, "empty value") {
			t.Errorf("%v: exit %d, stderr %q; want 2 naming the empty value", args, r.code, r.err)
		}
	}
	if got := snapshot(t, dir); len(got) != 0 {
		t.Errorf("bad input wrote %v", got)
	}
	if r := plasma(t, dir, "provision", "nosuch", "-z", "a.b:cx22:1", "--wait", "--timeout", "600"); strings.Contains(r.err, "--timeout") {
		t.Errorf("--timeout 600: %q, want it taken as seconds", r.err)
	}
}
