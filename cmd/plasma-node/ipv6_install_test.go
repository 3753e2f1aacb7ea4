package main

import (
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/plasmactl/plasma-node/answer"
)

// TestAnIPv6InstallGoesIntoTheNodeFileAndKnownHosts: an installer whose
// webhook reports an IPv6 management address (written as it may be,
// uncompressed) has refresh write it, canonical, into the node file's
// installed_ip and installed_prefix, and known-hosts put it on the key's
// line (no port is named, so no brackets), which ssh-keygen -F finds.
func TestAnIPv6InstallGoesIntoTheNodeFileAndKnownHosts(t *testing.T) {
	dir, st := pxeProject(t, "52:54:00:12:34:56")
	in := reported(t, st, installed(t, st, "metal-control-001"), func(r *answer.InstallReport) {
		r.Management.Address = netip.MustParsePrefix("2001:0db8:0005:0000:0000:0000:0000:0010/64")
	})
	if out := mustRun(t, dir, "--provisioner-dir", st, "refresh", "metal"); out != "Refreshed metal-control-001@metal: installed address 2001:db8:5::10, 1 host keys, boot disk /dev/nvme0n1\n" {
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
	wantKnownHost(t, out, in.Report.HostKeys[0], "2001:db8:5::10")
}

// TestPinnedNICNamesGoIntoTheNodeFile: an installer that pinned its
// NICs' names (register --pin-nic-names or --nic-name, the site's
// pin_nic_names) reports them; list warns while the node file lacks
// them, and refresh writes them into network.nic_names by MAC. Names
// that were not pinned are not written.
func TestPinnedNICNamesGoIntoTheNodeFile(t *testing.T) {
	dir, st := pxeProject(t, "52:54:00:12:34:56")
	reported(t, st, installed(t, st, "metal-control-001"), func(r *answer.InstallReport) {
		r.NICNames = map[string]string{"52:54:00:12:34:56": "nic0", "52:54:00:12:34:57": "uplink1"}
	})
	if r := plasma(t, dir, "--provisioner-dir", st, "list", "metal"); r.code != 0 || !strings.Contains(r.err, "nic_names") {
		t.Errorf("list of a node file without the pinned names: exit %d, stderr %q; want the warning naming nic_names", r.code, r.err)
	}
	mustRun(t, dir, "--provisioner-dir", st, "refresh", "metal")
	got, _ := os.ReadFile(filepath.Join(dir, "platforms", "metal", "nodes", "metal-control-001.yaml"))
	if want := "  nic_names:\n    \"52:54:00:12:34:56\": nic0\n    \"52:54:00:12:34:57\": uplink1\n"; !strings.Contains(string(got), want) {
		t.Errorf("the node file lacks\n%s\nin:\n%s", want, got)
	}
	if r := plasma(t, dir, "--provisioner-dir", st, "list", "metal"); r.code != 0 || strings.Contains(r.err, "differs") {
		t.Errorf("list after refresh: exit %d, stderr %q; want no warning", r.code, r.err)
	}
}
