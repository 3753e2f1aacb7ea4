package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/plasmactl/plasma-node/internal/lockfile"
	"github.com/plasmactl/plasma-node/nodes"
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

// TestProvisionCountIsBounded: a count over 999 is bad input (exit 2)
// and more new servers than the platform's private address pool holds is
// refused before anything is planned; neither writes a file.
func TestProvisionCountIsBounded(t *testing.T) {
	dir := t.TempDir()
	mustRun(t, dir, "add", "demo", "--provider", "hetzner")
	store := nodes.Open(dir, nodes.Options{})
	if _, err := store.UpdatePlatform(context.Background(), "demo", func(p *nodes.Platform) error {
		p.Networking.PrivateNetwork = "10.1.0.0/28"
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, dir)
	if r := plasma(t, dir, "provision", "demo", "-z", "web:cx22:99999", "--auto-approve"); r.code != 2 || !strings.Contains(r.err, "count 99999 is over 999") {
		t.Errorf("provision of 99999: exit %d, stderr %q; want 2 naming the bound", r.code, r.err)
	}
	if r := plasma(t, dir, "provision", "demo", "-z", "web:cx22:40", "--auto-approve"); r.code == 0 || !strings.Contains(r.err, "40 new servers need as many private addresses") {
		t.Errorf("provision of 40 into a /28: exit %d, stderr %q; want a refusal naming the address pool", r.code, r.err)
	}
	if diff := cmp.Diff(before, snapshot(t, dir)); diff != "" {
		t.Errorf("refused provisions changed files (-before +after):\n%s", diff)
	}
}

// TestATopLevelTypoInPlatformYAMLIsRefused: a top-level key a few edits
// from one of plasma-node's sections (poolz for pools) is refused by a
// command that writes, naming file, line and the section meant, while
// another plugin's section passes.
func TestATopLevelTypoInPlatformYAMLIsRefused(t *testing.T) {
	dir := setup(t)
	f := filepath.Join(dir, "platforms/demo/platform.yaml")
	b, _ := os.ReadFile(f)
	os.WriteFile(f, append(b, []byte("poolz:\n  web: {count: 1}\n")...), 0o644)
	before := snapshot(t, dir)
	r := plasma(t, dir, "add", "demo", "--hostname", "node003", "--public-ip", "51.159.0.3")
	if r.code != 2 || !strings.Contains(r.err, "poolz") || !strings.Contains(r.err, "pools") {
		t.Errorf("add with poolz: in platform.yaml: exit %d, stderr %q; want 2 naming poolz and pools", r.code, r.err)
	}
	if diff := cmp.Diff(before, snapshot(t, dir)); diff != "" {
		t.Errorf("the refused add wrote (-before +after):\n%s", diff)
	}
}
