package e2e

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/plasmactl/plasma-node/pxe/events"
)

// Debian's Secure Boot chain (packages shim-signed, grub-efi-amd64-signed).
const (
	debianShim = "/usr/lib/shim/shimx64.efi.signed"
	debianGrub = "/usr/lib/grub/x86_64-efi-signed/grubnetx64.efi.signed"
)

// TestNetbootSecureBoot boots QEMU machines on OVMF with Secure Boot
// enforcing and Microsoft's keys enrolled (a fresh copy of the ms VARS for
// each) through the window's Secure Boot chain, which prepare took from
// the test ISO's EFI boot files: Debian's Microsoft-signed shim and
// Debian-signed grub over TFTP, the Debian-signed kernel and the
// installer initrd. Debian's grub 2.06 reads the site lease, not the proxy
// offer, for the server it was loaded from, so the site's DHCP names the
// window as next-server (siaddr, no boot file); the boot file itself still
// comes from the window's proxy-DHCP.
func TestNetbootSecureBoot(t *testing.T) {
	for _, f := range []struct{ path, pkg string }{{ovmfCodeMS, "ovmf"}, {ovmfVarsMS, "ovmf"}, {debianShim, "shim-signed"}, {debianGrub, "grub-efi-amd64-signed"}} {
		if _, err := os.Stat(f.path); err != nil {
			skipOrFail(t, "the Secure Boot netboot needs %s (Debian package %s)", f.path, f.pkg)
		}
	}
	media := netbootPrereqsWith(t, true)
	// buildMedia put Debian's chain where a Proxmox ISO keeps its EFI
	// boot files; prepare takes it from there (wantChain checks).
	wantChain := func(t *testing.T, l *bootLab) {
		t.Helper()
		m, err := os.ReadFile(filepath.Join(l.state, "assets", "9.2-1", "manifest.json"))
		if err != nil || !strings.Contains(string(m), `"source": "iso"`) || !strings.Contains(string(m), "Debian Secure Boot Signer 2022 - linux") {
			t.Errorf("prepare took no Secure Boot chain from the ISO: %v\n%s", err, m)
		}
	}
	t.Run("TFTP", func(t *testing.T) {
		t.Parallel()
		l := newLab(t, 12, labOptions{siteNextServer: true, serveArgs: []string{"--secure-boot"}})
		l.register(t, "sb1", "52:54:00:77:07:10")
		l.serve(t, media)
		wantChain(t, l)
		m := l.boot(t, vmOptions{name: "sb1", mac: "52:54:00:77:07:10", uefi: true, secureBoot: true, limit: 300 * time.Second})
		m.wantOK(t, "sb1.")
		m.wantDetail(t, "secureboot=true", "webhook=200")
		m.wantSerial(t, "Welcome to GRUB!")
		l.wantLog(t, "file=shimx64.efi")
		l.wantLog(t, "file=grubx64.efi")
		l.wantEvent(t, "installed", "sb1")
		// The webhook's boot-info: in the event, and in list -o json.
		l.wantEvent(t, "installed", "Secure Boot on")
		if out := l.np(t, "list", "-o", "json"); !regexp.MustCompile(`"secure_boot":\s*true`).MatchString(out) {
			t.Errorf("list -o json does not show Secure Boot on:\n%s", out)
		}
		for _, step := range []events.Kind{events.Shim, events.Grub, events.Kernel, events.Initrd} {
			l.wantEvent(t, string(step), "")
		}
	})
	t.Run("Enforced", func(t *testing.T) {
		t.Parallel()
		// The same firmware offered plain iPXE: it refuses to run it.
		l := newLab(t, 13, labOptions{bootFile: "snponly.efi"})
		l.register(t, "sbno", "52:54:00:77:08:10")
		l.serve(t, media)
		m := l.boot(t, vmOptions{name: "sbno", mac: "52:54:00:77:08:10", uefi: true, secureBoot: true, until: "Access Denied", limit: 150 * time.Second})
		m.wantSerial(t, "Access Denied")
		if m.marker != "" {
			t.Errorf("Secure Boot firmware ran iPXE to the installer: %s %s", m.marker, m.detail)
		}
	})
	t.Run("Refusal", func(t *testing.T) {
		t.Parallel()
		// The window offers iPXE; the registration asks for the chain
		// (register --secure-boot), and keeps it once consumed.
		l := newLab(t, 14, labOptions{siteNextServer: true})
		l.register(t, "sbinst", "52:54:00:77:09:10", "--secure-boot")
		l.np(t, "register", "sbwait", "--boot-disk", "any", "--mac", "52:54:00:77:09:99")
		// Consume sbinst as its first install would have.
		l.serve(t, media)
		m0 := l.boot(t, vmOptions{name: "sbinst-direct", mac: "52:54:00:77:09:10", direct: true, limit: 90 * time.Second})
		m0.wantOK(t, "sbinst.")
		m := l.boot(t, vmOptions{name: "sbinst", mac: "52:54:00:77:09:10", uefi: true, secureBoot: true, until: "booting the next device", limit: 200 * time.Second})
		m.wantSerial(t, "registration sbinst was consumed")
		m.wantSerial(t, "Welcome to GRUB!")
		l.wantLog(t, "file=shimx64.efi")
		if m.marker != "" {
			t.Errorf("an installed machine reached the installer: %s %s", m.marker, m.detail)
		}
		l.wantLog(t, "grub entry: exit")
		if strings.Contains(l.serveLog.String(), "grub entry: install") {
			t.Error("an installed machine got grub's install entry")
		}
		if list := l.np(t, "list"); !strings.Contains(list, "sbwait") || !strings.Contains(list, "pending") {
			t.Errorf("the pending registration changed:\n%s", list)
		}
	})
}
