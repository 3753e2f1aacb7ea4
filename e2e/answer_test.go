package e2e

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/plasmactl/plasma-node/answer"
)

// TestAnswerServer registers a node, serves on a random loopback port,
// posts the installer's system info and checks the one answer.
func TestAnswerServer(t *testing.T) {
	state := t.TempDir()
	home := t.TempDir()
	os.MkdirAll(filepath.Join(home, ".ssh"), 0o700)
	key := "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGzx6HqSm1mQ3VcLaZ3r0ZKtgtF5wVbUEjS0Xv5R5N5g op@e2e\n"
	os.WriteFile(filepath.Join(home, ".ssh", "id_ed25519.pub"), []byte(key), 0o644)
	env := append(os.Environ(), "HOME="+home, "NODE_PROVISIONER_STATE_DIR="+state)
	npc := func(ctx context.Context, args ...string) *exec.Cmd {
		c := exec.CommandContext(ctx, filepath.Join(bin, "node-provisioner"), args...)
		c.Env = env
		return c
	}
	if out, err := npc(context.Background(), "register", "pve7", "--mac", "52:54:00:ba:5e:11", "--boot-disk", "nvme0n1").CombinedOutput(); err != nil {
		t.Fatalf("register: %v\n%s", err, out)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	serve := npc(ctx, "serve", "--http", "127.0.0.1:0", "--ttl", "1m", "--domain", "e2e.test", "--timezone", "Europe/Vienna")
	url, logs := startServe(t, serve)

	body, _ := os.ReadFile("../answer/testdata/sysinfo/pve-9.2-synthetic.json")
	post := func() (int, string) {
		resp, err := http.Post(url, "application/json", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	status, toml := post()
	if status != 200 {
		t.Fatalf("first POST: %d %s", status, toml)
	}
	a, err := answer.Decode([]byte(toml), answer.Version92)
	if err != nil {
		t.Fatalf("the answer is not a valid 9.2 answer: %v\n%s", err, toml)
	}
	if a.Global.FQDN.Name != "pve7.e2e.test" || a.Global.Timezone != "Europe/Vienna" || a.DiskSetup.DiskList[0] != "nvme0n1" || len(a.Global.RootSSHKeys) != 1 {
		t.Errorf("answer: fqdn %q, disks %v, keys %v", a.Global.FQDN.Name, a.DiskSetup.DiskList, a.Global.RootSSHKeys)
	}
	pw, err := os.ReadFile(filepath.Join(home, ".node-secrets", "pve7.pw"))
	if err != nil || !answer.CheckPassword(a.Global.RootPasswordHashed, strings.TrimSpace(string(pw))) {
		t.Errorf("secret file does not match the answer's hash: %v", err)
	}
	if status, msg := post(); status != 404 {
		t.Errorf("second POST: %d %s, want 404", status, msg)
	}
	out, err := npc(context.Background(), "list").CombinedOutput()
	if err != nil || !regexp.MustCompile(`pve7\s+consumed`).Match(out) {
		t.Errorf("list after the answer: %v\n%s", err, out)
	}
	if strings.Contains(logs.String(), strings.TrimSpace(string(pw))) {
		t.Error("the password appears in the server log")
	}
}

// startServe starts node-provisioner serve, stops it with an interrupt
// at the end of the test (logging its stderr if the test failed) and
// returns its answer URL and its stderr.
func startServe(t *testing.T, serve *exec.Cmd) (string, *bytes.Buffer) {
	t.Helper()
	logs := &bytes.Buffer{}
	serve.Stderr = logs
	stdout, _ := serve.StdoutPipe()
	if err := serve.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		serve.Process.Signal(os.Interrupt)
		serve.Wait()
		if t.Failed() {
			t.Logf("server log:\n%s", logs.String())
		}
	})
	return waitForURL(t, stdout), logs
}

var servingRE = regexp.MustCompile(`Serving answers on (http://\S+/answer)`)

func waitForURL(t *testing.T, r io.Reader) string {
	t.Helper()
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			if m := servingRE.FindStringSubmatch(sc.Text()); m != nil {
				found <- m[1]
			}
		}
	}()
	select {
	case u := <-found:
		return u
	case <-time.After(30 * time.Second):
		t.Fatal("node-provisioner serve did not report its address within 30s")
	}
	return ""
}
