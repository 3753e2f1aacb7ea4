package e2e

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// baseSquashfs writes the fake ISO's <product>-base.squashfs: the kernel
// modules folder of .ci/tools.sh's kernel (its modules at their
// modules.dep paths, modules.alias, modules.dep), where a Proxmox ISO
// keeps them. Without mksquashfs or modules.dep it writes a stand-in
// (fails under PLASMA_E2E=1).
func baseSquashfs(t *testing.T, kdir, out string) {
	t.Helper()
	mk, err := exec.LookPath("mksquashfs")
	dep, derr := os.ReadFile(filepath.Join(kdir, "modules", "modules.dep"))
	if err != nil || derr != nil {
		if os.Getenv("PLASMA_E2E") != "" {
			t.Fatalf("the fake ISO's base squashfs needs mksquashfs (Debian package squashfs-tools) and %s/modules/modules.dep (.ci/tools.sh): %v %v", kdir, err, derr)
		}
		os.WriteFile(out, []byte("squashfs stand-in"), 0o644)
		return
	}
	rel, _ := os.ReadFile(filepath.Join(kdir, "release"))
	root := t.TempDir()
	mods := filepath.Join(root, "usr", "lib", "modules", strings.TrimSpace(string(rel)))
	os.MkdirAll(mods, 0o755)
	copyFile(t, filepath.Join(kdir, "modules", "modules.dep"), filepath.Join(mods, "modules.dep"))
	copyFile(t, filepath.Join(kdir, "modules", "modules.alias"), filepath.Join(mods, "modules.alias"))
	sc := bufio.NewScanner(strings.NewReader(string(dep)))
	for sc.Scan() {
		file, _, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		src := filepath.Join(kdir, "modules", path.Base(file))
		if _, err := os.Stat(src); err != nil {
			continue
		}
		os.MkdirAll(filepath.Join(mods, filepath.Dir(file)), 0o755)
		copyFile(t, src, filepath.Join(mods, filepath.FromSlash(file)))
	}
	if b, err := exec.Command(mk, root, out, "-quiet", "-no-progress", "-noappend", "-comp", "gzip").CombinedOutput(); err != nil {
		t.Fatalf("mksquashfs: %v\n%s", err, b)
	}
}

// discoveredMachine is what discovered -o json says of a machine.
type discoveredMachine struct {
	ID      string `json:"id"`
	BootMAC string `json:"boot_mac"`
	NICs    []struct {
		MAC string `json:"mac"`
	} `json:"nics"`
	DMI struct {
		Serial string `json:"serial"`
	} `json:"dmi"`
	BMCAddress string `json:"bmc_address"`
	BMCPort    uint16 `json:"bmc_port"`
	BMCKind    string `json:"bmc_kind"`
	BMCIPMI    string `json:"bmc_ipmi"`
	Disks      []struct {
		Name      string `json:"name"`
		SizeBytes uint64 `json:"size_bytes"`
		Serial    string `json:"serial"`
		Transport string `json:"transport"`
	} `json:"disks"`
}

