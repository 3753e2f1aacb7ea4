package main

import (
	"context"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/plasmactl/plasma-node/answer"
	"github.com/plasmactl/plasma-node/pxe/registry"
	"github.com/plasmactl/plasma-node/pxe/store"
)

// TestEnrolledMachinesJoinThePlatformByName: machines an enrolment rule
// registered and installed (their names follow the platform's node
// names: metal-control-{n:03}, metal-nodes-{n:03}) join the platform
// with provision and no hardware: each slot takes the registration of its hostname, so its
// node file pins the machine and has the static address as private_ip;
// refresh then writes the host keys and the boot disk the installer
// reported, and known-hosts names the node by that address.
func TestEnrolledMachinesJoinThePlatformByName(t *testing.T) {
	ctx := context.Background()
	dir, st := t.TempDir(), t.TempDir()
	stores, err := store.Open(ctx, st, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i, name := range []string{"metal-control-001", "metal-nodes-001"} {
		r := registry.Registration{Name: name, MACs: []string{[]string{"52:54:00:12:34:56", "52:54:00:12:34:60"}[i]}, Serial: "SRV-" + name,
			BootDisk: answer.BootDisk{Kind: answer.BootDiskSerial, Value: "S4EVNX0R"},
			Network:  &registry.Network{CIDR: []string{"192.0.2.10/24", "192.0.2.11/24"}[i], Gateway: "192.0.2.1", DNS: "192.0.2.1"}}
		if _, err := stores.Registrations().Register(ctx, r, registry.RegisterOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	in := installed(t, st, "metal-control-001")
	mustRun(t, dir, "add", "metal", "--provider", "pxe", "--domain", "lab.example")
	mustRun(t, dir, "--provisioner-dir", st, "provision", "metal", "-z", "foundation.cluster.control:pve:1", "-z", "foundation.cluster.nodes:pve:1", "--auto-approve")
	for _, tc := range []struct{ name, mac, ip string }{{"metal-control-001", "52:54:00:12:34:56", "192.0.2.10"}, {"metal-nodes-001", "52:54:00:12:34:60", "192.0.2.11"}} {
		node := readNode(t, dir, tc.name)
		for _, want := range []string{"private_ip: " + tc.ip + "\n", "private_mac: " + tc.mac + "\n", "server_id: " + tc.mac + "\n"} {
			if !strings.Contains(strings.ReplaceAll(node, `"`, ""), want) { // YAML quotes some MACs
				t.Errorf("node file %s lacks %q:\n%s", tc.name, want, node)
			}
		}
	}
	if out := mustRun(t, dir, "--provisioner-dir", st, "refresh", "metal"); out != "Refreshed metal-control-001@metal: installed address 192.0.2.10, 1 host keys, boot disk /dev/nvme0n1\n" {
		t.Errorf("refresh: %q", out)
	}
	node := readNode(t, dir, "metal-control-001")
	for _, want := range []string{"private_ip: 192.0.2.10\n", "disks:\n  - /dev/nvme0n1\n", "ssh_host_keys:\n  - " + in.Report.HostKeys[0] + "\n"} {
		if !strings.Contains(node, want) {
			t.Errorf("the refreshed node file lacks %q:\n%s", want, node)
		}
	}
	if strings.Contains(node, "installed_ip") {
		t.Errorf("a static install's address is private_ip alone:\n%s", node)
	}
	if other := readNode(t, dir, "metal-nodes-001"); strings.Contains(other, "disks:") || strings.Contains(other, "ssh_host_keys") {
		t.Errorf("refresh wrote a node that has not reported:\n%s", other)
	}
	want := "metal-control-001,metal-control-001.lab.example,192.0.2.10 " + in.Report.HostKeys[0] + "\n"
	if out := mustRun(t, dir, "--provisioner-dir", st, "known-hosts", "metal"); out != want {
		t.Errorf("known-hosts:\n%s\nwant:\n%s", out, want)
	}
	// The reported boot disk changed (a reinstall on another disk).
	ins, err := stores.Installs()
	if err != nil {
		t.Fatal(err)
	}
	in.Report.BootDisks = []answer.ReportDisk{{Name: "/dev/sda", Serial: "X1"}}
	in.Report.Management.Address = netip.MustParsePrefix("192.0.2.10/24")
	if err := ins.Put(ctx, in); err != nil {
		t.Fatal(err)
	}
	if out := mustRun(t, dir, "--provisioner-dir", st, "refresh", "metal"); out != "Refreshed metal-control-001@metal: installed address 192.0.2.10, 1 host keys, boot disk /dev/sda\n" {
		t.Errorf("refresh after the boot disk changed: %q", out)
	}
	if node := readNode(t, dir, "metal-control-001"); !strings.Contains(node, "disks:\n  - /dev/sda\n") {
		t.Errorf("node file after the boot disk changed:\n%s", node)
	}
}

func readNode(t *testing.T, dir, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "platforms", "metal", "nodes", name+".yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}
