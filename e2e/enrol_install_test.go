package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestEnrolAndInstallOnOnePowerOn: three QEMU machines that differ in
// their disks are powered on once each on an empty registry with two
// install-mode rules: A (a disk of at least 150 MB) and B (an NVMe
// disk). Each boots the discovery agent, whose report the window enrols
// by the rules; A's and B's posts are answered "install", their agents
// reboot them, and their next netboot installs them with the templated
// names, the boot disks the rules chose and static addresses from the
// rules' pools. The third matches neither: its agent powers it off, it
// stays in the inbox, and rule test says why. The templates follow a
// plasma-node platform's node names (metal-control-{n:03},
// metal-nodes-{n:03}), so plasma-node provision of that platform takes
// the two registrations by name; refresh then writes their static
// addresses, boot disks and host keys into the node files, and
// known-hosts holds the keys the installers posted.
func TestEnrolAndInstallOnOnePowerOn(t *testing.T) {
	t.Parallel()
	media := netbootPrereqs(t)
	if _, err := exec.LookPath("unsquashfs"); err != nil {
		skipOrFail(t, "prepare --discovery needs unsquashfs (Debian package squashfs-tools)")
	}
	if _, err := exec.LookPath("ssh-keygen"); err != nil {
		skipOrFail(t, "needs ssh-keygen (Debian package openssh-client)")
	}
	l := newLab(t, 48, labOptions{serveArgs: []string{"--discover"}, prepareArgs: []string{"--discovery"}})
	rules := fmt.Sprintf(`rules:
- name: rule-a
  priority: 10
  mode: install
  hostname: metal-control-{n:03}
  match:
    disks: {min_size: 150MB}
  disks:
    boot: {min_size: 150MB}
  address: {pool: lab-a, cidr: %[1]s.0/24, range: %[1]s.200-%[1]s.204, gateway: %[2]s, dns: %[2]s}
- name: rule-b
  priority: 20
  mode: install
  hostname: metal-nodes-{n:03}
  match:
    disks: {transport: nvme}
  disks:
    boot: {transport: nvme}
  address: {pool: lab-b, cidr: %[1]s.0/24, range: %[1]s.210-%[1]s.214, gateway: %[2]s, dns: %[2]s}
`, l.subnet, l.serverIP())
	rulesFile := filepath.Join(t.TempDir(), "rules.yaml")
	os.WriteFile(rulesFile, []byte(rules), 0o600)
	l.np(t, "rule", "apply", "-f", rulesFile)
	l.serve(t, media)

	dir := t.TempDir()
	disk := func(id, size, device string) []string {
		_, args := vmDisk(t, dir, id, size, device)
		return args
	}
	a := vmOptions{name: "enra", mac: "52:54:00:77:48:0a", uefi: true, reboot: true, limit: 300 * time.Second,
		qemuArgs: append(disk("a1", "64M", "virtio-blk-pci,serial=E2E-A-SMALL"), disk("a2", "200M", "virtio-blk-pci,serial=E2E-A-BIG")...)}
	b := vmOptions{name: "enrb", mac: "52:54:00:77:48:0b", uefi: true, reboot: true, limit: 300 * time.Second,
		qemuArgs: disk("b1", "128M", "nvme,serial=E2E-B-NVME")}
	c := vmOptions{name: "enrc", mac: "52:54:00:77:48:0c", uefi: true, reboot: true, limit: 300 * time.Second,
		qemuArgs: disk("c1", "64M", "virtio-blk-pci,serial=E2E-C-SMALL")}

	start := time.Now()
	ms := l.bootAll(t, a, b)
	mc := l.boot(t, c)
	for _, tc := range []struct {
		m          *machine
		node, disk string
		address    string
	}{{ms[0], "metal-control-001", "disk=vdb", l.subnet + ".200"}, {ms[1], "metal-nodes-001", "disk=nvme0n1", l.subnet + ".210"}} {
		line := fmt.Sprintf("enrol %s: %s, one power-on to installed %s", t.Name(), tc.node, tc.m.took.Round(100*time.Millisecond))
		t.Log(line)
		recordTime(line)
		tc.m.wantSerial(t, "PLASMA-DISCOVERY: OK install")
		tc.m.wantOK(t, tc.node+".")
		tc.m.wantDetail(t, tc.disk, "network=from-answer", "address="+tc.address)
		l.wantEvent(t, "installed", tc.node)
	}
	t.Logf("three machines powered on once, all done in %s", time.Since(start).Round(100*time.Millisecond))
	if !strings.Contains(mc.serial, "PLASMA-DISCOVERY: OK") || strings.Contains(mc.serial, "PLASMA-DISCOVERY: OK install") || strings.Contains(mc.serial, "PLASMA-EMU:") {
		t.Errorf("the machine no rule takes: want its agent's OK, powered off, no install; serial:\n%s", mc.serial)
	}
	list := l.np(t, "list")
	for _, want := range []string{"metal-control-001", "metal-nodes-001"} {
		if !strings.Contains(list, want) {
			t.Errorf("list lacks %s:\n%s", want, list)
		}
	}
	if strings.Contains(list, "enrc") || strings.Contains(list, "E2E-C") {
		t.Errorf("list has the third machine:\n%s", list)
	}
	inbox := l.np(t, "discovered")
	if !strings.Contains(strings.ToLower(inbox), "52:54:00:77:48:0c") {
		t.Errorf("the third machine is not in the inbox:\n%s", inbox)
	}
	test := l.np(t, "rule", "test")
	t.Logf("rule test:\n%s", test)
	if !strings.Contains(strings.ToLower(test), "52:54:00:77:48:0c") || !strings.Contains(test, "below 150 MB of rule rule-a") {
		t.Errorf("rule test does not show the third machine and why rule-a does not take it:\n%s", test)
	}

	wantInventory(t, l, ms)
}

// wantInventory: a pxe platform "metal" provisioned with one node in
// each of the rules' pools takes the enrolled registrations by name, and
// its node files and known_hosts hold what machines a and b (installed
// as metal-control-001 on vdb at .200, metal-nodes-001 on nvme0n1 at
// .210) reported.
func wantInventory(t *testing.T, l *bootLab, ms []*machine) {
	t.Helper()
	pn := l.project(t)
	pn.run(t, "add", "metal", "--provider", "pxe", "--domain", "e2e.test")
	pn.run(t, "provision", "metal", "-z", "foundation.cluster.control:pve:1", "-z", "foundation.cluster.nodes:pve:1", "--auto-approve")
	refreshed := pn.run(t, "refresh", "metal")
	t.Logf("refresh:\n%s", refreshed)
	for i, tc := range []struct{ node, disk, address string }{{"metal-control-001", "/dev/vdb", l.subnet + ".200"}, {"metal-nodes-001", "/dev/nvme0n1", l.subnet + ".210"}} {
		if want := fmt.Sprintf("Refreshed %s@metal: installed address %s, 2 host keys, boot disk %s\n", tc.node, tc.address, tc.disk); !strings.Contains(refreshed, want) {
			t.Errorf("refresh does not say %q", want)
		}
		node := readFile(pn.nodeFile(tc.node))
		for _, want := range []string{"private_ip: " + tc.address + "\n", "disks:\n  - " + tc.disk + "\n", "ssh_host_keys:\n  - ssh-ed25519 "} {
			if !strings.Contains(node, want) {
				t.Errorf("node file %s lacks %q:\n%s", tc.node, want, node)
			}
		}
		pn.wantKnownHost(t, tc.address, ms[i].markerField("hostkey"))
	}
}
