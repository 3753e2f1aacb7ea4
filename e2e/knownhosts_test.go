package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestKnownHostsOfAnInstalledNode: plasma-node provisions a pxe platform
// into the lab's state folder, the machine boots into the installer
// emulator, whose webhook posts its address and fresh host keys; then
// ssh-keygen -F ADDRESS -f <(plasma-node known-hosts metal) finds the
// ed25519 key the emulator posted, by the address it reported, and
// plasma-node refresh writes that address and the keys into the node
// file.
func TestKnownHostsOfAnInstalledNode(t *testing.T) {
	t.Parallel()
	media := netbootPrereqs(t)
	if _, err := exec.LookPath("ssh-keygen"); err != nil {
		skipOrFail(t, "needs ssh-keygen (Debian package openssh-client)")
	}
	l := newLab(t, 22, labOptions{})
	proj := t.TempDir()
	pn := func(args ...string) string {
		t.Helper()
		c := exec.Command(filepath.Join(bin, "plasma-node"), append([]string{"--dir", proj, "--provisioner-dir", l.state}, args...)...)
		c.Env = l.env
		out, err := c.Output()
		if err != nil {
			t.Fatalf("plasma-node %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	hw := filepath.Join(proj, "hardware.yaml")
	os.WriteFile(hw, []byte("machines:\n  - macs: [\"52:54:00:77:16:10\"]\n    boot_disk: any\n"), 0o644)
	pn("add", "metal", "--provider", "pxe", "--domain", "e2e.test")
	pn("provision", "metal", "-z", "foundation.cluster.control:pve:1", "--hardware", hw, "--auto-approve")
	if out := pn("known-hosts", "metal"); out != "" {
		t.Errorf("known-hosts before the install: %q; want nothing", out)
	}
	l.serve(t, media)
	m := l.boot(t, vmOptions{name: "metal-control-001", mac: "52:54:00:77:16:10", rom: true, limit: 60 * time.Second})
	m.wantOK(t, "metal-control-001.")
	addr, _, _ := strings.Cut(m.markerField("address"), "/")
	fp := m.markerField("hostkey")
	if addr == "" || !strings.HasPrefix(fp, "SHA256:") {
		t.Fatalf("the marker names no address or host key: %q", m.detail)
	}
	kh := filepath.Join(t.TempDir(), "known_hosts")
	if err := os.WriteFile(kh, []byte(pn("known-hosts", "metal")), 0o600); err != nil {
		t.Fatal(err)
	}
	found, err := exec.Command("ssh-keygen", "-F", addr, "-f", kh).Output()
	if err != nil {
		t.Fatalf("ssh-keygen -F %s finds nothing: %v\n%s", addr, err, readFile(kh))
	}
	// ssh-keygen -l of what -F found: the posted key is among them.
	lines := filepath.Join(t.TempDir(), "found")
	os.WriteFile(lines, found, 0o600)
	fps, err := exec.Command("ssh-keygen", "-l", "-f", lines).Output()
	if err != nil || !strings.Contains(string(fps), fp) {
		t.Errorf("ssh-keygen -F %s found keys %s (%v); want the posted %s\nknown_hosts:\n%s", addr, fps, err, fp, readFile(kh))
	}
	if out := pn("refresh", "metal"); !strings.Contains(out, "Refreshed metal-control-001@metal: installed address "+addr+", 2 host keys") {
		t.Errorf("refresh: %q", out)
	}
	node := readFile(filepath.Join(proj, "platforms", "metal", "nodes", "metal-control-001.yaml"))
	if !strings.Contains(node, "installed_ip: "+addr+"\n") || !strings.Contains(node, "ssh_host_keys:\n  - ssh-ed25519 ") || !strings.Contains(node, "  - ecdsa-sha2-nistp256 ") {
		t.Errorf("the node file after refresh:\n%s", node)
	}
}
