package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// testSSHKey is a public key the flows put into answers.
const testSSHKey = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGzx6HqSm1mQ3VcLaZ3r0ZKtgtF5wVbUEjS0Xv5R5N5g op@e2e\n"

// provisionerEnv is a state folder, a secrets folder and a home for
// node-provisioner runs of one test, run in the network namespace netns
// when it is set.
type provisionerEnv struct {
	state, secrets, home string
	netns                string
}

func newProvisionerEnv(t *testing.T) provisionerEnv {
	t.Helper()
	root := t.TempDir()
	e := provisionerEnv{state: filepath.Join(root, "state"), secrets: filepath.Join(root, "secrets"), home: filepath.Join(root, "home")}
	if err := os.MkdirAll(filepath.Join(e.home, ".ssh"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(e.home, ".ssh", "id_ed25519.pub"), []byte(testSSHKey), 0o644); err != nil {
		t.Fatal(err)
	}
	return e
}

func (e provisionerEnv) cmd(ctx context.Context, args ...string) *exec.Cmd {
	args = append([]string{filepath.Join(bin, "node-provisioner"), "--state-dir", e.state, "--secrets-dir", e.secrets}, args...)
	if e.netns != "" {
		args = append([]string{"ip", "netns", "exec", e.netns}, args...)
	}
	c := exec.CommandContext(ctx, args[0], args[1:]...)
	c.Env = append(os.Environ(), "HOME="+e.home)
	return c
}

// run runs node-provisioner and fails the test unless it exits 0.
func (e provisionerEnv) run(t *testing.T, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := e.cmd(ctx, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("node-provisioner %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// serve starts node-provisioner serve on a random loopback port and
// returns the answer URL and the server's stderr, complete once the test's
// cleanup has stopped the server.
func (e provisionerEnv) serve(t *testing.T, extra ...string) (string, *lockedBuffer) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	c := e.cmd(ctx, append([]string{"serve", "--http", "127.0.0.1:0", "--ttl", "10m", "--domain", "e2e.test"}, extra...)...)
	logs := &lockedBuffer{}
	c.Stderr = logs
	stdout, err := c.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	stopped := false
	stop := func() {
		if stopped {
			return
		}
		stopped = true
		c.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { c.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			c.Process.Kill()
			<-done
		}
		cancel()
	}
	t.Cleanup(func() {
		stop()
		if t.Failed() {
			t.Logf("server log:\n%s", logs.String())
		}
	})
	logs.stop = stop
	return waitForURL(t, stdout), logs
}

// lockedBuffer collects a process's output written from another goroutine.
type lockedBuffer struct {
	mu   sync.Mutex
	b    bytes.Buffer
	stop func()
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// listEntry is the part of a `list -o json` entry the tests read.
type listEntry struct {
	Name       string     `json:"name"`
	State      string     `json:"state"`
	ConsumedAt *time.Time `json:"consumed_at"`
}

// listJSON runs `list -o json` and decodes it.
func (e provisionerEnv) listJSON(t *testing.T) ([]listEntry, string) {
	t.Helper()
	out := e.run(t, "list", "-o", "json")
	var list []listEntry
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatalf("list -o json: %v\n%s", err, out)
	}
	return list, out
}

// TestOneShotUnderLoad posts one machine's system info 500 times at once,
// each on its own connection: one request gets the answer, the other 499
// get 404, the registration is consumed once and one secret is written.
func TestOneShotUnderLoad(t *testing.T) {
	e := newProvisionerEnv(t)
	e.run(t, "register", "pve7", "--mac", "52:54:00:ba:5e:11", "--boot-disk", "nvme0n1")
	url, _ := e.serve(t)
	body, err := os.ReadFile("../answer/testdata/sysinfo/pve-9.2-synthetic.json")
	if err != nil {
		t.Fatal(err)
	}

	const n = 500
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{DisableKeepAlives: true, MaxConnsPerHost: 0}}
	start := make(chan struct{})
	statuses := make([]int, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	began := time.Now()
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			resp, err := client.Post(url, "application/json", bytes.NewReader(body))
			if err != nil {
				errs[i] = err
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			statuses[i] = resp.StatusCode
		}()
	}
	close(start)
	wg.Wait()
	took := time.Since(began)
	t.Logf("%d concurrent POSTs in %v", n, took)

	counts := map[int]int{}
	for i := range n {
		if errs[i] != nil {
			t.Errorf("POST %d: %v", i, errs[i])
			continue
		}
		counts[statuses[i]]++
	}
	if counts[200] != 1 || counts[404] != n-1 {
		t.Errorf("status counts %v, want exactly one 200 and %d 404", counts, n-1)
	}
	if took > 60*time.Second {
		t.Errorf("%d POSTs took %v, want well under a minute", n, took)
	}

	list, out := e.listJSON(t)
	if len(list) != 1 || list[0].Name != "pve7" || list[0].State != "consumed" || list[0].ConsumedAt == nil {
		t.Errorf("list -o json after the storm, want pve7 consumed once:\n%s", out)
	}
	regs, _ := filepath.Glob(filepath.Join(e.state, "registrations", "pve7*"))
	if len(regs) != 1 || filepath.Base(regs[0]) != "pve7.json.consumed" {
		t.Errorf("registration files %v, want only pve7.json.consumed", regs)
	}
	secrets, err := os.ReadDir(e.secrets)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range secrets {
		names = append(names, s.Name())
	}
	if len(names) != 1 {
		t.Errorf("secret files %v, want exactly one", names)
	}
}