// TestDiscovery: a machine with two virtio disks and an NVMe disk, each
// given a serial and a size, and a DMI serial, boots a discovery window
// beside dnsmasq: the discovery agent reports it and powers it off, and
// discovered -o json shows exactly those serials and sizes, its two MACs
// and DMI serial, and as boot_mac the NIC it booted from, though its
// other NIC took the agent's DHCP lease (BOOTIF from the script). Registered from the inbox with the NVMe disk as its boot
// disk, the machine's next boot installs onto that disk: the installer
// emulator picks its disk by the answer's filter and reports it.
func TestDiscovery(t *testing.T) {
	t.Parallel()
	media := netbootPrereqs(t)
	if _, err := exec.LookPath("unsquashfs"); err != nil {
		skipOrFail(t, "prepare --discovery needs unsquashfs (Debian package squashfs-tools)")
	}
	const mac = "52:54:00:77:18:10"
	l := newLab(t, 21, labOptions{serveArgs: []string{"--discover"}, prepareArgs: []string{"--discovery"}})
	l.serve(t, media)
	dir := t.TempDir()
	var disks []string
	for _, d := range []struct {
		name, size, dev string
	}{{"va", "64M", "virtio-blk-pci,serial=E2E-VIRT-A"}, {"vb", "96M", "virtio-blk-pci,serial=E2E-VIRT-B"}, {"nv", "128M", "nvme,serial=E2E-NVME-1"}} {
		img := filepath.Join(dir, d.name+".img")
		if out, err := exec.Command("qemu-img", "create", "-q", "-f", "raw", img, d.size).CombinedOutput(); err != nil {
			t.Fatalf("qemu-img: %v\n%s", err, out)
		}
		disks = append(disks, "-drive", "if=none,id="+d.name+",format=raw,file="+img, "-device", d.dev+",drive="+d.name)
	}
	// A second NIC on the same segment, before the booting one on the
	// PCI bus: it is the agent's first NIC and takes its DHCP lease, so
	// only BOOTIF from the discovery script names the NIC it booted from.
	const other = "52:54:00:77:18:11"
	tap := fmt.Sprintf("pnnb%dx1", l.n)
	run(t, "ip", "-n", l.site, "tuntap", "add", "dev", tap, "mode", "tap")
	run(t, "ip", "-n", l.site, "link", "set", tap, "master", "br0", "up")
	disks = append(disks, "-netdev", "tap,id=n1,ifname="+tap+",script=no,downscript=no", "-device", "virtio-net-pci,netdev=n1,mac="+other+",romfile=")
	// The firmware names a Redfish host interface (SMBIOS type 42, from
	// the file) and an IPMI BMC on KCS (type 38, QEMU's own for its
	// simulated BMC): the agent reports both.
	rf := filepath.Join(dir, "type42.bin")
	if err := os.WriteFile(rf, redfishHostInterface([4]byte{198, 51, 100, 2}, [4]byte{198, 51, 100, 77}, 8443), 0o644); err != nil {
		t.Fatal(err)
	}
	disks = append(disks, "-smbios", "file="+rf, "-device", "ipmi-bmc-sim,id=bmc0", "-device", "isa-ipmi-kcs,bmc=bmc0")
	vm := vmOptions{name: "disco", mac: mac, uefi: true, limit: 240 * time.Second, qemuArgs: disks}
	m := l.boot(t, vm)
	if !strings.Contains(m.serial, "PLASMA-DISCOVERY: OK") {
		t.Fatalf("the discovery agent did not report OK (took %s)", m.took)
	}
	if strings.Contains(m.serial, "[test: QEMU killed") {
		t.Error("the machine did not power itself off")
	}
	var got []discoveredMachine
	if err := json.Unmarshal([]byte(l.np(t, "discovered", "-o", "json")), &got); err != nil || len(got) != 1 {
		t.Fatalf("discovered -o json: %v %+v", err, got)
	}
	d := got[0]
	type disk struct {
		Serial string
		Size   uint64
	}
	var have []disk
	for _, x := range d.Disks {
		have = append(have, disk{x.Serial, x.SizeBytes})
	}
	slices.SortFunc(have, func(a, b disk) int { return strings.Compare(a.Serial, b.Serial) })
	want := []disk{{"E2E-NVME-1", 128 << 20}, {"E2E-VIRT-A", 64 << 20}, {"E2E-VIRT-B", 96 << 20}}
	if diff := cmp.Diff(want, have); diff != "" {
		t.Errorf("discovered disks (-want +got):\n%s", diff)
	}
	var macs []string
	for _, n := range d.NICs {
		macs = append(macs, n.MAC)
	}
	slices.Sort(macs)
	if d.DMI.Serial != "E2E-DISCO" || !slices.Equal(macs, []string{mac, other}) {
		t.Errorf("discovered machine: serial %q, NICs %v; want E2E-DISCO and %s, %s", d.DMI.Serial, macs, mac, other)
	}
	if d.BootMAC != mac {
		t.Errorf("discovered boot_mac %q, want %s, the NIC the machine booted from (the other took the agent's lease)", d.BootMAC, mac)
	}
	if bmc := [4]any{d.BMCAddress, d.BMCPort, d.BMCKind, d.BMCIPMI}; bmc != [4]any{"198.51.100.77", uint16(8443), "redfish", "kcs"} {
		t.Errorf("discovered BMC (address, port, kind, IPMI interface) = %v, want the host interface's 198.51.100.77:8443 and kcs", bmc)
	}
	l.wantEvent(t, "discovered", mac)
	// A BMC rule would give the machine its reported Redfish service;
	// rule test shows it, and the rule goes before the registration.
	l.wantRuleBMC(t, "E2E-DISCO", "redfish", "redfish://198.51.100.77:8443")

	l.np(t, "register", "disco", "--from-discovered", mac, "--boot-disk", "E2E-NVME-1")
	vm.limit = 180 * time.Second
	m = l.boot(t, vm)
	m.wantOK(t, "disco.")
	m.wantDetail(t, "disk=nvme0n1")
	var regs []struct {
		Name    string `json:"name"`
		Install *struct {
			BootDisks []struct {
				Name   string `json:"name"`
				Serial string `json:"serial"`
			} `json:"boot_disks"`
		} `json:"install"`
	}
	out := l.np(t, "list", "-o", "json")
	if err := json.Unmarshal([]byte(out), &regs); err != nil || len(regs) != 1 || regs[0].Install == nil {
		t.Fatalf("list -o json: %v\n%s", err, out)
	}
	type bootDisk struct{ Name, Serial string }
	var gotDisks []bootDisk
	for _, b := range regs[0].Install.BootDisks {
		gotDisks = append(gotDisks, bootDisk{b.Name, b.Serial})
	}
	if diff := cmp.Diff([]bootDisk{{"/dev/nvme0n1", "E2E-NVME-1"}}, gotDisks); diff != "" {
		t.Errorf("the installed boot disk (-want +got):\n%s", diff)
	}
}

