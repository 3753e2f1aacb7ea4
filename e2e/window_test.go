package e2e

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func provisioner(t *testing.T, state string, args ...string) (string, int) {
	t.Helper()
	c := exec.Command(filepath.Join(bin, "node-provisioner"), append([]string{"--state-dir", state, "--secrets-dir", filepath.Join(state, "secrets")}, args...)...)
	c.Env = append(os.Environ(), "HOME="+t.TempDir())
	out, err := c.CombinedOutput()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return string(out), ee.ExitCode()
	}
	if err != nil {
		t.Fatal(err)
	}
	return string(out), 0
}

// TestWindowEnableStatusDisable opens a window in the background, checks
// status from another process, closes it, and checks a TTL closes it too.
func TestWindowEnableStatusDisable(t *testing.T) {
	state := t.TempDir()
	hookLog := filepath.Join(state, "hook.log")
	hook := `echo "$PXE_ACTION $PXE_NEXT_SERVER $PXE_BOOT_FILE $PXE_SCRIPT_URL" >> ` + hookLog
	out, code := provisioner(t, state, "enable", "--http", "127.0.0.1:0", "--ttl", "1m", "--dhcp-hook", hook)
	if code != 0 || !strings.Contains(out, "Provisioning window open: http://127.0.0.1:") {
		t.Fatalf("enable: %d\n%s", code, out)
	}
	t.Cleanup(func() { provisioner(t, state, "disable") })
	if out, code := provisioner(t, state, "enable"); code != 0 || !strings.Contains(out, "already open") {
		t.Errorf("second enable: %d %s", code, out)
	}
	// With settings it refuses: the open window keeps its own.
	if out, code := provisioner(t, state, "enable", "--http", "127.0.0.1:0"); code != 1 || !strings.Contains(out, "keeps its settings") {
		t.Errorf("second enable --http: %d %s, want 1 refusing", code, out)
	}
	out, code = provisioner(t, state, "status")
	if code != 0 || !strings.Contains(out, "Window:  open") || !strings.Contains(out, "left") {
		t.Errorf("status while open: %d\n%s", code, out)
	}
	b, _ := os.ReadFile(filepath.Join(state, "window.json"))
	var w struct{ URL string }
	json.Unmarshal(b, &w)
	resp, err := http.Post(w.URL, "application/json", strings.NewReader(`{"network_interfaces":[]}`))
	if err != nil {
		t.Fatalf("POST to the open window: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != 404 {
		t.Errorf("POST to the open window: %d, want 404 (nothing registered)", resp.StatusCode)
	}
	if out, code := provisioner(t, state, "disable"); code != 0 || !strings.Contains(out, "Provisioning window closed") {
		t.Errorf("disable: %d %s", code, out)
	}
	if out, code := provisioner(t, state, "disable"); code != 0 || !strings.Contains(out, "No provisioning window was open") {
		t.Errorf("second disable: %d %s", code, out)
	}
	if out, code := provisioner(t, state, "status"); code != 1 || !strings.Contains(out, "Window:  closed") {
		t.Errorf("status when closed: %d\n%s", code, out)
	}
	hooks, _ := os.ReadFile(hookLog)
	lines := strings.Split(strings.TrimSpace(string(hooks)), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "enable 127.0.0.1 snponly.efi http://127.0.0.1:") || !strings.HasPrefix(lines[1], "disable ") {
		t.Errorf("hook runs:\n%s", hooks)
	}

	// A window closes by itself when its TTL runs out.
	if out, code := provisioner(t, state, "enable", "--http", "127.0.0.1:0", "--ttl", "2s"); code != 0 {
		t.Fatalf("enable --ttl 2s: %d %s", code, out)
	}
	time.Sleep(3500 * time.Millisecond)
	if out, code := provisioner(t, state, "status"); code != 1 {
		t.Errorf("status after the TTL: %d\n%s", code, out)
	}
	if _, err := os.Stat(filepath.Join(state, "window.json")); !os.IsNotExist(err) {
		t.Errorf("the window record outlived the TTL: %v", err)
	}
}

// TestASecondServeOnOneStateFolderIsRefused runs two serves on one state
// folder: the second exits 1 naming the first's pid and address, and
// disable stops the first even when its record is gone.
func TestASecondServeOnOneStateFolderIsRefused(t *testing.T) {
	state := t.TempDir()
	first := exec.Command(filepath.Join(bin, "node-provisioner"), "--state-dir", state, "--secrets-dir", filepath.Join(state, "secrets"),
		"serve", "--http", "127.0.0.1:0", "--ttl", "1m")
	first.Env = append(os.Environ(), "HOME="+t.TempDir())
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { first.Wait(); close(exited) }()
	t.Cleanup(func() { first.Process.Kill(); <-exited })
	var w struct {
		PID  int
		HTTP string
	}
	for end := time.Now().Add(15 * time.Second); w.HTTP == ""; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatal("the first serve recorded no window within 15s")
		}
		b, _ := os.ReadFile(filepath.Join(state, "window.json"))
		json.Unmarshal(b, &w)
	}
	out, code := provisioner(t, state, "serve", "--http", "127.0.0.1:0", "--ttl", "1m")
	want := fmt.Sprintf("already has a provisioning window: pid %d serving on %s", first.Process.Pid, w.HTTP)
	if code != 1 || !strings.Contains(out, want) {
		t.Errorf("second serve: exit %d, want 1 with %q:\n%s", code, want, out)
	}
	b, _ := os.ReadFile(filepath.Join(state, "window.json"))
	if !strings.Contains(string(b), w.HTTP) {
		t.Errorf("the second serve touched the window record:\n%s", b)
	}

	// disable stops the window holding the folder, with or without its record.
	os.Remove(filepath.Join(state, "window.json"))
	if out, code := provisioner(t, state, "disable"); code != 0 || !strings.Contains(out, "Provisioning window closed") {
		t.Errorf("disable: %d %s", code, out)
	}
	select {
	case <-exited:
	case <-time.After(10 * time.Second):
		t.Fatal("the first serve still runs after disable")
	}
	if out, code := provisioner(t, state, "disable"); code != 0 || !strings.Contains(out, "No provisioning window was open") {
		t.Errorf("second disable: %d %s", code, out)
	}
}
