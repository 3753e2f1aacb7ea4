package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
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
	media := netbootPrereqs(t)
	t.Run("UEFI", func(t *testing.T) {
		t.Parallel()
		l := newLab(t, 1, labOptions{bootFile: "ipxe.efi"})
		l.register(t, "uefi1", "52:54:00:77:01:10", "--pool", "tank=mirror:QM00002,QM00003")
		l.serve(t, media)
		m := l.boot(t, vmOptions{name: "uefi1", mac: "52:54:00:77:01:10", uefi: true, rom: false, limit: 150 * time.Second})
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

// netbootPrereqs skips (fails under PLASMA_E2E=1) without root or a tool,
// and builds the boot media once.
func netbootPrereqs(t *testing.T) netbootMedia {
	t.Helper()
	return netbootPrereqsWith(t, false)
}

// netbootPrereqsWith is netbootPrereqs; withChain puts Debian's Secure
// Boot chain in the ISO's EFI boot files (about 5 MB more to boot, so
// only the Secure Boot test carries it).
func netbootPrereqsWith(t *testing.T, withChain bool) netbootMedia {
	t.Helper()
	if os.Geteuid() != 0 {
		skipOrFail(t, "the netboot lab needs root (network namespaces, taps)")
	}
	for _, tool := range []struct{ name, pkg string }{{"qemu-system-x86_64", "qemu-system-x86"}, {"dnsmasq", "dnsmasq-base"}, {"xorriso", "xorriso"}, {"ip", "iproute2"}} {
		if _, err := exec.LookPath(tool.name); err != nil {
			skipOrFail(t, "the netboot lab needs %s (Debian package %s)", tool.name, tool.pkg)
		}
	}
	for _, f := range []struct{ path, pkg string }{{ovmfCode, "ovmf"}, {ovmfVars, "ovmf"}, {nicROM, "ipxe-qemu"}, {"/usr/lib/ipxe/ipxe.efi", "ipxe"}, {"/usr/lib/ipxe/undionly.kpxe", "ipxe"}} {
		if _, err := os.Stat(f.path); err != nil {
			skipOrFail(t, "the netboot lab needs %s (Debian package %s)", f.path, f.pkg)
		}
	}
	kdir := os.Getenv("PLASMA_KERNEL_DIR")
	if kdir == "" {
		kdir, _ = filepath.Abs("../.tools/kernel")
	}
	if _, err := os.Stat(filepath.Join(kdir, "vmlinuz")); err != nil {
		skipOrFail(t, "the netboot lab needs Debian's kernel unpacked in %s: run .ci/tools.sh", kdir)
	}
	return buildMedia(t, kdir, withChain)
}

// buildMedia builds the installer emulator, an initrd whose /init it is
// (with the virtio-net modules), and an ISO in the Proxmox layout.
func buildMedia(t *testing.T, kdir string, withChain bool) netbootMedia {
	t.Helper()
	dir := t.TempDir()
	emu := filepath.Join(dir, "installeremu")
	build := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w", "-o", emu, "./internal/installeremu")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build the installer emulator: %v\n%s", err, out)
	}
	var cw newcArchive
	for _, d := range []string{"dev", "proc", "sys", "modules"} {
		cw.dir(d)
	}
	cw.node("dev/console", 0o20600, 5, 1)
	cw.file(t, "init", 0o755, emu)
	mods := virtioModules
	// efivarfs, for the emulator to read the SecureBoot variable (a
	// module in Debian's kernel, signed, so it loads under lockdown).
	if _, err := os.Stat(filepath.Join(kdir, "modules", "efivarfs.ko")); err == nil {
		mods = append(slices.Clone(mods), "efivarfs")
	} else if os.Getenv("PLASMA_E2E") != "" {
		t.Fatalf("the netboot lab needs efivarfs.ko in %s/modules: run .ci/tools.sh", kdir)
	}
	// The disk drivers, for the emulator to see its disks as the
	// installer's udev does.
	for _, m := range diskModules {
		if _, err := os.Stat(filepath.Join(kdir, "modules", m+".ko")); err == nil {
			mods = append(slices.Clone(mods), m)
		} else if os.Getenv("PLASMA_E2E") != "" {
			t.Fatalf("the netboot lab needs %s.ko in %s/modules: run .ci/tools.sh", m, kdir)
		}
	}
	for _, m := range mods {
		cw.file(t, "modules/"+m+".ko", 0o644, filepath.Join(kdir, "modules", m+".ko"))
	}
	cw.data("modules/order", 0o644, []byte(strings.Join(mods, ".ko\n")+".ko\n"))
	root := filepath.Join(dir, "iso")
	os.MkdirAll(filepath.Join(root, "boot"), 0o755)
	if err := os.WriteFile(filepath.Join(root, "boot", "initrd.img"), cw.close(), 0o644); err != nil {
		t.Fatal(err)
	}
	copyFile(t, filepath.Join(kdir, "vmlinuz"), filepath.Join(root, "boot", "linux26"))
	// The EFI boot files, where a Proxmox ISO keeps its signed chain:
	// Debian's Microsoft-signed shim and Debian-signed network grub stand
	// in for Proxmox's, so that prepare takes the Secure Boot chain from
	// the ISO (e2e/secureboot_test.go).
	if withChain {
		os.MkdirAll(filepath.Join(root, "EFI", "BOOT"), 0o755)
		copyFile(t, debianShim, filepath.Join(root, "EFI", "BOOT", "BOOTX64.EFI"))
		copyFile(t, debianGrub, filepath.Join(root, "EFI", "BOOT", "grubx64.efi"))
	}
	// The base squashfs, where a Proxmox ISO keeps its kernel modules,
	// for prepare --discovery.
	baseSquashfs(t, kdir, filepath.Join(root, "pve-base.squashfs"))
	os.WriteFile(filepath.Join(root, ".cd-info"), []byte("PRODUCT='pve'\nPRODUCTLONG='Proxmox VE'\nRELEASE='9.2'\nISORELEASE='1'\nISONAME='proxmox-ve'\n"), 0o644)
	os.WriteFile(filepath.Join(root, "auto-installer-capable"), nil, 0o644)
	return netbootMedia{iso: makeISO(t, root, dir), kernel: filepath.Join(kdir, "vmlinuz"), root: root}
}