// wantRuleBMC adds a BMC rule of scheme for the one machine in the
// inbox, whose DMI serial is serial, checks that rule test -o json gives
// it the BMC want, and removes the rule.
func (l *bootLab) wantRuleBMC(t *testing.T, serial, scheme, want string) {
	t.Helper()
	rule := filepath.Join(t.TempDir(), "bmc-rule.yaml")
	if err := os.WriteFile(rule, []byte("name: rack-bmc\nhostname: rack-{n:02}\nmatch: {serial: "+serial+"}\nbmc: {scheme: "+scheme+", user: root, secret: bmc-rack1}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	l.np(t, "rule", "add", "-f", rule)
	var preview []struct{ Machine, Name, BMC, Reason string }
	if out := l.np(t, "rule", "test", "-o", "json"); json.Unmarshal([]byte(out), &preview) != nil || len(preview) != 1 ||
		preview[0].Name != "rack-01" || preview[0].BMC != want {
		t.Errorf("rule test -o json = %s, want rack-01 with the BMC %s", out, want)
	}
	l.np(t, "rule", "remove", "rack-bmc")
}

// redfishHostInterface is an SMBIOS type 42 structure (DSP0134) of a
// network host interface (40h) with no interface data and one Redfish
// over IP protocol record (04h, DSP0270): the host's IPv4 address, the
// service's and its port; then the empty string set.
func redfishHostInterface(host, service [4]byte, port uint16) []byte {
	ip := func(a [4]byte) []byte { return append(a[:], make([]byte, 12)...) }
	mask := ip([4]byte{255, 255, 255, 0})
	d := bytes.Repeat([]byte{0x5a}, 16)                       // service UUID
	d = append(append(append(d, 1, 1), ip(host)...), mask...) // host: static, IPv4, address, mask
	d = append(append(append(d, 1, 1), ip(service)...), mask...)
	d = binary.LittleEndian.AppendUint16(d, port)
	d = append(d, 0, 0, 0, 0, 0) // VLAN ID, hostname length
	b := append([]byte{42, 0, 0x34, 0x12, 0x40, 0, 1, 0x04, byte(len(d))}, d...)
	b[1] = byte(len(b))
	return append(b, 0, 0)
}
