package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/plasmactl/plasma-node/pxe/discovery"
)

const ruleYAML = `name: big-disk
priority: 10
hostname: pve-{n:02}
match:
  vendor: QEMU
  disks: {min_size: 8GB}
disks:
  boot: {min_size: 8GB}
address: {pool: mgmt, cidr: 10.0.0.0/24, range: 10.0.0.50-10.0.0.60, gateway: 10.0.0.1, dns: 10.0.0.1}
answer: {filesystem: {type: zfs, compress: lz4}}
`

func writeFile(t *testing.T, name, data string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestRuleCommands: add, list, show, test, apply and remove on a state
// folder; a rule refused at add is exit 2 and keeps nothing.
func TestRuleCommands(t *testing.T) {
	state := t.TempDir()
	if r := np(t, state, "rule", "add", "-f", writeFile(t, "r.yaml", ruleYAML)); r.code != 0 || !strings.Contains(r.stdout, "Added rule big-disk") {
		t.Fatalf("rule add: %d %q %q", r.code, r.stdout, r.err)
	}
	if r := np(t, state, "rule", "list"); r.code != 0 || !strings.Contains(r.stdout, "big-disk") || !strings.Contains(r.stdout, "pve-{n:02}") {
		t.Errorf("rule list: %d %q %q", r.code, r.stdout, r.err)
	}
	if r := np(t, state, "rule", "show", "big-disk"); r.code != 0 || !strings.Contains(r.stdout, "min_size: 8GB") {
		t.Errorf("rule show: %d %q %q", r.code, r.stdout, r.err)
	}
	tie := strings.Replace(strings.Replace(ruleYAML, "big-disk", "other", 1), "pve-{n:02}", "node-{n}", 1)
	if r := np(t, state, "rule", "add", "-f", writeFile(t, "tie.yaml", tie)); r.code != 1 || !strings.Contains(r.err, "another enrolment rule has that priority") {
		t.Errorf("rule add of a priority tie: %d %q", r.code, r.err)
	}
	bad := strings.Replace(ruleYAML, "pve-{n:02}", "PVE_{n}", 1)
	if r := np(t, state, "rule", "add", "-f", writeFile(t, "bad.yaml", strings.Replace(bad, "big-disk", "bad", 1))); r.code != 2 || !strings.Contains(r.err, `makes "PVE_1"`) {
		t.Errorf("rule add of a template the host name rule refuses: %d %q", r.code, r.err)
	}
	mirror := strings.Replace(strings.Replace(ruleYAML, "big-disk", "mirrored", 1), "type: zfs,", "type: zfs, raid: raid1,", 1)
	if r := np(t, state, "rule", "add", "-f", writeFile(t, "mirror.yaml", mirror)); r.code != 2 || !strings.Contains(r.err, "zfs raid1 needs at least 2 disks, and the boot disk is one disk: want raid0") {
		t.Errorf("rule add of a zfs raid the boot disk cannot take: %d %q", r.code, r.err)
	}
	small := discoveredMachine
	small.DMI.Serial, small.NICs = "SMALL", []discovery.NIC{{MAC: "52:54:00:bb:00:01"}}
	small.Disks = []discovery.Disk{{Name: "vda", SizeBytes: 4e9, Serial: "S-1"}}
	discover(t, state, discoveredMachine)
	discover(t, state, small)
	r := np(t, state, "rule", "test")
	if r.code != 0 || !strings.Contains(r.stdout, "pve-01") || !strings.Contains(r.stdout, "VIRT-A (zfs raid0, compress lz4)") || !strings.Contains(r.stdout, "10.0.0.50/24") ||
		!strings.Contains(r.stdout, "disk vda: size 4 GB below 8 GB of rule big-disk") {
		t.Errorf("rule test: %d %q %q", r.code, r.stdout, r.err)
	}
	if r := np(t, state, "discovered"); !strings.Contains(r.stdout, "big-disk: pve-01") || !strings.Contains(r.stdout, "disk vda: size 4 GB below 8 GB of rule big-disk") {
		t.Errorf("discovered does not show each machine's rule or why none takes it:\n%s", r.stdout)
	}
	if r := np(t, state, "list"); strings.Contains(r.stdout, "pve-01") {
		t.Errorf("rule test registered something:\n%s", r.stdout)
	}
	set := "rules:\n- " + strings.ReplaceAll(strings.TrimSpace(strings.Replace(ruleYAML, "big-disk", "renamed", 1)), "\n", "\n  ") + "\n"
	if r := np(t, state, "rule", "apply", "-f", writeFile(t, "set.yaml", set)); r.code != 0 || !strings.Contains(r.stdout, "Applied 1 rules") {
		t.Errorf("rule apply: %d %q %q", r.code, r.stdout, r.err)
	}
	if r := np(t, state, "rule", "remove", "big-disk"); r.code != 1 || !strings.Contains(r.err, `no enrolment rule named "big-disk"`) {
		t.Errorf("rule remove of a rule apply removed: %d %q", r.code, r.err)
	}
	if r := np(t, state, "rule", "remove", "renamed"); r.code != 0 {
		t.Errorf("rule remove: %d %q", r.code, r.err)
	}
	if r := np(t, state, "rule", "list"); !strings.Contains(r.stdout, "No enrolment rules") {
		t.Errorf("rule list after remove: %q", r.stdout)
	}
}
