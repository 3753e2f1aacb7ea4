package e2e

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

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
	for _, f := range []struct{ path, pkg string }{{ovmfCode, "ovmf"}, {ovmfVars, "ovmf"}, {nicROM, "ipxe-qemu"}, {"/usr/lib/ipxe/ipxe.efi", "ipxe"}, {"/usr/lib/ipxe/undionly.kpxe", "ipxe"}, {isolinuxBin, "isolinux"}, {isolinuxLdlinux, "syslinux-common"}} {
		if _, err := os.Stat(f.path); err != nil {
			skipOrFail(t, "the netboot lab needs %s (Debian package %s)", f.path, f.pkg)
		}
	}
	kdir := os.Getenv("PLASMA_KERNEL_DIR")
	if kdir == "" {
		kdir, _ = filepath.Abs("../.tools/kernel-v2")
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
	// ISOLINUX, the ISO's El Torito boot loader for a BIOS machine, which
	// boots the virtual CD of e2e/vmedia_test.go from the firmware.
	os.MkdirAll(filepath.Join(root, "isolinux"), 0o755)
	copyFile(t, isolinuxBin, filepath.Join(root, "isolinux", "isolinux.bin"))
	copyFile(t, isolinuxLdlinux, filepath.Join(root, "isolinux", "ldlinux.c32"))
	os.WriteFile(filepath.Join(root, "isolinux", "isolinux.cfg"), []byte(isolinuxCfg), 0o644)
	os.WriteFile(filepath.Join(root, ".cd-info"), []byte("PRODUCT='pve'\nPRODUCTLONG='Proxmox VE'\nRELEASE='9.2'\nISORELEASE='1'\nISONAME='proxmox-ve'\n"), 0o644)
	os.WriteFile(filepath.Join(root, "auto-installer-capable"), nil, 0o644)
	return netbootMedia{iso: makeISO(t, root, dir), kernel: filepath.Join(kdir, "vmlinuz"), root: root}
}

// The ISO's BIOS boot loader: ISOLINUX (Debian packages isolinux and
// syslinux-common), with a configuration that says so on the console and
// boots the installer's kernel and initrd with the command line a
// network boot of the emulator has.
const (
	isolinuxBin     = "/usr/lib/ISOLINUX/isolinux.bin"
	isolinuxLdlinux = "/usr/lib/syslinux/modules/bios/ldlinux.c32"
	isolinuxCfg     = "SAY " + isolinuxMarker + "\nDEFAULT installer\nPROMPT 0\nTIMEOUT 0\n" +
		"LABEL installer\n  KERNEL /boot/linux26\n  INITRD /boot/initrd.img\n  APPEND console=ttyS0 panic=-1\n"
	isolinuxMarker = "PLASMA-CD: ISOLINUX booted the CD"
)

// makeISO writes the ISO of the files under root into dir, bootable from
// a CD drive by a BIOS through El Torito (no emulation, ISOLINUX with its
// boot info table) when root holds isolinux/isolinux.bin.
func makeISO(t *testing.T, root, dir string) string {
	t.Helper()
	iso := filepath.Join(dir, "proxmox-ve_9.2-1.iso")
	args := []string{"-as", "mkisofs", "-quiet", "-R", "-J", "-V", "PVE", "-o", iso}
	if _, err := os.Stat(filepath.Join(root, "isolinux", "isolinux.bin")); err == nil {
		args = append(args, "-b", "isolinux/isolinux.bin", "-c", "isolinux/boot.cat", "-no-emul-boot", "-boot-load-size", "4", "-boot-info-table")
	}
	if out, err := exec.Command("xorriso", append(args, root)...).CombinedOutput(); err != nil {
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
