package e2e

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// watcher is a running node-provisioner status --watch.
type watcher struct {
	cmd  *exec.Cmd
	mu   sync.Mutex
	out  strings.Builder
	done chan error
}

func startWatch(t *testing.T, state string, args ...string) *watcher {
	t.Helper()
	w := &watcher{done: make(chan error, 1)}
	w.cmd = exec.Command(filepath.Join(bin, "node-provisioner"), append([]string{"--state-dir", state, "--secrets-dir", filepath.Join(state, "secrets"), "status", "--watch"}, args...)...)
	w.cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
	r, err := w.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := w.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.cmd.Process.Kill() })
	go func() {
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			w.mu.Lock()
			w.out.WriteString(sc.Text() + "\n")
			w.mu.Unlock()
		}
		w.done <- w.cmd.Wait()
	}()
	return w
}

func (w *watcher) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.out.String()
}

// waitFor waits up to 10 s for s in the output.
func (w *watcher) waitFor(t *testing.T, s string) {
	t.Helper()
	for end := time.Now().Add(10 * time.Second); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		if strings.Contains(w.String(), s) {
			return
		}
	}
	t.Fatalf("no %q in the output of status --watch:\n%s", s, w.String())
}

// TestStatusOutputsAndWatch: list -o yaml and status -o json|yaml print
// the registrations and the window (status exit 0 while it is open, 1
// after), a bad -o is exit 2; status --watch on the state folder prints
// the boot steps and answers of an open window as they happen (as a table
// and as JSON lines), then ends with exit 0 when the window closes.
func TestStatusOutputsAndWatch(t *testing.T) {
	state := t.TempDir()
	if out, code := provisioner(t, state, "register", "pve1", "--mac", "52:54:00:de:ad:01", "--boot-disk", "sda"); code != 0 {
		t.Fatalf("register: %d %s", code, out)
	}
	if out, code := provisioner(t, state, "list", "-o", "yaml"); code != 0 || !strings.HasPrefix(out, "- name: pve1\n  state: pending\n  macs:\n    - 52:54:00:de:ad:01\n  boot_disk: sda\n") {
		t.Errorf("list -o yaml: exit %d\n%s", code, out)
	}
	if out, code := provisioner(t, state, "status", "-o", "xml"); code != 2 || !strings.Contains(out, `--output "xml": want table, json or yaml`) {
		t.Errorf("status -o xml: exit %d %s", code, out)
	}
	if out, code := provisioner(t, state, "enable", "--http", "127.0.0.1:0", "--ttl", "1m"); code != 0 {
		t.Fatalf("enable: %d %s", code, out)
	}
	t.Cleanup(func() { provisioner(t, state, "disable") })

	out, code := provisioner(t, state, "status", "-o", "json")
	var st struct {
		Window struct {
			Open bool   `json:"open"`
			URL  string `json:"url"`
		} `json:"window"`
		Nodes []struct{ Name, State string } `json:"nodes"`
	}
	if err := json.Unmarshal([]byte(out), &st); code != 0 || err != nil || !st.Window.Open || len(st.Nodes) != 1 || st.Nodes[0].Name != "pve1" {
		t.Fatalf("status -o json while open: exit %d, %v\n%s", code, err, out)
	}
	if out, code := provisioner(t, state, "status", "-o", "yaml"); code != 0 || !strings.HasPrefix(out, "window:\n  open: true\n") || !strings.Contains(out, "nodes:\n  - name: pve1\n") {
		t.Errorf("status -o yaml while open: exit %d\n%s", code, out)
	}

	table := startWatch(t, state)
	lines := startWatch(t, state, "-o", "json")
	table.waitFor(t, "Events (until interrupted):")
	lines.waitFor(t, `{"window":`)
	// Each prints its header or status line just before it starts
	// following the event log from that moment.
	time.Sleep(500 * time.Millisecond)
	base := strings.TrimSuffix(st.Window.URL, "/answer")
	get := func(method, url, body string) {
		req, _ := http.NewRequest(method, url, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	get("GET", base+"/boot.ipxe?mac=52:54:00:de:ad:01", "")
	get("POST", st.Window.URL, `{"network_interfaces":[]}`)
	table.waitFor(t, "refused")
	lines.waitFor(t, `"kind":"refused"`)
	if out, code := provisioner(t, state, "disable"); code != 0 {
		t.Fatalf("disable: %d %s", code, out)
	}
	for _, w := range []*watcher{table, lines} {
		select {
		case err := <-w.done:
			if err != nil {
				t.Errorf("status --watch after the window closed: %v\n%s", err, w)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("status --watch still runs 10 s after the window closed:\n%s", w)
		}
	}
	got := table.String()
	for _, want := range []string{`script +\S+ +0 exit: node pve1 is pending but no boot release staged`, `refused +\S+ +404 `, `Window closed\n`} {
		if !regexp.MustCompile(want).MatchString(got) {
			t.Errorf("status --watch output has no %q:\n%s", want, got)
		}
	}
	var kinds []string
	stream := strings.Split(strings.TrimSpace(lines.String()), "\n")
	if !strings.HasPrefix(stream[0], `{"window":{"open":true,`) {
		t.Errorf("status --watch -o json does not start with the status line:\n%s", lines)
	}
	for _, l := range stream[1:] {
		var e struct{ Kind string }
		if err := json.Unmarshal([]byte(l), &e); err != nil {
			t.Errorf("status --watch -o json line %q: %v", l, err)
		}
		kinds = append(kinds, e.Kind)
	}
	if diff := cmp.Diff([]string{"script", "refused"}, kinds); diff != "" {
		t.Errorf("status --watch -o json events (-want +got):\n%s", diff)
	}
	if out, code := provisioner(t, state, "status", "-o", "json"); code != 1 || !strings.Contains(out, `"open": false`) {
		t.Errorf("status -o json when closed: exit %d\n%s", code, out)
	}
}
