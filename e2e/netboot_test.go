package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"golang.org/x/sync/semaphore"
)

// The netboot lab: for each run, a "site" namespace holds a bridge, the
// site's ordinary DHCP server (dnsmasq, addresses only, no PXE options) and
// a tap per QEMU machine; a "prov" namespace holds node-provisioner serve
// (proxy-DHCP, TFTP, HTTP), joined to the bridge by a veth pair. Each run
// has its own pair of namespaces and subnet, so runs can boot in parallel.

// Files of the netboot toolchain (Debian packages ovmf, ipxe-qemu, ipxe).
const (
	ovmfCode = "/usr/share/OVMF/OVMF_CODE_4M.fd"
	ovmfVars = "/usr/share/OVMF/OVMF_VARS_4M.fd"
	// ovmfCodeMS and ovmfVarsMS are OVMF with Secure Boot enforcing and
	// Microsoft's KEK and db (UEFI CA 2011) enrolled.
	ovmfCodeMS = "/usr/share/OVMF/OVMF_CODE_4M.ms.fd"
	ovmfVarsMS = "/usr/share/OVMF/OVMF_VARS_4M.ms.fd"
	// nicROM is the virtio NIC's iPXE option ROM that QEMU loads by
	// default (ipxe-qemu).
	nicROM = "/usr/lib/ipxe/qemu/efi-virtio.rom"
)

// virtioModules are the modules Debian's kernel needs for virtio-net, in
// load order (virtio needs virtio_ring: the other way round insmod fails
// with ENOENT, an unknown symbol).
var virtioModules = []string{"virtio_ring", "virtio", "virtio_pci_modern_dev", "virtio_pci_legacy_dev", "virtio_pci", "failover", "net_failover", "virtio_net"}

// diskModules are the disk drivers the emulator loads after
// virtioModules, in load order: virtio-blk, and NVMe after the t10-pi
// integrity module nvme-core needs and its CRCs.
var diskModules = []string{"virtio_blk", "crct10dif_common", "crc-t10dif", "crc64", "crc64-rocksoft", "t10-pi", "nvme-core", "nvme"}

// markerRE is the installer emulator's last line (e2e/internal/installeremu).
var markerRE = regexp.MustCompile(`PLASMA-EMU: (OK|REFUSED|FAIL)([^\r\n]*)`)

// qemuSlots limits how many QEMU machines run at once (TCG takes a core
// each); PLASMA_NETBOOT_PARALLEL overrides the default of 2.
var qemuSlots = semaphore.NewWeighted(int64(envInt("PLASMA_NETBOOT_PARALLEL", 2)))

func envInt(name string, def int) int {
	var n int
	if _, err := fmt.Sscan(os.Getenv(name), &n); err == nil && n > 0 {
		return n
	}
	return def
}

// netbootMedia is what every run boots: the test ISO in Proxmox layout and
// the kernel's folder.
type netbootMedia struct {
	iso    string // proxmox-ve_9.2-1.iso
	kernel string // vmlinuz
	root   string // the ISO's files, for variants (netbootMedia.variant)
}