// makeISO writes the ISO of the files under root into dir.
func makeISO(t *testing.T, root, dir string) string {
	t.Helper()
	iso := filepath.Join(dir, "proxmox-ve_9.2-1.iso")
	if out, err := exec.Command("xorriso", "-as", "mkisofs", "-quiet", "-R", "-J", "-V", "PVE", "-o", iso, root).CombinedOutput(); err != nil {
		t.Fatalf("xorriso: %v\n%s", err, out)
	}
	return iso
}

// variant is a copy of the media whose ISO files edit changed (the
// emulator and initrd stay the same).
func (m netbootMedia) variant(t *testing.T, edit func(root string)) netbootMedia {
	t.Helper()
	dir := t.TempDir()
	root := filepath.Join(dir, "iso")
	if out, err := exec.Command("cp", "-a", m.root, root).CombinedOutput(); err != nil {
		t.Fatalf("copy the ISO's files: %v\n%s", err, out)
	}
	edit(root)
	m.iso, m.root = makeISO(t, root, dir), root
	return m
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// newcArchive writes an uncompressed newc cpio archive, the format the
// kernel unpacks as an initramfs.
type newcArchive struct {
	buf bytes.Buffer
	ino int
}

func (a *newcArchive) entry(name string, mode, major, minor int, data []byte) {
	a.ino++
	fmt.Fprintf(&a.buf, "070701%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X", a.ino, mode, 0, 0, 1, 0, len(data), 0, 0, major, minor, len(name)+1, 0)
	a.buf.WriteString(name + "\x00")
	a.pad()
	a.buf.Write(data)
	a.pad()
}

func (a *newcArchive) pad() {
	for a.buf.Len()%4 != 0 {
		a.buf.WriteByte(0)
	}
}

func (a *newcArchive) dir(name string)                      { a.entry(name, 0o40755, 0, 0, nil) }
func (a *newcArchive) node(name string, mode, maj, min int) { a.entry(name, mode, maj, min, nil) }
func (a *newcArchive) data(name string, perm int, b []byte) { a.entry(name, 0o100000|perm, 0, 0, b) }

func (a *newcArchive) file(t *testing.T, name string, perm int, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	a.data(name, perm, b)
}

func (a *newcArchive) close() []byte {
	a.entry("TRAILER!!!", 0, 0, 0, nil)
	return a.buf.Bytes()
}

// labOptions configure a lab's server.
type labOptions struct {
	tls      bool
	token    bool   // prepare --answer-auth-token auto
	bootFile string // --bootfile; empty: serve's default
	// kernelArgs are more --kernel-arg values for the installer.
	kernelArgs []string
	// serveArgs are more arguments of node-provisioner serve.
	serveArgs []string
	// prepareArgs are more arguments of node-provisioner prepare.
	prepareArgs []string
	// siteNextServer makes the site's DHCP server name the window as
	// next-server (siaddr) in its leases, with no boot file, as a site
	// does for a boot loader that reads only the lease (Debian's grub).
	siteNextServer bool
}

// bootLab is one run's network, site DHCP server and node-provisioner.
type bootLab struct {
	n          int
	opts       labOptions
	site, prov string // namespaces
	subnet     string // "10.77.1N"
	state, dir string
	env        []string
	serveLog   *lockedBuffer
	dnsmasqLog *lockedBuffer
	taps       int
}

// newLab builds run n's namespaces, bridge, veth and site DHCP server, and
// tears them down when the test ends, also when it fails.
func newLab(t *testing.T, n int, opts labOptions) *bootLab {
	t.Helper()
	l := &bootLab{n: n, opts: opts, site: fmt.Sprintf("pn-nb%d-site", n), prov: fmt.Sprintf("pn-nb%d-prov", n), subnet: fmt.Sprintf("10.77.%d", 10+n),
		dir: t.TempDir(), serveLog: &lockedBuffer{}, dnsmasqLog: &lockedBuffer{}}
	l.state = filepath.Join(l.dir, "state")
	home := filepath.Join(l.dir, "home")
	os.MkdirAll(filepath.Join(home, ".ssh"), 0o700)
	os.WriteFile(filepath.Join(home, ".ssh", "id_ed25519.pub"), []byte("ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGzx6HqSm1mQ3VcLaZ3r0ZKtgtF5wVbUEjS0Xv5R5N5g op@e2e\n"), 0o644)
	l.env = append(os.Environ(), "HOME="+home)
	del := func() {
		exec.Command("ip", "netns", "del", l.site).Run()
		exec.Command("ip", "netns", "del", l.prov).Run()
	}
	del()
	t.Cleanup(del)
	veth := fmt.Sprintf("pnnb%d", n)
	run(t, "ip", "netns", "add", l.site)
	run(t, "ip", "netns", "add", l.prov)
	run(t, "ip", "-n", l.site, "link", "set", "lo", "up")
	run(t, "ip", "-n", l.prov, "link", "set", "lo", "up")
	run(t, "ip", "-n", l.site, "link", "add", "br0", "type", "bridge")
	run(t, "ip", "-n", l.site, "addr", "add", l.subnet+".1/24", "dev", "br0")
	run(t, "ip", "-n", l.site, "addr", "add", fmt.Sprintf("fd77:%d::1/64", n), "dev", "br0")
	run(t, "ip", "-n", l.site, "link", "set", "br0", "up")
	run(t, "ip", "link", "add", veth+"s", "netns", l.site, "type", "veth", "peer", "name", veth+"p", "netns", l.prov)
	run(t, "ip", "-n", l.site, "link", "set", veth+"s", "master", "br0", "up")
	run(t, "ip", "-n", l.prov, "addr", "add", l.serverIP()+"/24", "dev", veth+"p")
	run(t, "ip", "-n", l.prov, "link", "set", veth+"p", "up")

	// The site's ordinary DHCP server: addresses only. --no-ping, or a
	// new client's first DISCOVER misses its window while dnsmasq pings;
	// router advertisements stop iPXE waiting for IPv6.
	d := exec.Command("ip", "netns", "exec", l.site, "dnsmasq", "--keep-in-foreground", "--conf-file=/dev/null", "--port=0", "--no-ping",
		"--bind-interfaces", "--interface=br0", "--dhcp-range="+l.subnet+".100,"+l.subnet+".150,255.255.255.0,1h",
		"--enable-ra", fmt.Sprintf("--dhcp-range=fd77:%d::,ra-only,64", n), "--dhcp-leasefile="+filepath.Join(l.dir, "leases"),
		"--pid-file=", "--log-dhcp", "--log-facility=-", "--user=root")
	if opts.siteNextServer {
		d.Args = append(d.Args, "--dhcp-boot=,,"+l.serverIP())
	}
	d.Stdout, d.Stderr = l.dnsmasqLog, l.dnsmasqLog
	if err := d.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		d.Process.Kill()
		d.Wait()
		if t.Failed() {
			t.Logf("dnsmasq log:\n%s", l.dnsmasqLog.String())
		}
	})
	return l
}

