package main

import (
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/plasmactl/plasma-node/answer"
)

// TestRefreshWritesTheInstalledAddressKeepingComments: list warns, and
// writes nothing, while an installed node's file differs from its
// installer's report; refresh writes network.installed_ip,
// installed_prefix and ssh_host_keys keeping the file's comments, says
// when there is nothing to write, and reports an address that changed.
func TestRefreshWritesTheInstalledAddressKeepingComments(t *testing.T) {
	dir, st := pxeProject(t, "52:54:00:12:34:56", "52:54:00:de:ad:02")
	file := filepath.Join(dir, "platforms", "metal", "nodes", "metal-control-001.yaml")
	orig, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	commented := "# rack 4, slot 2: the left PSU is dead\n" + strings.Replace(string(orig), "hostname: metal-control-001", "hostname: metal-control-001 # as labelled", 1)
	os.WriteFile(file, []byte(commented), 0o644)
	if r := plasma(t, dir, "--provisioner-dir", st, "refresh", "metal"); r.code != 0 || r.stdout != "No node of platform metal has reported an install yet\n" {
		t.Errorf("refresh before any install: exit %d %q %q", r.code, r.stdout, r.err)
	}
	in := installed(t, st, "metal-control-001")

	r := plasma(t, dir, "--provisioner-dir", st, "list", "metal")
	if r.code != 0 || !strings.Contains(r.err, "node file differs from what its installer reported; plasma-node refresh metal writes it") || !strings.Contains(r.err, `installed_ip \"\", reported 192.0.2.10`) {
		t.Errorf("list of a stale node file: exit %d, stderr %q; want the warning", r.code, r.err)
	}
	if got, _ := os.ReadFile(file); string(got) != commented {
		t.Errorf("list wrote the node file:\n%s", got)
	}

	out := mustRun(t, dir, "--provisioner-dir", st, "refresh", "metal")
	if out != "Refreshed metal-control-001@metal: installed address 192.0.2.10, 1 host keys, boot disk /dev/nvme0n1\n" {
		t.Errorf("refresh: %q", out)
	}
	got, _ := os.ReadFile(file)
	for _, want := range []string{"# rack 4, slot 2: the left PSU is dead\n", "hostname: metal-control-001 # as labelled\n", "installed_ip: 192.0.2.10\n", "installed_prefix: 24\n", "ssh_host_keys:\n  - " + in.Report.HostKeys[0] + "\n"} {
		if !strings.Contains(string(got), want) {
			t.Errorf("the refreshed node file lacks %q:\n%s", want, got)
		}
	}
	if other, _ := os.ReadFile(filepath.Join(dir, "platforms", "metal", "nodes", "metal-control-002.yaml")); strings.Contains(string(other), "installed_ip") {
		t.Errorf("refresh wrote a node that has not reported:\n%s", other)
	}
	if out := mustRun(t, dir, "--provisioner-dir", st, "refresh", "metal"); out != "metal-control-001@metal is up to date: installed address 192.0.2.10, 1 host keys, boot disk /dev/nvme0n1\n" {
		t.Errorf("refresh again: %q", out)
	}
	if r := plasma(t, dir, "--provisioner-dir", st, "list", "metal"); r.code != 0 || strings.Contains(r.err, "differs") {
		t.Errorf("list after refresh: exit %d, stderr %q; want no warning", r.code, r.err)
	}

	// The machine got another address (a new DHCP lease, a reinstall).
	in = reported(t, st, in, func(r *answer.InstallReport) { r.Management.Address = netip.MustParsePrefix("192.0.2.99/24") })
	r = plasma(t, dir, "--provisioner-dir", st, "refresh", "metal")
	if r.code != 0 || r.stdout != "Refreshed metal-control-001@metal: the installed address changed from 192.0.2.10 to 192.0.2.99; 1 host keys, boot disk /dev/nvme0n1\n" {
		t.Errorf("refresh of a changed address: exit %d %q %q", r.code, r.stdout, r.err)
	}
	if got, _ := os.ReadFile(file); !strings.Contains(string(got), "installed_ip: 192.0.2.99\n") || !strings.Contains(string(got), "# rack 4, slot 2") {
		t.Errorf("node file after the change:\n%s", got)
	}
}
