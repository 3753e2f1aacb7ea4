package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"

	plasmanode "github.com/plasmactl/plasma-node"
)

// openPTY returns a new pseudo-terminal: the side a test types into and
// the terminal a command reads.
func openPTY(t *testing.T) (typing, term *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals: %v", err)
	}
	t.Cleanup(func() { m.Close() })
	if err := unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Skipf("unlock pseudo-terminal: %v", err)
	}
	n, err := unix.IoctlGetInt(int(m.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Skipf("pseudo-terminal number: %v", err)
	}
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("open pseudo-terminal: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return m, s
}

// runAs runs this test binary as plasma-node with stdin, returning the
// exit code, stdout and stderr.
func runAs(t *testing.T, stdin *os.File, args ...string) result {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, args...)
	cmd.Env = append(os.Environ(), "PLASMA_NODE_AS_MAIN=1")
	cmd.Stdin = stdin
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	cmd.WaitDelay = 10 * time.Second
	err = cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return result{code, out.String(), errb.String()}
}

// TestPromptsOnATerminalOnly: a "no" typed at the prompt is "Cancelled"
// and exit 1, and without a terminal the command refuses before it asks,
// naming the flag that proceeds; nothing is removed either way.
func TestPromptsOnATerminalOnly(t *testing.T) {
	dir := setup(t)
	before := snapshot(t, dir)

	typing, term := openPTY(t)
	if _, err := typing.WriteString("no\n"); err != nil {
		t.Fatal(err)
	}
	r := runAs(t, term, "--dir", dir, "destroy", "demo")
	if r.code != 1 || r.err != plasmanode.PromptDestroy+"Cancelled\n" {
		t.Errorf("declined destroy: exit %d, stderr %q; want 1 and Cancelled", r.code, r.err)
	}
	if !strings.Contains(r.stdout, "only its node files go: node001, node002") {
		t.Errorf("declined destroy showed no plan:\n%s", r.stdout)
	}

	null, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	r = runAs(t, null, "--dir", dir, "destroy", "demo")
	if r.code != 1 || !strings.Contains(r.err, "pass --force or run on a terminal") {
		t.Errorf("destroy without a terminal: exit %d, stderr %q; want 1 naming --force", r.code, r.err)
	}
	if diff := cmp.Diff(before, snapshot(t, dir)); diff != "" {
		t.Errorf("files changed:\n%s", diff)
	}

	typing, term = openPTY(t)
	if _, err := typing.WriteString("yes\n"); err != nil {
		t.Fatal(err)
	}
	if r := runAs(t, term, "--dir", dir, "destroy", "demo"); r.code != 0 || !strings.Contains(r.stdout, "Removed node node001@demo") {
		t.Errorf("confirmed destroy: exit %d\n%s%s", r.code, r.stdout, r.err)
	}
}

// TestDeleteAsksAsDestroyDoes: delete of a node that only loses its file
// (a manual platform's) asks exactly as destroy does: without a terminal
// it refuses naming --force, a "no" is Cancelled and exit 1, and
// neither changes anything; --dry-run shows the plan and changes
// nothing; "yes" or --force removes the file.
func TestDeleteAsksAsDestroyDoes(t *testing.T) {
	dir := setup(t)
	before := snapshot(t, dir)
	null, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	r := runAs(t, null, "--dir", dir, "delete", "node001")
	if r.code != 1 || !strings.Contains(r.err, "pass --force or run on a terminal") {
		t.Errorf("delete without a terminal: exit %d, stderr %q; want 1 naming --force", r.code, r.err)
	}
	typing, term := openPTY(t)
	if _, err := typing.WriteString("no\n"); err != nil {
		t.Fatal(err)
	}
	r = runAs(t, term, "--dir", dir, "delete", "node001")
	if r.code != 1 || r.err != plasmanode.PromptDestroy+"Cancelled\n" || !strings.Contains(r.stdout, "only its node files go: node001") {
		t.Errorf("declined delete: exit %d, stdout %q, stderr %q; want 1, the plan and Cancelled", r.code, r.stdout, r.err)
	}
	if r := plasma(t, dir, "delete", "node001", "--dry-run"); r.code != 0 || !strings.Contains(r.stdout, "only its node files go: node001") {
		t.Errorf("delete --dry-run: exit %d\n%s%s", r.code, r.stdout, r.err)
	}
	if diff := cmp.Diff(before, snapshot(t, dir)); diff != "" {
		t.Errorf("files changed:\n%s", diff)
	}
	typing, term = openPTY(t)
	if _, err := typing.WriteString("yes\n"); err != nil {
		t.Fatal(err)
	}
	if r := runAs(t, term, "--dir", dir, "delete", "node001"); r.code != 0 || !strings.Contains(r.stdout, "Removed node node001@demo") {
		t.Errorf("confirmed delete: exit %d\n%s%s", r.code, r.stdout, r.err)
	}
	if r := plasma(t, dir, "delete", "node002", "--force"); r.code != 0 || !strings.Contains(r.stdout, "Removed node node002@demo") {
		t.Errorf("delete --force: exit %d\n%s%s", r.code, r.stdout, r.err)
	}
}
