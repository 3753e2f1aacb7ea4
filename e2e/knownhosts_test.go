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
	pn := l.project(t)
	hw := filepath.Join(pn.proj, "hardware.yaml")
	os.WriteFile(hw, []byte("machines:\n  - macs: [\"52:54:00:77:16:10\"]\n    boot_disk: any\n"), 0o644)
	pn.run(t, "add", "metal", "--provider", "pxe", "--domain", "e2e.test")
	pn.run(t, "provision", "metal", "-z", "foundation.cluster.control:pve:1", "--hardware", hw, "--auto-approve")
	if out := pn.run(t, "known-hosts", "metal"); out != "" {
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
	pn.wantKnownHost(t, addr, fp)
	if out := pn.run(t, "refresh", "metal"); !strings.Contains(out, "Refreshed metal-control-001@metal: installed address "+addr+", 2 host keys") {
		t.Errorf("refresh: %q", out)
	}
	node := readFile(pn.nodeFile("metal-control-001"))
	if !strings.Contains(node, "installed_ip: "+addr+"\n") || !strings.Contains(node, "ssh_host_keys:\n  - ssh-ed25519 ") || !strings.Contains(node, "  - ecdsa-sha2-nistp256 ") {
		t.Errorf("the node file after refresh:\n%s", node)
	}
}
