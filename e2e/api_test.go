package e2e

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/plasmactl/plasma-node/answer"
	"github.com/plasmactl/plasma-node/internal/atomicfile"
	"github.com/plasmactl/plasma-node/pxe/client"
	"github.com/plasmactl/plasma-node/pxe/registry"
	"github.com/plasmactl/plasma-node/pxe/store/folder"
)

// apiDaemon is a node-provisioner daemon process on a state folder.
type apiDaemon struct {
	cmd  *exec.Cmd
	logs *bytes.Buffer
}

// startDaemon starts node-provisioner daemon on state with its API on
// addr and waits until it answers.
func startDaemon(t *testing.T, state, addr string, c *client.Client) *apiDaemon {
	t.Helper()
	cmd := exec.Command(filepath.Join(bin, "node-provisioner"), "--state-dir", state, "--secrets-dir", filepath.Join(state, "secrets"),
		"--log-format", "json", "daemon", "--api", addr, "--http", "127.0.0.1:0")
	cmd.Env = append(os.Environ(), "HOME="+state)
	d := &apiDaemon{cmd: cmd, logs: &bytes.Buffer{}}
	cmd.Stderr = d.logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for c.Health(ctx) != nil {
		if ctx.Err() != nil {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("the daemon did not answer:\n%s", d.logs)
		}
	}
	return d
}

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

func npOut(t *testing.T, state string, args ...string) string {
	t.Helper()
	cmd := exec.Command(filepath.Join(bin, "node-provisioner"), append([]string{"--state-dir", state}, args...)...)
	cmd.Env = append(os.Environ(), "HOME="+state)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node-provisioner %v: %v", args, err)
	}
	return strings.TrimSpace(string(out))
}

// TestAPIKillDuringRegistrationBurst: 100 registrations at once through
// the Go client, and the daemon killed (SIGKILL) in the middle and
// started again. Every registration that got a 2xx is on disk after the
// restart, whole, once; no file is half-written; no pin is held twice;
// the API lists exactly the files.
func TestAPIKillDuringRegistrationBurst(t *testing.T) {
	state := t.TempDir()
	tok := npOut(t, state, "token", "create", "burst", "--scope", "register")
	fp := npOut(t, state, "tls", "fingerprint")
	addr := freeAddr(t)
	c, err := client.New(client.Options{URL: "https://" + addr, Token: tok, Fingerprint: fp, Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	d := startDaemon(t, state, addr, c)
	const n = 100
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		ok       = map[string]registry.Registration{}
		failed   = map[string]error{}
		finished atomic.Int32
	)
	start := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			r := registry.Registration{Name: fmt.Sprintf("burst%03d", i), MACs: []string{fmt.Sprintf("52:54:00:b0:%02x:%02x", i/256, i%256)},
				BootDisk: answer.BootDisk{Kind: answer.BootDiskAny}, Serial: fmt.Sprintf("SN-BURST-%03d", i)}
			<-start
			_, err := c.Register(context.Background(), r, registry.RegisterOptions{})
			finished.Add(1)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				failed[r.Name] = err
				return
			}
			ok[r.Name] = r
		})
	}
	close(start)
	// Kill the daemon once a few registrations are through.
	for finished.Load() < 10 {
		time.Sleep(time.Millisecond)
	}
	d.cmd.Process.Kill()
	d.cmd.Wait()
	killedAt := finished.Load()
	d = startDaemon(t, state, addr, c)
	defer func() {
		d.cmd.Process.Kill()
		d.cmd.Wait()
	}()
	wg.Wait()
	t.Logf("%d registered before the kill was seen, %d registered in all, %d failed", killedAt, len(ok), len(failed))
	if len(ok) < 10 {
		t.Errorf("only %d registrations got a 2xx", len(ok))
	}

	// The files: whole, each once, with nothing left half-written.
	dir := filepath.Join(state, "registrations")
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	onDisk := map[string]registry.Registration{}
	for _, e := range ents {
		name := e.Name()
		switch {
		case name == ".lock":
			continue
		case atomicfile.IsTemp(name):
			t.Errorf("a temporary file is left after the restart: %s", name)
			continue
		case !strings.HasSuffix(name, ".json"):
			t.Errorf("unexpected file %s", name)
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		r, err := registry.DecodeRegistration(data, strings.TrimSuffix(name, ".json"))
		if err != nil {
			t.Errorf("%s is not a whole registration: %v", name, err)
			continue
		}
		onDisk[r.Name] = r
	}
	for name, want := range ok {
		got, there := onDisk[name]
		if !there {
			t.Errorf("%s got a 2xx but is not on disk", name)
			continue
		}
		if got.MACs[0] != want.MACs[0] || got.Serial != want.Serial {
			t.Errorf("%s on disk: %+v, want %+v", name, got, want)
		}
	}
	reg, err := folder.OpenRegistrations(state, nil)
	if err != nil {
		t.Fatal(err)
	}
	pending, err := reg.Pending(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if cs := registry.Collisions(pending); len(cs) > 0 {
		t.Errorf("pins held twice: %v", cs)
	}
	nodes, err := c.Nodes(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(nodes) != len(onDisk) {
		t.Errorf("the API lists %d nodes, the folder holds %d", len(nodes), len(onDisk))
	}
	// A registration that failed may be on disk (its reply was lost with
	// the daemon): then it is whole, as checked above.
	for name, err := range failed {
		t.Logf("%s failed: %v", name, err)
	}
	if strings.Contains(d.logs.String(), tok) {
		t.Error("the daemon logged the token")
	}
}

// TestAPIWindowSurvivesKill: a window opened through the API reopens
// after the daemon is killed (SIGKILL) and started again, until its
// deadline; a window whose deadline passes while the daemon is down
// stays closed.
func TestAPIWindowSurvivesKill(t *testing.T) {
	state := t.TempDir()
	tok := npOut(t, state, "token", "create", "ops", "--scope", "admin")
	fp := npOut(t, state, "tls", "fingerprint")
	addr := freeAddr(t)
	c, err := client.New(client.Options{URL: "https://" + addr, Token: tok, Fingerprint: fp})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	d := startDaemon(t, state, addr, c)
	w, err := c.OpenWindow(ctx, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	d.cmd.Process.Kill()
	d.cmd.Wait()
	d = startDaemon(t, state, addr, c)
	got, err := c.Window(ctx)
	if diff := got.Deadline.Sub(w.Deadline); err != nil || !got.Open || !got.Daemon || got.PID != d.cmd.Process.Pid || diff < -time.Second || diff > time.Second {
		t.Errorf("after kill and restart: %+v %v (opened until %s)", got, err, w.Deadline)
	}
	if err := c.CloseWindow(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := c.OpenWindow(ctx, 2*time.Second); err != nil {
		t.Fatal(err)
	}
	d.cmd.Process.Kill()
	d.cmd.Wait()
	time.Sleep(3 * time.Second)
	d = startDaemon(t, state, addr, c)
	defer func() {
		d.cmd.Process.Kill()
		d.cmd.Wait()
	}()
	if got, err := c.Window(ctx); err != nil || got.Open {
		t.Errorf("deadline passed while down: %+v %v", got, err)
	}
	if !strings.Contains(d.logs.String(), "the window's deadline passed while the daemon was down") {
		t.Errorf("daemon log:\n%s", d.logs)
	}
}