func (l *bootLab) serverIP() string { return l.subnet + ".2" }

func (l *bootLab) np(t *testing.T, args ...string) string {
	t.Helper()
	c := exec.Command(filepath.Join(bin, "node-provisioner"), append([]string{"--state-dir", l.state, "--secrets-dir", filepath.Join(l.dir, "secrets")}, args...)...)
	c.Env = l.env
	out, err := c.CombinedOutput()
	if err != nil {
		t.Fatalf("node-provisioner %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// register registers a node pinned to mac.
func (l *bootLab) register(t *testing.T, name, mac string, extra ...string) {
	t.Helper()
	args := []string{"register", name, "--boot-disk", "any"}
	if mac != "" {
		args = append(args, "--mac", mac)
	}
	l.np(t, append(args, extra...)...)
}

// serve prepares the media with the lab's answer URL baked in and starts
// node-provisioner serve in the prov namespace until the test ends.
func (l *bootLab) serve(t *testing.T, media netbootMedia) {
	t.Helper()
	scheme := "http"
	prep := []string{"prepare", "--iso", media.iso}
	if l.opts.tls {
		scheme = "https"
		prep = append(prep, "--cert-fingerprint", "auto")
	}
	prep = append(prep, "--answer-url", scheme+"://"+l.serverIP()+":8090/answer")
	if l.opts.token {
		prep = append(prep, "--answer-auth-token", "auto")
	}
	l.np(t, append(prep, l.opts.prepareArgs...)...)
	args := []string{"--state-dir", l.state, "--secrets-dir", filepath.Join(l.dir, "secrets"), "serve", "--http", l.serverIP() + ":8090", "--ttl", "15m",
		"--dhcp-interface", fmt.Sprintf("pnnb%dp", l.n), "--domain", "e2e.test", "--kernel-arg", "console=ttyS0", "--kernel-arg", "panic=-1"}
	if l.opts.tls {
		args = append(args, "--tls")
	}
	if l.opts.bootFile != "" {
		args = append(args, "--bootfile", l.opts.bootFile)
	}
	for _, k := range l.opts.kernelArgs {
		args = append(args, "--kernel-arg", k)
	}
	args = append(args, l.opts.serveArgs...)
	s := exec.Command("ip", append([]string{"netns", "exec", l.prov, filepath.Join(bin, "node-provisioner")}, args...)...)
	s.Env = l.env
	s.Stdout, s.Stderr = l.serveLog, l.serveLog
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		s.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { s.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			s.Process.Kill()
			<-done
		}
		if t.Failed() {
			t.Logf("node-provisioner serve log:\n%s", l.serveLog.String())
			ev, _ := os.ReadFile(filepath.Join(l.state, "events.jsonl"))
			t.Logf("server event log (events.jsonl):\n%s", ev)
		}
	})
	end := time.Now().Add(15 * time.Second)
	for !strings.Contains(l.serveLog.String(), "Serving answers") {
		if time.Now().After(end) || s.ProcessState != nil {
			t.Fatalf("serve did not start:\n%s", l.serveLog.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (l *bootLab) wantLog(t *testing.T, s string) {
	t.Helper()
	if !strings.Contains(l.serveLog.String(), s) {
		t.Errorf("the server log does not mention %q", s)
	}
}

func (l *bootLab) wantNoLog(t *testing.T, s string) {
	t.Helper()
	if strings.Contains(l.serveLog.String(), s) {
		t.Errorf("the server log mentions %q", s)
	}
}

// events reads the answer server's event log.
func (l *bootLab) events(t *testing.T) []map[string]any {
	t.Helper()
	raw, _ := os.ReadFile(filepath.Join(l.state, "events.jsonl"))
	var out []map[string]any
	for _, line := range bytes.Split(raw, []byte("\n")) {
		var e map[string]any
		if json.Unmarshal(line, &e) == nil {
			out = append(out, e)
		}
	}
	return out
}

// wantEvent wants an event of kind whose JSON mentions s.
func (l *bootLab) wantEvent(t *testing.T, kind, s string) {
	t.Helper()
	for _, e := range l.events(t) {
		b, _ := json.Marshal(e)
		if e["kind"] == kind && strings.Contains(string(b), s) {
			return
		}
	}
	t.Errorf("no %s event mentioning %q in the event log", kind, s)
}

// vmOptions describe one QEMU machine.
type vmOptions struct {
	name, mac string
	// uefi boots q35 with OVMF; else pc with SeaBIOS.
	uefi bool
	// secureBoot (with uefi) boots OVMF with Secure Boot enforcing and
	// Microsoft's keys enrolled (OVMF_CODE_4M.ms.fd, a fresh copy of
	// OVMF_VARS_4M.ms.fd), on q35 with SMM.
	secureBoot bool
	// httpBoot (with uefi) turns OVMF's PXE off (fw_cfg
	// opt/org.tianocore/IPv4PXESupport and IPv6Support), so that the
	// NIC's first boot option is UEFI HTTP boot over IPv4.
	httpBoot bool
	// rom keeps the NIC's iPXE option ROM; without it (UEFI) OVMF's own
	// PXE client does the first stage.
	rom bool
	// direct boots the staged kernel and initrd with -kernel and
	// -initrd (as if from a USB stick), no network boot; cmdline is added
	// to its kernel command line.
	direct  bool
	cmdline string
	// until ends the machine once the serial log matches it (for boots
	// that never reach the emulator); empty: wait for the marker. With
	// untilAfter, only what follows untilAfter's first showing counts.
	until, untilAfter string
	// keys are typed on the serial console once the serial log shows
	// typeAt (the console is then a socket whose log is the serial log).
	typeAt, keys string
	limit        time.Duration
	// qemuArgs are more arguments of QEMU (disks).
	qemuArgs []string
}

// machine is a finished QEMU run.
type machine struct {
	opts     vmOptions
	serial   string
	took     time.Duration
	marker   string // OK, REFUSED or FAIL; empty without a marker
	detail   string
	duration time.Duration
}

// boot runs a machine on a new tap of the lab's bridge until it powers
// off, its until pattern shows, or its time limit.
func (l *bootLab) boot(t *testing.T, o vmOptions) *machine {
	t.Helper()
	return l.bootAll(t, o)[0]
}

// bootAll runs machines at once.
func (l *bootLab) bootAll(t *testing.T, opts ...vmOptions) []*machine {
	t.Helper()
	ctx := context.Background()
	if err := qemuSlots.Acquire(ctx, int64(len(opts))); err != nil {
		t.Fatal(err)
	}
	defer qemuSlots.Release(int64(len(opts)))
	out := make([]*machine, len(opts))
	var wg sync.WaitGroup
	for i, o := range opts {
		l.taps++
		tap := fmt.Sprintf("pnnb%dt%d", l.n, l.taps)
		run(t, "ip", "-n", l.site, "tuntap", "add", "dev", tap, "mode", "tap")
		run(t, "ip", "-n", l.site, "link", "set", tap, "master", "br0", "up")
		wg.Go(func() { out[i] = l.qemu(o, tap) })
	}
	wg.Wait()
	for _, m := range out {
		how := "BIOS"
		if m.opts.uefi {
			how = "UEFI"
		}
		if m.opts.secureBoot {
			how += " Secure Boot"
		}
		if m.opts.httpBoot {
			how += " HTTP"
		}
		if m.opts.direct {
			how += " direct kernel"
		}
		line := fmt.Sprintf("netboot %s: %s boot of %s took %s (%s)", t.Name(), how, m.opts.name, m.took.Round(100*time.Millisecond), orNone(m.marker))
		t.Log(line)
		recordTime(line)
		t.Cleanup(func() {
			if t.Failed() {
				t.Logf("serial log of %s:\n%s", m.opts.name, m.serial)
			}
		})
	}
	return out
}

func orNone(s string) string {
	if s == "" {
		return "no marker"
	}
	return s
}

// recordTime appends a boot's duration to $PLASMA_ARTIFACTS/netboot-times.txt,
// which CI prints.
func recordTime(line string) {
	dir := os.Getenv("PLASMA_ARTIFACTS")
	if dir == "" {
		return
	}
	os.MkdirAll(dir, 0o755)
	f, err := os.OpenFile(filepath.Join(dir, "netboot-times.txt"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err == nil {
		fmt.Fprintln(f, time.Now().UTC().Format(time.RFC3339), line)
		f.Close()
	}
}

func (l *bootLab) qemu(o vmOptions, tap string) *machine {
	m := &machine{opts: o}
	dir := filepath.Join(l.dir, "vm-"+o.name)
	os.MkdirAll(dir, 0o755)
	serial := filepath.Join(dir, "serial.log")
	args := []string{"netns", "exec", l.site, "qemu-system-x86_64", "-accel", "tcg", "-cpu", "max", "-m", "512", "-smp", "1", "-nographic", "-monitor", "none",
		"-no-reboot", "-smbios", "type=1,serial=E2E-" + strings.ToUpper(o.name),
		"-uuid", "e2e00000-0000-4000-8000-" + strings.ReplaceAll(o.mac, ":", ""),
		"-netdev", "tap,id=n0,ifname=" + tap + ",script=no,downscript=no"}
	sock := filepath.Join(dir, "serial.sock")
	if o.keys != "" {
		args = append(args, "-chardev", "socket,id=s0,server=on,wait=off,path="+sock+",logfile="+serial, "-serial", "chardev:s0")
	} else {
		args = append(args, "-serial", "file:"+serial)
	}
	args = append(args, o.qemuArgs...)
	nic := "virtio-net-pci,netdev=n0,mac=" + o.mac + ",bootindex=1"
	if !o.rom {
		nic += ",romfile="
	}
	args = append(args, "-device", nic)
	switch {
	case o.uefi && o.secureBoot:
		vars := filepath.Join(dir, "vars.fd")
		b, _ := os.ReadFile(ovmfVarsMS)
		os.WriteFile(vars, b, 0o644)
		args = append(args, "-machine", "q35,smm=on", "-global", "driver=cfi.pflash01,property=secure,value=on",
			"-drive", "if=pflash,format=raw,unit=0,readonly=on,file="+ovmfCodeMS, "-drive", "if=pflash,format=raw,unit=1,file="+vars)
	case o.uefi:
		vars := filepath.Join(dir, "vars.fd")
		b, _ := os.ReadFile(ovmfVars)
		os.WriteFile(vars, b, 0o644)
		args = append(args, "-machine", "q35", "-drive", "if=pflash,format=raw,unit=0,readonly=on,file="+ovmfCode, "-drive", "if=pflash,format=raw,unit=1,file="+vars)
	default:
		args = append(args, "-machine", "pc")
	}
	if o.uefi && o.httpBoot {
		args = append(args, "-fw_cfg", "name=opt/org.tianocore/IPv4PXESupport,string=n", "-fw_cfg", "name=opt/org.tianocore/IPv6Support,string=n")
	}
	if o.direct {
		rel := filepath.Join(l.state, "assets", "9.2-1")
		args = append(args, "-kernel", filepath.Join(rel, "linux26"), "-initrd", filepath.Join(rel, "initrd-netboot.img"), "-append", strings.TrimSpace("console=ttyS0 panic=-1 proxmox-start-auto-installer "+o.cmdline))
	} else if !o.uefi {
		args = append(args, "-boot", "n")
	}
	ctx, cancel := context.WithTimeout(context.Background(), o.limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, "ip", args...)
	var qlog bytes.Buffer
	cmd.Stdout, cmd.Stderr = &qlog, &qlog
	start := time.Now()
	if err := cmd.Start(); err != nil {
		m.serial = err.Error()
		return m
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	typed := false
wait:
	for {
		select {
		case <-done:
			break wait
		case <-tick.C:
			if o.keys != "" && !typed {
				if b, _ := os.ReadFile(serial); bytes.Contains(b, []byte(o.typeAt)) {
					typed = typeKeys(sock, serial, o.keys, &qlog)
				}
			}
			if o.until != "" {
				b, _ := os.ReadFile(serial)
				if o.untilAfter != "" {
					_, b, _ = bytes.Cut(b, []byte(o.untilAfter))
				}
				if bytes.Contains(b, []byte(o.until)) {
					time.Sleep(2 * time.Second) // a little longer: nothing else may follow
					cmd.Process.Kill()
					<-done
					break wait
				}
			}
		}
	}
	m.took = time.Since(start)
	b, _ := os.ReadFile(serial)
	m.serial = string(b)
	if ctx.Err() != nil {
		m.serial += fmt.Sprintf("\n[test: QEMU killed after its limit of %s]\n", o.limit)
	}
	if qlog.Len() > 0 {
		m.serial += "\n[qemu output]\n" + qlog.String()
	}
	if s := markerRE.FindStringSubmatch(m.serial); s != nil {
		m.marker, m.detail = s[1], strings.TrimSpace(s[2])
	}
	return m
}

// typeKeys types keys on the serial console's socket a byte at a time,
// each once the one before has echoed (the serial log, at path, grew) or
// after 2 s: firmware consoles drop what comes faster than they read. It
// says whether it could.
func typeKeys(sock, path, keys string, qlog *bytes.Buffer) bool {
	c, err := net.DialTimeout("unix", sock, 5*time.Second)
	if err != nil {
		fmt.Fprintf(qlog, "[test: typing on the serial console: %v]\n", err)
		return false
	}
	defer c.Close()
	// Read what the guest writes (the log keeps it): a UART writes a
	// byte at a time, and a socket nobody reads fills in a few hundred.
	go io.Copy(io.Discard, c)
	size := func() int64 {
		fi, err := os.Stat(path)
		if err != nil {
			return 0
		}
		return fi.Size()
	}
	for i := 0; i < len(keys); i++ {
		before := size()
		if _, err := c.Write([]byte{keys[i]}); err != nil {
			fmt.Fprintf(qlog, "[test: typing on the serial console: %v]\n", err)
			return false
		}
		for end := time.Now().Add(2 * time.Second); size() == before && time.Now().Before(end); {
			time.Sleep(20 * time.Millisecond)
		}
		time.Sleep(50 * time.Millisecond)
	}
	return true
}

// wantOK wants the emulator's OK marker with an FQDN starting with fqdn.
func (m *machine) wantOK(t *testing.T, fqdn string) {
	t.Helper()
	if m.marker != "OK" || !strings.Contains(m.detail, "fqdn="+fqdn) {
		t.Errorf("%s: marker %s %q; want OK with fqdn=%s…", m.opts.name, orNone(m.marker), m.detail, fqdn)
	}
}

// wantDetail wants each of parts in the marker line's details.
func (m *machine) wantDetail(t *testing.T, parts ...string) {
	t.Helper()
	for _, p := range parts {
		if !strings.Contains(m.detail, p) {
			t.Errorf("%s: marker details %q lack %q", m.opts.name, m.detail, p)
		}
	}
}

func (m *machine) wantSerial(t *testing.T, s string) {
	t.Helper()
	if !strings.Contains(m.serial, s) {
		t.Errorf("%s: the serial log does not show %q", m.opts.name, s)
	}
}
