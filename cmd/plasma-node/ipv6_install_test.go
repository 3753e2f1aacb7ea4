package main

import (
	"context"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/plasmactl/plasma-node/pxe/store/folder"
)

// TestAnIPv6InstallGoesIntoTheNodeFileAndKnownHosts: an installer whose
// webhook reports an IPv6 management address (written as it may be,
// uncompressed) has refresh write it, canonical, into the node file's
// installed_ip and installed_prefix, and known-hosts put it on the key's
// line (no port is named, so no brackets), which ssh-keygen -F finds.
func TestAnIPv6InstallGoesIntoTheNodeFileAndKnownHosts(t *testing.T) {
	dir, st := t.TempDir(), t.TempDir()
	hw := filepath.Join(dir, "hardware.yaml")
	os.WriteFile(hw, []byte("machines:\n  - macs: [\"52:54:00:12:34:56\"]\n    boot_disk: sda\n"), 0o644)
	mustRun(t, dir, "add", "metal", "--provider", "pxe", "--domain", "lab.example")
	mustRun(t, dir, "--provisioner-dir", st, "provision", "metal", "-z", "foundation.cluster.control:pve:1", "--hardware", hw, "--auto-approve")
	in := installed(t, st, "metal-control-001")
	ins, err := folder.OpenInstalls(st)
	if err != nil {
		t.Fatal(err)
	}
	in.Report.Management.Address = netip.MustParsePrefix("2001:0db8:0005:0000:0000:0000:0000:0010/64")
	if err := ins.Put(context.Background(), in); err != nil {
		t.Fatal(err)
	}
	if out := mustRun(t, dir, "--provisioner-dir", st, "refresh", "metal"); out != "Refreshed metal-control-001@metal: installed address 2001:db8:5::10, 1 host keys\n" {
		t.Errorf("refresh: %q", out)
	}
	got, _ := os.ReadFile(filepath.Join(dir, "platforms", "metal", "nodes", "metal-control-001.yaml"))
	for _, want := range []string{"installed_ip: 2001:db8:5::10\n", "installed_prefix: 64\n"} {
		if !strings.Contains(string(got), want) {
			t.Errorf("the node file lacks %q:\n%s", want, got)
		}
	}
	out := mustRun(t, dir, "--provisioner-dir", st, "known-hosts", "metal")
	if want := "metal-control-001,metal-control-001.lab.example,2001:db8:5::10 " + in.Report.HostKeys[0] + "\n"; out != want {
		t.Errorf("known-hosts:\n%s\nwant:\n%s", out, want)
	}
	if _, err := exec.LookPath("ssh-keygen"); err != nil {
		if os.Getenv("PLASMA_E2E") == "1" {
			t.Fatal("needs ssh-keygen (Debian package openssh-client)")
		}
		t.Skip("needs ssh-keygen (Debian package openssh-client)")
	}
	kh := filepath.Join(t.TempDir(), "known_hosts")
	os.WriteFile(kh, []byte(out), 0o600)
	if found, err := exec.Command("ssh-keygen", "-F", "2001:db8:5::10", "-f", kh).Output(); err != nil || !strings.Contains(string(found), in.Report.HostKeys[0]) {
		t.Errorf("ssh-keygen -F 2001:db8:5::10: %v\n%s", err, found)
	}
}
