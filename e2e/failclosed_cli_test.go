package e2e

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/plasmactl/plasma-node/internal/fakehcloud"
	"github.com/plasmactl/plasma-node/nodes"
)

// pnExit runs plasma-node on project dir with env added to a clean
// environment and returns its exit code and combined output.
func pnExit(t *testing.T, dir string, env []string, args ...string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c := exec.CommandContext(ctx, filepath.Join(bin, "plasma-node"), append([]string{"--dir", dir}, args...)...)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "NODE_PROVISIONER_") && !strings.HasPrefix(kv, "HCLOUD_") {
			c.Env = append(c.Env, kv)
		}
	}
	c.Env = append(append(c.Env, "HOME="+dir), env...)
	out, err := c.CombinedOutput()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("plasma-node %v: %v", args, err)
	}
	return code, string(out)
}

// TestPlasmaNodeFailsClosed: through the binary, destroy and delete of a
// pxe platform whose registrations cannot be reached (a provisioner
// folder that is not there, a provisioner_url nothing answers) exit 1
// saying so and change nothing, the registrations still pending; a count
// of 99999 is exit 2 naming the bound; a top-level typo in platform.yaml
// (poolz:) is exit 2 naming the section meant; neither writes.
func TestPlasmaNodeFailsClosed(t *testing.T) {
	dir, state := t.TempDir(), t.TempDir()
	hw := filepath.Join(state, "hardware.yaml")
	os.WriteFile(hw, []byte("machines:\n  - macs: [\"52:54:00:fe:00:01\"]\n    boot_disk: sda\n"), 0o644)
	ok := func(args ...string) {
		t.Helper()
		if code, out := pnExit(t, dir, nil, args...); code != 0 {
			t.Fatalf("plasma-node %v: exit %d\n%s", args, code, out)
		}
	}
	ok("add", "metal", "--provider", "pxe", "--domain", "mgmt.example")
	ok("--provisioner-dir", filepath.Join(state, "np"), "provision", "metal", "-z", "foundation.cluster.control:pve:1", "--hardware", hw, "--auto-approve")
	regs := func() int {
		names, _ := filepath.Glob(filepath.Join(state, "np", "registrations", "*.json"))
		return len(names)
	}
	refused := func(name string, env []string, args ...string) {
		t.Helper()
		before := snapshotFiles(t, dir)
		code, out := pnExit(t, dir, env, args...)
		if code != 1 || !strings.Contains(out, "registrations not reachable") || strings.Contains(out, "Withdrew") {
			t.Errorf("%s: exit %d\n%s\nwant 1 saying the registrations are not reachable", name, code, out)
		}
		if diff := cmp.Diff(before, snapshotFiles(t, dir)); diff != "" {
			t.Errorf("%s changed the project (-before +after):\n%s", name, diff)
		}
		if regs() != 1 {
			t.Errorf("%s: %d pending registrations, want the one kept", name, regs())
		}
	}
	absent := filepath.Join(state, "absent")
	refused("destroy through an absent folder", nil, "--provisioner-dir", absent, "destroy", "metal", "--force")
	refused("delete through an absent folder", nil, "--provisioner-dir", absent, "delete", "metal-control-001", "--force")
	if _, err := nodes.Open(dir, nodes.Options{}).UpdatePlatform(context.Background(), "metal", func(p *nodes.Platform) error {
		p.Infrastructure.ProvisionerDir = ""
		p.Infrastructure.ProvisionerURL = "https://127.0.0.1:1"
		p.Infrastructure.ProvisionerFingerprint = strings.Repeat("AB:", 31) + "AB"
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	token := []string{"NODE_PROVISIONER_TOKEN=npt_unreachable"}
	refused("destroy through a provisioner_url nothing answers", token, "destroy", "metal", "--force")
	refused("delete through a provisioner_url nothing answers", token, "delete", "metal-control-001", "--force")

	ok("add", "demo", "--provider", "hetzner")
	before := snapshotFiles(t, dir)
	if code, out := pnExit(t, dir, nil, "provision", "demo", "-z", "web:cx22:99999", "--auto-approve"); code != 2 || !strings.Contains(out, "count 99999 is over 999") {
		t.Errorf("provision of 99999: exit %d\n%s\nwant 2 naming the bound", code, out)
	}
	f := filepath.Join(dir, "platforms", "demo", "platform.yaml")
	b, _ := os.ReadFile(f)
	os.WriteFile(f, append(b, []byte("poolz:\n  web: {count: 1}\n")...), 0o644)
	if code, out := pnExit(t, dir, nil, "add", "demo", "--hostname", "node003", "--public-ip", "51.159.0.3"); code != 2 || !strings.Contains(out, "poolz") || !strings.Contains(out, "pools") {
		t.Errorf("add with poolz: in platform.yaml: exit %d\n%s\nwant 2 naming poolz and pools", code, out)
	}
	os.WriteFile(f, b, 0o644)
	if diff := cmp.Diff(before, snapshotFiles(t, dir)); diff != "" {
		t.Errorf("the refused commands wrote (-before +after):\n%s", diff)
	}
}

// TestDeleteKeepServerLowersThePool: through the binary with the real tofu
// against the fake Hetzner API, delete NODE --keep-server removes the
// node file, keeps its server and lowers its pool's count, so the next
// provision creates no second server of its hostname.
func TestDeleteKeepServerLowersThePool(t *testing.T) {
	token := strings.Repeat("f", 64)
	fake := fakehcloud.Start(token)
	defer fake.Close()
	f := newFlow(t, fake, token, nodes.State{})
	ctx := context.Background()
	f.ok(ctx, "provision", "demo", "-z", "web:cx22:2", "--auto-approve")
	out := f.ok(ctx, "delete", "demo-web-002", "--keep-server", "--force")
	if !strings.Contains(out, "Kept server") || !strings.Contains(out, "count lowered by one") {
		t.Errorf("delete --keep-server: %q", out)
	}
	if n := len(fake.Servers()); n != 2 {
		t.Errorf("%d servers after delete --keep-server, want both kept", n)
	}
	if p, err := nodes.Open(f.project, nodes.Options{}).Platform(ctx, "demo"); err != nil || p.Pools["web"].Count != 1 {
		t.Errorf("pool web after delete --keep-server: %+v %v, want count 1", p.Pools["web"], err)
	}
	if out := f.ok(ctx, "provision", "demo", "--auto-approve"); !strings.Contains(out, noChange) {
		t.Errorf("provision after delete --keep-server changes something:\n%s", out)
	}
	if n := len(fake.Servers()); n != 2 {
		t.Errorf("%d servers after the next provision, want 2 (no second demo-web-002)", n)
	}
}

// TestTheCLIsVoiceAndExitCodes: through the node-provisioner binary, a
// re-registration's warning is said once in its voice with no log line
// beside it; --ttl 7200 is seconds; a malformed --http address and an
// empty --boot-disk are bad input, exit 2, writing nothing.
func TestTheCLIsVoiceAndExitCodes(t *testing.T) {
	e := newProvisionerEnv(t)
	e.run(t, "register", "a1", "--mac", "52:54:00:fe:01:01", "--boot-disk", "sda")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := e.cmd(ctx, "register", "a1", "--mac", "52:54:00:fe:01:02", "--boot-disk", "sda")
	var stderr strings.Builder
	c.Stderr = &stderr
	if err := c.Run(); err != nil {
		t.Fatalf("re-register: %v\n%s", err, stderr.String())
	}
	want := "node-provisioner: warning: a1 was registered already and is replaced: macs 52:54:00:fe:01:01 -> 52:54:00:fe:01:02\n"
	if stderr.String() != want {
		t.Errorf("re-register: stderr %q, want exactly %q", stderr.String(), want)
	}
	before := regularFilesUnder(t, e.state)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"serve", "--ttl", "7200", "--http", "nonsense"}, `--http "nonsense": invalid listen address: no port (want HOST:PORT`},
		{[]string{"serve", "--ttl", "2x", "--http", "127.0.0.1:0"}, "or a number of seconds such as 7200"},
		{[]string{"register", "pve1", "--mac", "52:54:00:fe:01:03", "--boot-disk", ""}, "--boot-disk: empty value"},
	} {
		if code, out := e.npExit(t, tc.args...); code != 2 || !strings.Contains(out, tc.want) {
			t.Errorf("%v: exit %d\n%s\nwant 2 with %q", tc.args, code, out, tc.want)
		}
	}
	if after := regularFilesUnder(t, e.state); !slices.Equal(before, after) {
		t.Errorf("bad input wrote: %v, was %v", after, before)
	}
	// --ttl 7200 is two hours: the window's deadline says so.
	t.Cleanup(func() { e.npExit(t, "disable") })
	if code, out := e.npExit(t, "enable", "--http", "127.0.0.1:0", "--ttl", "7200"); code != 0 {
		t.Fatalf("enable --ttl 7200: exit %d\n%s", code, out)
	}
	out, _, _ := npRun(t, e.state, "", "status", "-o", "json")
	var st struct {
		Window struct {
			Deadline time.Time `json:"deadline"`
		} `json:"window"`
	}
	json.Unmarshal([]byte(out), &st)
	if left := time.Until(st.Window.Deadline); left < 119*time.Minute || left > 121*time.Minute {
		t.Errorf("enable --ttl 7200: %s left, want 2h (status %s)", left, out)
	}
}

// regularFilesUnder lists the regular files under dir, relative, sorted.
func regularFilesUnder(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, rel)
		}
		return nil
	})
	slices.Sort(out)
	return out
}
