package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/plasmactl/plasma-node/answer"
	"github.com/plasmactl/plasma-node/pxe/backend"
	"github.com/plasmactl/plasma-node/pxe/events"
	"github.com/plasmactl/plasma-node/pxe/registry"
	"github.com/plasmactl/plasma-node/pxe/registry/installtest"
	"github.com/plasmactl/plasma-node/pxe/store"
	"github.com/plasmactl/plasma-node/pxe/store/folder"
)

// installed marks registration name of the state folder installed with
// installtest.Sample's report, as the window does when its webhook comes.
func installed(t *testing.T, dir, name string) registry.Install {
	t.Helper()
	ctx := context.Background()
	stores, err := store.Open(t.Context(), dir, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	in := installtest.Sample(name)
	if _, err := stores.Registrations().Consume(ctx, name, registry.ConsumeRecord{Time: in.Reported.Add(-5 * time.Minute), ClientIP: "192.0.2.10"}); err != nil {
		t.Fatal(err)
	}
	if err := stores.Events().Append(ctx, backend.Event{Time: in.Reported, Kind: events.Installed, Node: name, Status: 200}); err != nil {
		t.Fatal(err)
	}
	ins, err := stores.Installs()
	if err != nil {
		t.Fatal(err)
	}
	if err := ins.Put(ctx, in); err != nil {
		t.Fatal(err)
	}
	return in
}

// pxeProject makes a project with the pxe platform metal (domain
// lab.example) and provisions one control node per MAC (boot disk sda)
// into a new provisioner state folder: the project's folder and the
// state folder.
func pxeProject(t *testing.T, macs ...string) (dir, st string) {
	t.Helper()
	dir, st = t.TempDir(), t.TempDir()
	var hw strings.Builder
	hw.WriteString("machines:\n")
	for _, m := range macs {
		fmt.Fprintf(&hw, "  - macs: [%q]\n    boot_disk: sda\n", m)
	}
	file := filepath.Join(dir, "hardware.yaml")
	os.WriteFile(file, []byte(hw.String()), 0o644)
	mustRun(t, dir, "add", "metal", "--provider", "pxe", "--domain", "lab.example")
	mustRun(t, dir, "--provisioner-dir", st, "provision", "metal", "-z", fmt.Sprintf("foundation.cluster.control:pve:%d", len(macs)), "--hardware", file, "--auto-approve")
	return dir, st
}

// reported stores in (of [installed]) again with edit applied to its
// report, as a webhook saying so would have: the install returned.
func reported(t *testing.T, st string, in registry.Install, edit func(*answer.InstallReport)) registry.Install {
	t.Helper()
	ins, err := folder.OpenInstalls(st)
	if err != nil {
		t.Fatal(err)
	}
	edit(&in.Report)
	if err := ins.Put(context.Background(), in); err != nil {
		t.Fatal(err)
	}
	return in
}

// wantKnownHost: ssh-keygen -F finds key in the known_hosts text kh by
// each of names. Without ssh-keygen the test skips (fails under
// PLASMA_E2E=1).
func wantKnownHost(t *testing.T, kh, key string, names ...string) {
	t.Helper()
	if _, err := exec.LookPath("ssh-keygen"); err != nil {
		if os.Getenv("PLASMA_E2E") == "1" {
			t.Fatal("needs ssh-keygen (Debian package openssh-client)")
		}
		t.Skip("needs ssh-keygen (Debian package openssh-client)")
	}
	file := filepath.Join(t.TempDir(), "known_hosts")
	os.WriteFile(file, []byte(kh), 0o600)
	for _, name := range names {
		found, err := exec.Command("ssh-keygen", "-F", name, "-f", file).Output()
		if err != nil || !strings.Contains(string(found), key) {
			t.Errorf("ssh-keygen -F %s: %v\n%s", name, err, found)
		}
	}
}

// TestKnownHostsOfAPXEPlatform: known-hosts prints a known_hosts line per
// host key of the platform's installed nodes, by hostname, FQDN and
// reported address, which ssh-keygen -F finds by each of them; a node
// not installed yet has none, and a platform whose provider reports no
// host keys is refused.
func TestKnownHostsOfAPXEPlatform(t *testing.T) {
	dir, st := pxeProject(t, "52:54:00:12:34:56", "52:54:00:de:ad:02")
	if out := mustRun(t, dir, "--provisioner-dir", st, "known-hosts", "metal"); out != "" {
		t.Errorf("known-hosts before any install: %q; want nothing", out)
	}
	in := installed(t, st, "metal-control-001")
	out := mustRun(t, dir, "--provisioner-dir", st, "known-hosts", "metal")
	want := "metal-control-001,metal-control-001.lab.example,192.0.2.10 " + in.Report.HostKeys[0] + "\n"
	if out != want {
		t.Errorf("known-hosts:\n%s\nwant:\n%s", out, want)
	}
	if r := plasma(t, dir, "known-hosts", "nosuch"); r.code == 0 || !strings.Contains(r.err, "nosuch") {
		t.Errorf("known-hosts of an unknown platform: exit %d, stderr %q", r.code, r.err)
	}
	mustRun(t, dir, "add", "cloud", "--provider", "manual", "--domain", "lab.example")
	mustRun(t, dir, "register", "cloud", "--hostname", "web1", "--public-ip", "203.0.113.5")
	if r := plasma(t, dir, "known-hosts", "cloud"); r.code != 1 || !strings.Contains(r.err, "the provider reports no host keys") {
		t.Errorf("known-hosts of a platform of manual nodes: exit %d, stderr %q; want 1 saying no host keys", r.code, r.err)
	}
	wantKnownHost(t, out, in.Report.HostKeys[0], "192.0.2.10", "metal-control-001", "metal-control-001.lab.example")
	kh := filepath.Join(t.TempDir(), "known_hosts")
	os.WriteFile(kh, []byte(out), 0o600)
	if found, err := exec.Command("ssh-keygen", "-F", "192.0.2.11", "-f", kh).Output(); err == nil {
		t.Errorf("ssh-keygen -F of another address found:\n%s", found)
	}
}
