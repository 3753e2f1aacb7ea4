package systemd

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

const (
	service  = "node-provisioner.service"
	window   = "node-provisioner-window.service"
	timer    = "node-provisioner-window.timer"
	binPath  = "/usr/local/bin/node-provisioner"
	maxScore = 2.5 // systemd-analyze security's exposure, 0 (best) to 10
)

func need(t *testing.T, tool string) string {
	t.Helper()
	p, err := exec.LookPath(tool)
	if err != nil {
		if os.Getenv("PLASMA_E2E") == "1" {
			t.Fatalf("needs %s (Debian package systemd)", tool)
		}
		t.Skipf("needs %s (Debian package systemd)", tool)
	}
	return p
}

// build builds node-provisioner and copies the units into a temporary
// folder with ExecStart pointing at it: verify requires the binary.
func build(t *testing.T) (dir, bin string) {
	t.Helper()
	need(t, "go")
	dir = t.TempDir()
	bin = filepath.Join(dir, "node-provisioner")
	if out, err := exec.Command("go", "build", "-o", bin, "../../cmd/node-provisioner").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	for _, u := range []string{service, window, timer} {
		b, err := os.ReadFile(u)
		if err != nil {
			t.Fatal(err)
		}
		if u != timer && !bytes.Contains(b, []byte("ExecStart="+binPath+" ")) {
			t.Fatalf("%s: ExecStart does not start %s", u, binPath)
		}
		if err := os.WriteFile(filepath.Join(dir, u), bytes.ReplaceAll(b, []byte(binPath), []byte(bin)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir, bin
}

// TestUnitsVerify runs systemd-analyze verify on the units, and
// security on the service, whose exposure must stay low.
func TestUnitsVerify(t *testing.T) {
	sa := need(t, "systemd-analyze")
	dir, _ := build(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, sa, "verify", "--man=no", filepath.Join(dir, service), filepath.Join(dir, window), filepath.Join(dir, timer))
	out, err := cmd.CombinedOutput()
	// Complaints about units of the host (not ours) are not ours to fix.
	var ours []string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if strings.Contains(line, "node-provisioner") {
			ours = append(ours, line)
		}
	}
	if err != nil || len(ours) > 0 {
		t.Errorf("systemd-analyze verify: %v\n%s", err, out)
	}
	out, err = exec.CommandContext(ctx, sa, "security", "--offline=true", "--no-pager", filepath.Join(dir, service)).CombinedOutput()
	m := regexp.MustCompile(`Overall exposure level for node-provisioner.service: ([0-9.]+)`).FindSubmatch(out)
	if m == nil {
		t.Fatalf("systemd-analyze security: %v\n%s", err, out)
	}
	score, _ := strconv.ParseFloat(string(m[1]), 64)
	t.Logf("systemd-analyze security: exposure %.1f", score)
	if score > maxScore {
		t.Errorf("exposure %.1f, want at most %.1f:\n%s", score, maxScore, out)
	}
}

// TestServiceCommandLineRuns runs the service's ExecStart as systemd
// would expand it (STATE_DIRECTORY set, the daemon arguments split into
// words) on loopback: the API answers over TLS with the state folder's
// certificate, the log is JSON, and SIGTERM stops it with exit 0.
func TestServiceCommandLineRuns(t *testing.T) {
	dir, _ := build(t)
	unit, err := os.ReadFile(filepath.Join(dir, service))
	if err != nil {
		t.Fatal(err)
	}
	var execStart string
	for s := bufio.NewScanner(bytes.NewReader(unit)); s.Scan(); {
		if v, ok := strings.CutPrefix(s.Text(), "ExecStart="); ok {
			execStart = v
		}
	}
	state := filepath.Join(t.TempDir(), "state")
	os.MkdirAll(state, 0o700)
	var argv []string
	for _, w := range strings.Fields(execStart) {
		switch {
		case w == "$NODE_PROVISIONER_DAEMON_ARGS":
			argv = append(argv, "--api", "127.0.0.1:0", "--http", "127.0.0.1:0")
		default:
			argv = append(argv, strings.ReplaceAll(w, "${STATE_DIRECTORY}", state))
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), "HOME="+state, "NODE_PROVISIONER_STATE_DIR=")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	type rec struct {
		Msg, Addr string
		Fp        string `json:"cert_fingerprint"`
	}
	var msgs []string
	lines := bufio.NewScanner(stderr)
	var listening rec
	for listening.Addr == "" && lines.Scan() {
		var r rec
		if err := json.Unmarshal(lines.Bytes(), &r); err != nil {
			t.Errorf("log line is not JSON: %q", lines.Text())
			continue
		}
		msgs = append(msgs, r.Msg)
		if r.Msg == "management API listening" {
			listening = r
		}
	}
	if listening.Addr == "" {
		cmd.Process.Kill()
		t.Fatalf("the daemon did not listen: %s", strings.Join(msgs, "\n"))
	}
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	resp, err := hc.Get("https://" + listening.Addr + "/api/v1/health")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	fp := ""
	if resp.TLS != nil && len(resp.TLS.PeerCertificates) > 0 {
		sum := sha256.Sum256(resp.TLS.PeerCertificates[0].Raw)
		fp = strings.ToUpper(strings.ReplaceAll(fmt.Sprintf("% x", sum[:]), " ", ":"))
	}
	if resp.StatusCode != 200 || fp != listening.Fp {
		t.Errorf("health: %d, certificate %s, logged %s", resp.StatusCode, fp, listening.Fp)
	}
	cmd.Process.Signal(syscall.SIGTERM)
	for lines.Scan() {
		var r rec
		if err := json.Unmarshal(lines.Bytes(), &r); err != nil {
			t.Errorf("log line is not JSON: %q", lines.Text())
		}
		msgs = append(msgs, r.Msg)
	}
	if err := cmd.Wait(); err != nil {
		t.Errorf("after SIGTERM: %v\n%s", err, strings.Join(msgs, "\n"))
	}
	if !slices.Contains(msgs, "management API stopped") {
		t.Errorf("log messages:\n%s", strings.Join(msgs, "\n"))
	}
	if fi, err := os.Stat(filepath.Join(state, ".node-secrets")); err == nil && fi.Mode().Perm() != 0o700 {
		t.Errorf("secrets folder mode %v", fi.Mode().Perm())
	}
}
