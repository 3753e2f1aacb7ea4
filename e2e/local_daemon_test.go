package e2e

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/plasmactl/plasma-node/pxe/client"
)

// npRun runs node-provisioner on state with token in
// NODE_PROVISIONER_TOKEN (none when empty) and returns its stdout, its
// stderr and its exit code.
func npRun(t *testing.T, state, token string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(filepath.Join(bin, "node-provisioner"), append([]string{"--state-dir", state}, args...)...)
	env := []string{"HOME=" + state}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "NODE_PROVISIONER_") {
			env = append(env, kv)
		}
	}
	if token != "" {
		env = append(env, "NODE_PROVISIONER_TOKEN="+token)
	}
	cmd.Env = env
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		return out.String(), errb.String(), exit.ExitCode()
	case err != nil:
		t.Fatalf("node-provisioner %v: %v", args, err)
	}
	return out.String(), errb.String(), 0
}

// TestLocalCommandsGoThroughTheDaemon: with a daemon running on the
// state folder, a local enable, status and disable (no --server) open,
// show and close the daemon's window through its API, found from the
// daemon's record, the certificate pinned from the state folder. Without
// a token enable exits 1 naming the daemon and starts no window of its
// own; window flags the daemon's window does not take are exit 2. The
// daemon listens on ":PORT", dialled on 127.0.0.1. enable says the
// daemon's window's warnings (no boot assets staged) once each, as
// node-provisioner's own. A second daemon on
// the folder exits 1. The record goes when the daemon stops.
func TestLocalCommandsGoThroughTheDaemon(t *testing.T) {
	state := t.TempDir()
	admin := npOut(t, state, "token", "create", "ops", "--scope", "admin")
	read := npOut(t, state, "token", "create", "watch", "--scope", "read")
	fp := npOut(t, state, "tls", "fingerprint")
	addr := freeAddr(t)
	c, err := client.New(client.Options{URL: "https://" + addr, Token: admin, Fingerprint: fp})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	// The API listens as ":PORT" (every address): the record is dialled
	// on 127.0.0.1.
	_, port, _ := strings.Cut(addr, ":")
	d := startDaemon(t, state, ":"+port, c)
	stopped := false
	defer func() {
		if !stopped {
			d.cmd.Process.Kill()
			d.cmd.Wait()
		}
	}()
	pid := strconv.Itoa(d.cmd.Process.Pid)

	// Without a token: exit 1, the daemon named, nothing started.
	out, errOut, code := npRun(t, state, "", "enable", "--ttl", "10m")
	t.Logf("enable without a token: %s", errOut)
	for _, want := range []string{"daemon runs", "pid " + pid, "https://" + addr, "admin", "NODE_PROVISIONER_TOKEN"} {
		if code != 1 || !strings.Contains(errOut, want) {
			t.Errorf("enable without a token: exit %d, stderr %q, want exit 1 naming %q (stdout %q)", code, errOut, want, out)
		}
	}
	if strings.Contains(errOut, admin) {
		t.Errorf("stderr shows a token: %q", errOut)
	}
	if _, err := os.Stat(filepath.Join(state, "serve.pid")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("serve.pid after enable without a token: %v", err)
	}
	if w, err := c.Window(ctx); err != nil || w.Open {
		t.Errorf("window after enable without a token: %+v %v", w, err)
	}

	// The daemon's window settings are its own: exit 2 naming the flags.
	_, errOut, code = npRun(t, state, admin, "enable", "--ttl", "10m", "--http", "127.0.0.1:0", "--dhcp-interface", "lo")
	t.Logf("enable --http --dhcp-interface: %s", errOut)
	if code != 2 || !strings.Contains(errOut, "--http") || !strings.Contains(errOut, "--dhcp-interface") {
		t.Errorf("enable --http --dhcp-interface: exit %d, stderr %q, want 2 naming both", code, errOut)
	}

	// With the admin token: the daemon's window.
	out, errOut, code = npRun(t, state, admin, "enable", "--ttl", "10m")
	if code != 0 || !strings.Contains(out, "Provisioning window open") || !strings.Contains(out, "(pid "+pid+")") {
		t.Fatalf("enable: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	// The daemon's window's warnings, once each, in this binary's voice.
	if n := strings.Count(errOut, "node-provisioner: warning: no boot assets staged"); n != 1 || strings.Contains(errOut, "level=") || strings.Contains(errOut, `"level"`) {
		t.Errorf("enable through the daemon: stderr %q, want the window's warning once (%d), in node-provisioner's voice", errOut, n)
	}
	if w, err := c.Window(ctx); err != nil || !w.Open || !w.Daemon || w.Deadline.Sub(time.Now()) < 9*time.Minute {
		t.Errorf("window after local enable: %+v %v", w, err)
	}
	for _, tok := range []string{read, ""} { // through the API, and read from the folder
		out, errOut, code = npRun(t, state, tok, "status")
		if code != 0 || !strings.Contains(out, "Window:  open") || !strings.Contains(out, "daemon)") {
			t.Errorf("status (token %v): exit %d, stdout %q, stderr %q", tok != "", code, out, errOut)
		}
	}
	out, _, code = npRun(t, state, admin, "enable")
	if code != 0 || !strings.Contains(out, "already open") {
		t.Errorf("second enable: exit %d, stdout %q", code, out)
	}
	// A new --ttl on the open window is refused, not ignored.
	if _, errOut, code := npRun(t, state, admin, "enable", "--ttl", "10m"); code != 1 || !strings.Contains(errOut, "--ttl would need a new window") {
		t.Errorf("second enable --ttl: exit %d, stderr %q; want 1 refusing", code, errOut)
	}
	if _, err := os.Stat(filepath.Join(state, "serve.pid")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("serve.pid: %v", err)
	}

	// disable: without a token refused, with it closed.
	if _, errOut, code = npRun(t, state, "", "disable"); code != 1 || !strings.Contains(errOut, "daemon runs") {
		t.Errorf("disable without a token: exit %d, stderr %q", code, errOut)
	}
	out, errOut, code = npRun(t, state, admin, "disable")
	if code != 0 || strings.TrimSpace(out) != "Provisioning window closed" {
		t.Errorf("disable: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if w, err := c.Window(ctx); err != nil || w.Open {
		t.Errorf("window after local disable: %+v %v", w, err)
	}
	if out, _, code = npRun(t, state, read, "status"); code != 1 || !strings.Contains(out, "Window:  closed") {
		t.Errorf("status after disable: exit %d, stdout %q", code, out)
	}

	// One daemon per state folder: a second one exits 1 naming the first.
	_, errOut, code = npRun(t, state, "", "daemon", "--api", "127.0.0.1:0", "--http", "127.0.0.1:0")
	if code != 1 || !strings.Contains(errOut, "already runs") || !strings.Contains(errOut, "pid "+pid) {
		t.Errorf("second daemon: exit %d, stderr %q", code, errOut)
	}

	// The record goes with the daemon.
	d.cmd.Process.Signal(syscall.SIGTERM)
	d.cmd.Wait()
	stopped = true
	if _, err := os.Stat(filepath.Join(state, "api", "daemon.json")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("daemon.json after the daemon stopped: %v\n%s", err, d.logs)
	}
}
