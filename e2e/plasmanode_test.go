package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// projectOf is a plasma-node project folder whose pxe provider's
// provisioner state is a lab's.
type projectOf struct {
	l    *bootLab
	proj string
	// dl, when set, is the lab's daemon: plasma-node runs on the other
	// host (the site namespace) with the register token and env, and the
	// platform reaches the state folder through the daemon's API.
	dl  *daemonLab
	env []string
}

// project makes a plasma-node project folder on the lab's state folder.
func (l *bootLab) project(t *testing.T) *projectOf {
	t.Helper()
	return &projectOf{l: l, proj: t.TempDir()}
}

// run runs plasma-node on the project and returns its output; a failure
// fails the test.
func (p *projectOf) run(t *testing.T, args ...string) string {
	t.Helper()
	if p.dl != nil {
		code, out := p.dl.onSite(t, p.dl.tokens["register"], p.env, "plasma-node", append([]string{"--dir", p.proj}, args...)...)
		if code != 0 {
			t.Fatalf("plasma-node %s: exit %d\n%s", strings.Join(args, " "), code, out)
		}
		return out
	}
	c := exec.Command(filepath.Join(bin, "plasma-node"), append([]string{"--dir", p.proj, "--provisioner-dir", p.l.state}, args...)...)
	c.Env = p.l.env
	out, err := c.Output()
	if err != nil {
		t.Fatalf("plasma-node %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// nodeFile is the path of a node file of platform metal.
func (p *projectOf) nodeFile(node string) string {
	return filepath.Join(p.proj, "platforms", "metal", "nodes", node+".yaml")
}

// staticPool is an ip pool of the pxe platform: its cidr, range,
// gateway and DNS server.
type staticPool struct{ cidr, first, last, gateway, dns string }

// provisionStatic adds the pxe platform metal (domain e2e.test) whose
// install network is pool, and provisions one control node from it on
// the machine with mac; it returns provision's output.
func (p *projectOf) provisionStatic(t *testing.T, mac string, pool staticPool) string {
	t.Helper()
	hw := p.staticPlatform(t, fmt.Sprintf("machines:\n  - macs: [%q]\n    boot_disk: any\n", mac), pool)
	return p.run(t, "provision", "metal", "--hardware", hw, "--auto-approve")
}

// staticPlatform adds the pxe platform metal (domain e2e.test; through
// the daemon's API when p has one) whose install network is pool and
// one control node, and writes the hardware list machines; it returns
// the hardware list's path.
func (p *projectOf) staticPlatform(t *testing.T, machines string, pool staticPool) string {
	t.Helper()
	hw := filepath.Join(p.proj, "hardware.yaml")
	os.WriteFile(hw, []byte(machines), 0o644)
	p.run(t, "add", "metal", "--provider", "pxe", "--domain", "e2e.test")
	plat := filepath.Join(p.proj, "platforms", "metal", "platform.yaml")
	raw, _ := os.ReadFile(plat)
	text := string(raw)
	if p.dl != nil {
		text = strings.Replace(text, "infrastructure:\n", fmt.Sprintf("infrastructure:\n  provisioner_url: %s\n  provisioner_fingerprint: %q\n", p.dl.api, p.dl.fp), 1)
	}
	os.WriteFile(plat, []byte(text+fmt.Sprintf(`  ip_pools:
    lab:
      cidr: %q
      range: %s-%s
      gateway: %q
      dns: %q
  install_network: lab
pools:
  control:
    zones: [platform.foundation.cluster.control]
    machine: pve
    count: 1
    ip_pool: lab
`, pool.cidr, pool.first, pool.last, pool.gateway, pool.dns)), 0o644)
	return hw
}

// wantKnownHost: ssh-keygen -F addr -f <(plasma-node known-hosts metal)
// finds the host key whose fingerprint is fp.
func (p *projectOf) wantKnownHost(t *testing.T, addr, fp string) {
	t.Helper()
	kh := filepath.Join(t.TempDir(), "known_hosts")
	if err := os.WriteFile(kh, []byte(p.run(t, "known-hosts", "metal")), 0o600); err != nil {
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
}