// TestNetboot boots QEMU machines through node-provisioner beside a real
// dnsmasq, with real firmware (OVMF, SeaBIOS, iPXE), into the installer
// emulator, which must get its answer.
func TestNetboot(t *testing.T) {
	t.Parallel() // its labs (1-6) are its own; qemuSlots bounds the machines
	media := netbootPrereqs(t)
	t.Run("UEFI", func(t *testing.T) {
		t.Parallel()
		l := newLab(t, 1, labOptions{bootFile: "ipxe.efi"})
		l.register(t, "uefi1", "52:54:00:77:01:10", "--pool", "tank=mirror:QM00002,QM00003")
		l.serve(t, media)
		// The pool's two disks: the installer emulator acts out the
		// first-boot hook's pool decisions on the disks it finds.
		var disks []string
		for _, serial := range []string{"QM00002", "QM00003"} {
			_, args := vmDisk(t, t.TempDir(), serial, "16M", "virtio-blk-pci,serial="+serial)
			disks = append(disks, args...)
		}
		m := l.boot(t, vmOptions{name: "uefi1", mac: "52:54:00:77:01:10", uefi: true, rom: false, limit: 150 * time.Second, qemuArgs: disks})
		m.wantOK(t, "uefi1.")
		m.wantSerial(t, "Start PXE over IPv4")
		l.wantLog(t, "file=ipxe.efi")
		l.wantLog(t, `msg="TFTP sent"`)
		l.wantEvent(t, "installed", "uefi1")
	})
	t.Run("BIOS", func(t *testing.T) {
		t.Parallel()
		l := newLab(t, 2, labOptions{})
		l.register(t, "bios1", "52:54:00:77:02:10")
		l.serve(t, media)
		m := l.boot(t, vmOptions{name: "bios1", mac: "52:54:00:77:02:10", rom: true, limit: 60 * time.Second})
		m.wantOK(t, "bios1.")
		m.wantSerial(t, "iPXE")
		// serve logs each transfer as msg="TFTP sent" (text handler).
		l.wantNoLog(t, `msg="TFTP sent"`)
		l.wantEvent(t, "installed", "bios1")
	})
	t.Run("HTTPS", func(t *testing.T) {
		t.Parallel()
		// serve's default UEFI binary here (the UEFI run has ipxe.efi).
		l := newLab(t, 3, labOptions{tls: true})
		l.register(t, "tls1", "52:54:00:77:03:10")
		l.serve(t, media)
		m := l.boot(t, vmOptions{name: "tls1", mac: "52:54:00:77:03:10", uefi: true, limit: 150 * time.Second})
		m.wantOK(t, "tls1.")
		m.wantDetail(t, "scheme=https", "first-boot=", "webhook=200")
		l.wantLog(t, "file=snponly.efi")
		l.wantEvent(t, "installed", "tls1")
		l.wantInstallReport(t, "tls1", m)
	})
	t.Run("Refusals", func(t *testing.T) {
		t.Parallel()
		l := newLab(t, 4, labOptions{})
		// Pending, pinned to a machine that never boots: a stranger must
		// not be taken for it.
		l.register(t, "pending1", "52:54:00:77:04:99")
		l.register(t, "inst1", "52:54:00:77:04:10")
		l.serve(t, media)
		// The stranger boots the staged installer directly (as from a USB
		// stick: its MAC gets no proxy offer) and asks for an answer.
		stranger := l.boot(t, vmOptions{name: "stranger", mac: "52:54:00:77:04:66", direct: true, limit: 90 * time.Second})
		if stranger.marker != "REFUSED" || !strings.Contains(stranger.detail, "status=404") {
			t.Errorf("stranger: marker %s %q; want REFUSED status=404", orNone(stranger.marker), stranger.detail)
		}
		l.wantEvent(t, "refused", "52:54:00:77:04:66")
		first := l.boot(t, vmOptions{name: "inst1", mac: "52:54:00:77:04:10", rom: true, limit: 60 * time.Second})
		first.wantOK(t, "inst1.")
		// The installed machine boots again: the exit script, never the
		// installer.
		again := l.boot(t, vmOptions{name: "inst1-again", mac: "52:54:00:77:04:10", rom: true, until: "booting the next device", limit: 60 * time.Second})
		again.wantSerial(t, "registration inst1 was consumed")
		if again.marker != "" {
			t.Errorf("the second boot of an installed machine reached the installer: %s %s", again.marker, again.detail)
		}
		l.wantLog(t, "boot script: exit")
		if n := strings.Count(l.serveLog.String(), "boot script: install"); n != 1 {
			t.Errorf("%d install scripts served; want 1 (the first boot of inst1)", n)
		}
	})
	t.Run("Token", func(t *testing.T) {
		t.Parallel()
		l := newLab(t, 6, labOptions{token: true})
		l.register(t, "tok1", "52:54:00:77:06:10")
		l.serve(t, media)
		// The same machine without the bearer (an installer older than
		// 9.2 sends none): 401, and the registration stays pending.
		bare := l.boot(t, vmOptions{name: "tok1-bare", mac: "52:54:00:77:06:10", direct: true, cmdline: "emu.notoken", limit: 90 * time.Second})
		if bare.marker != "REFUSED" || !strings.Contains(bare.detail, "status=401") {
			t.Errorf("without the token: marker %s %q; want REFUSED status=401", orNone(bare.marker), bare.detail)
		}
		if list := l.np(t, "list"); !regexp.MustCompile(`tok1\s+pending`).MatchString(list) {
			t.Errorf("tok1 is not pending after the 401:\n%s", list)
		}
		l.wantEvent(t, "refused", "401")
		token, err := os.ReadFile(filepath.Join(l.state, "answer-tokens", "9.2-1"))
		if err != nil || len(strings.TrimSpace(string(token))) < 20 {
			t.Fatalf("prepare kept no answer token: %q %v", token, err)
		}
		l.wantNoLog(t, strings.TrimSpace(string(token)))
		m := l.boot(t, vmOptions{name: "tok1", mac: "52:54:00:77:06:10", rom: true, limit: 150 * time.Second})
		m.wantOK(t, "tok1.")
		m.wantDetail(t, "token=sent")
		l.wantEvent(t, "installed", "tok1")
	})
	t.Run("TwoAtOnce", func(t *testing.T) {
		t.Parallel()
		l := newLab(t, 5, labOptions{})
		l.register(t, "twin1", "52:54:00:77:05:11")
		l.register(t, "twin2", "52:54:00:77:05:12")
		l.serve(t, media)
		ms := l.bootAll(t,
			vmOptions{name: "twin1", mac: "52:54:00:77:05:11", rom: true, limit: 90 * time.Second},
			vmOptions{name: "twin2", mac: "52:54:00:77:05:12", rom: true, limit: 90 * time.Second})
		ms[0].wantOK(t, "twin1.")
		ms[0].wantDetail(t, "mac=52:54:00:77:05:11")
		ms[1].wantOK(t, "twin2.")
		ms[1].wantDetail(t, "mac=52:54:00:77:05:12")
		l.wantEvent(t, "installed", "twin1")
		l.wantEvent(t, "installed", "twin2")
	})
}
