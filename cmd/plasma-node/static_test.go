package main

import (
	"context"
	"net/netip"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/plasmactl/plasma-node/pxe/store"
	"github.com/plasmactl/plasma-node/pxe/store/folder"
)

// staticPlatform is a pxe platform whose install network is the ip pool
// mgmt, from which its control pool takes its addresses.
const staticPlatform = `  ip_pools:
    mgmt:
      cidr: 10.20.0.0/24
      range: 10.20.0.10-10.20.0.20
      gateway: 10.20.0.1
      dns: 10.20.0.53
  install_network: mgmt
`

// TestStaticAddressingAgrees: on a pxe platform with an install network,
// provision writes each node file's private_ip and the same address, with
// the network's prefix, gateway and DNS, into its registration; an
// install that reports that address is refreshed without an installed_ip
// of its own (private_ip is the address) and list then warns of nothing.
// A machine pinned by serial alone is refused, naming the node, and
// nothing is written.
func TestStaticAddressingAgrees(t *testing.T) {
	dir, st := t.TempDir(), t.TempDir()
	hw := filepath.Join(dir, "hardware.yaml")
	os.WriteFile(hw, []byte("machines:\n  - macs: [\"52:54:00:12:34:56\"]\n    boot_disk: sda\n  - serial: CZ2D1A0BC3\n    boot_disk: sda\n"), 0o644)
	mustRun(t, dir, "add", "metal", "--provider", "pxe", "--domain", "lab.example")
	plat := filepath.Join(dir, "platforms", "metal", "platform.yaml")
	raw, _ := os.ReadFile(plat)
	os.WriteFile(plat, []byte(string(raw)+"\n"+staticPlatform+"pools:\n  control:\n    zones: [platform.foundation.cluster.control]\n    machine: pve\n    count: 1\n    ip_pool: mgmt\n"), 0o644)
	out := mustRun(t, dir, "--provisioner-dir", st, "provision", "metal", "--hardware", hw, "--auto-approve")
	if !regexp.MustCompile(`\n  create  metal-control-001  node-provisioner_registration\.metal-control-001 \(mac 52:54:00:12:34:56; boot disk sda; static address 10\.20\.0\.10/24\)\n`).MatchString(out) {
		t.Errorf("provision does not show the static address:\n%s", out)
	}
	node, _ := os.ReadFile(filepath.Join(dir, "platforms", "metal", "nodes", "metal-control-001.yaml"))
	if !strings.Contains(string(node), "private_ip: 10.20.0.10\n") {
		t.Errorf("node file:\n%s", node)
	}
	stores, err := store.Open(t.Context(), st, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	r, err := stores.Registrations().Get(context.Background(), "metal-control-001")
	if err != nil {
		t.Fatal(err)
	}
	if n := r.Network; n == nil || n.CIDR != "10.20.0.10/24" || n.Gateway != "10.20.0.1" || n.DNS != "10.20.0.53" || r.ManagementMAC() != "52:54:00:12:34:56" {
		t.Errorf("registration's network: %+v", r.Network)
	}

	in := installed(t, st, "metal-control-001")
	ins, err := folder.OpenInstalls(st)
	if err != nil {
		t.Fatal(err)
	}
	in.Report.Management.Address = netip.MustParsePrefix("10.20.0.10/24")
	if err := ins.Put(context.Background(), in); err != nil {
		t.Fatal(err)
	}
	if out := mustRun(t, dir, "--provisioner-dir", st, "refresh", "metal"); out != "Refreshed metal-control-001@metal: installed address 10.20.0.10, 1 host keys, boot disk /dev/nvme0n1\n" {
		t.Errorf("refresh: %q", out)
	}
	node, _ = os.ReadFile(filepath.Join(dir, "platforms", "metal", "nodes", "metal-control-001.yaml"))
	if strings.Contains(string(node), "installed_ip") || !strings.Contains(string(node), "private_ip: 10.20.0.10\n") || !strings.Contains(string(node), "ssh_host_keys:") {
		t.Errorf("node file after refresh:\n%s", node)
	}
	if r := plasma(t, dir, "--provisioner-dir", st, "list", "metal"); r.code != 0 || strings.Contains(r.err, "differs") {
		t.Errorf("list after refresh: exit %d, stderr %q; want no warning", r.code, r.err)
	}

	// A second machine, pinned by serial only: refused, nothing written.
	r2 := plasma(t, dir, "--provisioner-dir", st, "provision", "metal", "-z", "foundation.cluster.control:pve:2", "--hardware", hw, "--auto-approve")
	if r2.code == 0 || !strings.Contains(r2.err, "node metal-control-002: invalid hardware list: the install network mgmt gives it a static address, which needs its MAC pinned") {
		t.Errorf("provision of a serial-only machine: exit %d, stderr %q", r2.code, r2.err)
	}
	if _, err := os.Stat(filepath.Join(dir, "platforms", "metal", "nodes", "metal-control-002.yaml")); err == nil {
		t.Error("a node file was written for the refused machine")
	}
}
