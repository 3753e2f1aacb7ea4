package e2e

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/plasmactl/plasma-node/internal/bmctest"
)

// TestDiscoveryIPv6: on a segment with no IPv4 at all, an unknown
// machine netboots the discovery agent as in TestNetbootIPv6 (OVMF's PXE
// over IPv6, the window's DHCPv6 answer, iPXE with the site's option
// 59); the agent takes the address the site's router advertises (SLAAC)
// and posts its report to the window over IPv6. The machine's BMC is
// OpenIPMI's ipmi_sim on a KCS interface, whose firmware names no
// Redfish host interface: the agent reads the BMC's LAN address in-band
// (Get LAN Configuration Parameters through /dev/ipmi0), and a BMC rule
// would give the machine ipmi://ADDRESS:623.
func TestDiscoveryIPv6(t *testing.T) {
	t.Parallel()
	media := netbootPrereqs(t)
	if _, err := exec.LookPath("unsquashfs"); err != nil {
		skipOrFail(t, "prepare --discovery needs unsquashfs (Debian package squashfs-tools)")
	}
	const mac = "52:54:00:77:42:10"
	l := newLab(t, 42, labOptions{ipv6Only: true, serveArgs: []string{"--discover"}, prepareArgs: []string{"--discovery"},
		siteConf: func(t *testing.T, l *bootLab) string {
			return l.np(t, "publish", "--ipv6-boot", "http://"+l.window(), "--format", "dnsmasq")
		}})
	l.serve(t, media)
	const bmcLAN = "198.51.100.61"
	sim := bmctest.StartForVM(t, l.site, bmctest.StateHook(t), "admin", "e2e-bmc-pass")
	if _, err := sim.IPMItool(context.Background(), "lan", "set", "1", "ipaddr", bmcLAN); err != nil {
		t.Fatal(err)
	}
	// A disk with a serial, which a rule takes as the boot disk.
	disk := filepath.Join(t.TempDir(), "disk.img")
	if err := os.WriteFile(disk, nil, 0o644); err != nil || os.Truncate(disk, 64<<20) != nil {
		t.Fatalf("disk image: %v", err)
	}
	qemu := append(sim.QEMUArgs(), "-drive", "if=none,id=d0,format=raw,file="+disk, "-device", "virtio-blk-pci,serial=E2E-V6-DISK,drive=d0")
	m := l.boot(t, vmOptions{name: "disco6", mac: mac, uefi: true, ipv6PXE: true, limit: 300 * time.Second, qemuArgs: qemu})
	if !strings.Contains(m.serial, "PLASMA-DISCOVERY: OK") {
		t.Fatalf("the discovery agent did not report OK (took %s)", m.took)
	}
	m.wantSerial(t, "Start PXE over IPv6")
	m.wantSerial(t, "ip=fd77:42::")
	l.wantEvent(t, "discovered", mac)
	if out := l.np(t, "discovered"); !strings.Contains(strings.ToLower(out), mac) {
		t.Errorf("discovered does not list %s:\n%s", mac, out)
	}
	var got []discoveredMachine
	if err := json.Unmarshal([]byte(l.np(t, "discovered", "-o", "json")), &got); err != nil || len(got) != 1 {
		t.Fatalf("discovered -o json: %v %+v", err, got)
	}
	if bmc := [4]any{got[0].BMCAddress, got[0].BMCPort, got[0].BMCKind, got[0].BMCIPMI}; bmc != [4]any{bmcLAN, uint16(623), "ipmi", "kcs"} {
		t.Errorf("discovered BMC (address, port, kind, IPMI interface) = %v, want the LAN address %s the BMC gave through /dev/ipmi0, 623, ipmi and kcs", bmc, bmcLAN)
	}
	l.wantRuleBMC(t, "E2E-DISCO6", "ipmi", "ipmi://"+bmcLAN+":623")
}
