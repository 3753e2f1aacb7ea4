package e2e

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// plant puts something other than a regular file at path: a FIFO (which
// blocks a plain open until a writer comes) or a link to /dev/zero
// (endless).
func plant(t *testing.T, path, kind string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	os.Remove(path)
	var err error
	switch kind {
	case "fifo":
		err = syscall.Mkfifo(path, 0o644)
	case "zero":
		err = os.Symlink("/dev/zero", path)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// finishes runs a command and fails the test unless it ends within 10 s
// (a hang on a FIFO, a read of /dev/zero until memory runs out); it
// returns the command's combined output and exit code.
func finishes(t *testing.T, c *exec.Cmd) (string, int) {
	t.Helper()
	var out lockedBuffer
	c.Stdout, c.Stderr = &out, &out
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- c.Wait() }()
	select {
	case err := <-done:
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return out.String(), ee.ExitCode()
		}
		return out.String(), 0
	case <-time.After(10 * time.Second):
		c.Process.Kill()
		<-done
		t.Fatalf("%s hung (killed after 10 s):\n%s", strings.Join(c.Args, " "), out.String())
		return "", -1
	}
}

// TestNoReadHangsOnANonRegularFile plants a FIFO and a link to /dev/zero
// in every folder the binaries read (registrations, the state folder's
// records, boot assets, platforms, nodes, topology, key files) and runs
// the commands that read them: each ends at once, refusing the file by
// name. Before, a FIFO blocked every answer, status, list and the next
// serve, and /dev/zero ran plasma-node out of memory.
func TestNoReadHangsOnANonRegularFile(t *testing.T) {
	for _, kind := range []string{"fifo", "zero"} {
		t.Run(kind, func(t *testing.T) {
			e := newProvisionerEnv(t)
			e.run(t, "register", "pve1", "--mac", "52:54:00:ba:5e:11", "--boot-disk", "sda")
			for _, p := range []string{"registrations/bad.json", "site.json", "window.json", "assets/9.2-1/manifest.json"} {
				plant(t, filepath.Join(e.state, p), kind)
			}
			key := filepath.Join(e.home, "planted.pub")
			plant(t, key, kind)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			for _, args := range [][]string{
				{"list"}, {"status"}, {"register", "pve2", "--mac", "52:54:00:ba:5e:12", "--ssh-key", key},
				{"serve", "--http", "127.0.0.1:0", "--ttl", "1s"},
			} {
				out, code := finishes(t, e.cmd(ctx, args...))
				if args[0] == "list" && (!strings.Contains(out, "bad") || !strings.Contains(out, "broken")) {
					t.Errorf("list does not show the planted registration as broken (exit %d):\n%s", code, out)
				}
				if args[0] == "register" && (code != 2 || !strings.Contains(out, "planted.pub")) {
					t.Errorf("register --ssh-key with a planted key = exit %d, want 2 naming the file:\n%s", code, out)
				}
			}

			// The event log too: commands that read it refuse it by name.
			os.Remove(filepath.Join(e.state, "site.json"))
			plant(t, filepath.Join(e.state, "events.jsonl"), kind)
			for _, args := range [][]string{{"list"}, {"serve", "--http", "127.0.0.1:0", "--ttl", "1s"}} {
				if out, code := finishes(t, e.cmd(ctx, args...)); code == 0 || !strings.Contains(out, "events.jsonl") {
					t.Errorf("node-provisioner %v with a planted event log: exit %d, want a refusal naming it:\n%s", args, code, out)
				}
			}

			project := t.TempDir()
			pn := func(args ...string) *exec.Cmd {
				return exec.CommandContext(ctx, filepath.Join(bin, "plasma-node"), append([]string{"--dir", project}, args...)...)
			}
			if out, code := finishes(t, pn("add", "demo", "--domain", "example.com")); code != 0 {
				t.Fatalf("add: exit %d\n%s", code, out)
			}
			if out, code := finishes(t, pn("add", "demo", "--hostname", "server1", "--public-ip", "203.0.113.10")); code != 0 {
				t.Fatalf("add server1: exit %d\n%s", code, out)
			}
			plant(t, filepath.Join(project, "platforms", "demo", "nodes", "server2.yaml"), kind)
			plant(t, filepath.Join(project, "topology.yaml"), kind)
			plant(t, filepath.Join(project, "platforms", "other", "platform.yaml"), kind)
			for _, args := range [][]string{{"list"}, {"list", "demo"}, {"show", "server1"}, {"allocate", "server1", "platform.foundation"}} {
				out, code := finishes(t, pn(args...))
				if code == 0 && args[0] == "list" && !strings.Contains(out, "server1") {
					t.Errorf("plasma-node %v: exit 0 without server1:\n%s", args, out)
				}
				if code != 0 && !strings.Contains(out, "not a regular file") && !strings.Contains(out, "no such device") {
					t.Errorf("plasma-node %v: exit %d without naming the planted file's problem:\n%s", args, code, out)
				}
			}
		})
	}
}
