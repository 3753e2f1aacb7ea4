package e2e

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/plasmactl/plasma-node/pxe/events"
)

// grubProbe is typed at grub's prompt under UEFI HTTP boot: what grub
// took from the firmware (prefix, root, addresses) and whether it can
// load http. Typed lines echo as typed ($prefix), answers expanded.
const grubProbe = "echo p=$prefix r=$root\rnet_ls_addr\rinsmod http\rset d=done\recho probe-$d\r"

// get fetches url from inside the lab's site namespace (this test binary
// run there with PN_E2E_GET) and returns the body of a 200.
func (l *bootLab) get(t *testing.T, url string) string {
	t.Helper()
	cmd := exec.Command("ip", "netns", "exec", l.site, os.Args[0], "-test.run", "^$")
	cmd.Env = append(os.Environ(), "PN_E2E_GET="+url)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("GET %s: %v\n%s", url, err, stderr.String())
	}
	return string(out)
}

// httpGet is PN_E2E_GET's side: the body of a 200 on stdout, exit 0;
// anything else on stderr, exit 1.
func httpGet(url string) int {
	c := http.Client{Timeout: 10 * time.Second}
	resp, err := c.Get(url)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		fmt.Fprintln(os.Stderr, resp.Status)
		return 1
	}
	if _, err := io.Copy(os.Stdout, io.LimitReader(resp.Body, 16<<20)); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

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
// comes from the window's proxy-DHCP. SiteLeaseWithoutNextServer shows
// that requirement, HTTP how far UEFI HTTP boot goes (to grub).
func TestNetbootSecureBoot(t *testing.T) {
	t.Parallel() // its labs (12-18) are its own; qemuSlots bounds the machines
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
		// The window's page shows it too, with the chain's steps.
		page := l.get(t, "http://"+l.serverIP()+":8090/")
		if i := strings.Index(page, `id="node-sb1"`); i < 0 || !strings.Contains(page[i:], `data-secure-boot="on"`) || !strings.Contains(page[i:], `data-step="shim" class="seen"`) {
			t.Errorf("the page does not show sb1 installed with Secure Boot on through shim:\n%s", page)
		}
	})
	t.Run("FolderChain", func(t *testing.T) {
		t.Parallel()
		// Nothing about Proxmox's own EFI boot files could be read here
		// (docs/secure-boot.md), so the chain folder is the path tested end to end: an
		// ISO without /EFI/BOOT, and prepare --secure-boot-dir naming a
		// folder with Debian's files under their package names.
		plain := media.variant(t, func(root string) { os.RemoveAll(filepath.Join(root, "EFI")) })
		folder := t.TempDir()
		copyFile(t, debianShim, filepath.Join(folder, "shimx64.efi.signed"))
		copyFile(t, debianGrub, filepath.Join(folder, "grubnetx64.efi.signed"))
		l := newLab(t, 17, labOptions{siteNextServer: true, serveArgs: []string{"--secure-boot"}, prepareArgs: []string{"--secure-boot-dir", folder}})
		l.register(t, "sbdir", "52:54:00:77:0c:10")
		l.serve(t, plain)
		mf, err := os.ReadFile(filepath.Join(l.state, "assets", "9.2-1", "manifest.json"))
		if err != nil || !strings.Contains(string(mf), `"source": "folder"`) || !strings.Contains(string(mf), "Debian Secure Boot Signer 2022 - grub2") {
			t.Errorf("prepare took no Secure Boot chain from the folder: %v\n%s", err, mf)
		}
		m := l.boot(t, vmOptions{name: "sbdir", mac: "52:54:00:77:0c:10", uefi: true, secureBoot: true, limit: 300 * time.Second})
		m.wantOK(t, "sbdir.")
		m.wantDetail(t, "secureboot=true", "webhook=200")
		m.wantSerial(t, "Welcome to GRUB!")
		l.wantEvent(t, "installed", "Secure Boot on")
		l.wantSteps(t, events.Shim, events.Grub, events.Kernel, events.Initrd, events.Installed)
	})
	t.Run("PrepareWarnsOfAKernelTheShimDoesNotCarry", func(t *testing.T) {
		t.Parallel()
		// A kernel signed by a key Debian's shim does not carry (as
		// Proxmox's kernel is to it): Debian's kernel re-signed with a
		// throwaway key. prepare stages the chain and says a MOK is needed.
		for _, tool := range []struct{ name, pkg string }{{"osslsigncode", "osslsigncode"}, {"openssl", "openssl"}} {
			if _, err := exec.LookPath(tool.name); err != nil {
				skipOrFail(t, "the MOK warning test signs a kernel with %s (Debian package %s)", tool.name, tool.pkg)
			}
		}
		dir := t.TempDir()
		key, cert, unsigned := filepath.Join(dir, "key.pem"), filepath.Join(dir, "cert.pem"), filepath.Join(dir, "unsigned")
		run(t, "openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", cert, "-days", "2", "-subj", "/CN=Example Kernel Signer")
		resigned := media.variant(t, func(root string) {
			os.RemoveAll(filepath.Join(root, "EFI"))
			kernel := filepath.Join(root, "boot", "linux26")
			run(t, "osslsigncode", "remove-signature", "-in", kernel, "-out", unsigned)
			os.Remove(kernel)
			run(t, "osslsigncode", "sign", "-certs", cert, "-key", key, "-in", unsigned, "-out", kernel)
		})
		folder := filepath.Join(dir, "chain")
		os.Mkdir(folder, 0o755)
		copyFile(t, debianShim, filepath.Join(folder, "shimx64.efi"))
		copyFile(t, debianGrub, filepath.Join(folder, "grubx64.efi"))
		c := exec.Command(filepath.Join(bin, "node-provisioner"), "--state-dir", filepath.Join(dir, "state"), "prepare", "--iso", resigned.iso,
			"--answer-url", "http://10.0.0.2:8090/answer", "--secure-boot-dir", folder)
		var stdout, stderr bytes.Buffer
		c.Stdout, c.Stderr = &stdout, &stderr
		if err := c.Run(); err != nil {
			t.Fatalf("prepare: %v\n%s%s", err, stdout.String(), stderr.String())
		}
		for _, line := range strings.Split(stderr.String(), "\n") {
			if strings.Contains(line, "warning:") {
				t.Log(strings.TrimSpace(line))
			}
		}
		for _, want := range []string{`warning: the kernel's signer "Example Kernel Signer" is not carried by the shim (the vendor certificate "Debian Secure Boot CA")`, "mokutil --import"} {
			if !strings.Contains(stderr.String(), want) {
				t.Errorf("prepare's stderr does not say %q:\n%s", want, stderr.String())
			}
		}
		if !strings.Contains(stdout.String(), "Secure Boot chain from the folder (MOK needed for the kernel)") {
			t.Errorf("prepare's summary does not say a MOK is needed for the kernel:\n%s", stdout.String())
		}
		if mf, err := os.ReadFile(filepath.Join(dir, "state", "assets", "9.2-1", "manifest.json")); err != nil || !regexp.MustCompile(`"mok_needed":\s*\[\s*"kernel"\s*\]`).Match(mf) {
			t.Errorf("the manifest does not say a MOK is needed for the kernel: %v\n%s", err, mf)
		}
	})
	t.Run("HTTP", func(t *testing.T) {
		t.Parallel()
		// UEFI HTTP boot (OVMF's PXE turned off): the proxy offers the
		// shim's URL, shim fetches grubx64.efi beside it over HTTP (it asks
		// for <base>/ipxe//grubx64.efi, served without a redirect), and
		// grub starts under Secure Boot. It sets its network from the
		// firmware's HTTP boot device path (address, and its prefix on an
		// http device at the window), but Debian 12's signed grub carries
		// no http module, and loads none under Secure Boot: it reads no
		// configuration (the window's /grub/grub.cfg is never asked for)
		// and stops at its prompt, where the test asks it what it has
		// (grubProbe). HTTPInstall installs with a grub that has http.
		l := newLab(t, 15, labOptions{siteNextServer: true, serveArgs: []string{"--secure-boot"}})
		l.register(t, "sbhttp", "52:54:00:77:0a:10")
		l.serve(t, media)
		m := l.boot(t, vmOptions{name: "sbhttp", mac: "52:54:00:77:0a:10", uefi: true, secureBoot: true, httpBoot: true,
			typeAt: "grub> ", keys: grubProbe, until: "probe-done", limit: 200 * time.Second})
		win := l.serverIP() + ":8090"
		m.wantSerial(t, "Start HTTP Boot over IPv4")
		m.wantSerial(t, "URI: http://"+win+"/ipxe/shimx64.efi")
		m.wantSerial(t, "Welcome to GRUB!")
		l.wantEvent(t, string(events.Shim), "shimx64.efi over HTTP")
		l.wantEvent(t, string(events.Grub), "grubx64.efi over HTTP")
		m.wantSerial(t, "p=(http,"+win+")/grub r=http,"+win)
		m.wantSerial(t, "efinet0 52:54:00:77:0a:10 10.")
		m.wantSerial(t, "error: disk `http,"+win+"' not found.")
		m.wantSerial(t, "probe-done")
		l.wantNoLog(t, "grub configuration sent")
		if m.marker != "" {
			t.Errorf("grub went on past its prompt (update docs/secure-boot.md and this test): %s %s", m.marker, m.detail)
		}
	})
	t.Run("HTTPInstall", func(t *testing.T) {
		t.Parallel()
		// UEFI HTTP boot to the installer: a chain folder with Debian's
		// shim and bookworm-backports' Debian-signed grub 2.12, which has
		// the http module (.ci/tools.sh fetches it). The firmware fetches
		// shim, shim grub, all over HTTP; grub reads /grub/grub.cfg from
		// the window, sources its machine's entry from /boot.grub, and
		// fetches the kernel and initrd with its http module. No TFTP.
		grubHTTP, _ := filepath.Abs("../.tools/grub-http/grubnetx64.efi.signed")
		if _, err := os.Stat(grubHTTP); err != nil {
			skipOrFail(t, "the HTTP boot install needs a signed grub with the http module in %s: run .ci/tools.sh", grubHTTP)
		}
		plain := media.variant(t, func(root string) { os.RemoveAll(filepath.Join(root, "EFI")) })
		folder := t.TempDir()
		copyFile(t, debianShim, filepath.Join(folder, "shimx64.efi.signed"))
		copyFile(t, grubHTTP, filepath.Join(folder, "grubnetx64.efi.signed"))
		l := newLab(t, 18, labOptions{serveArgs: []string{"--secure-boot"}, prepareArgs: []string{"--secure-boot-dir", folder}})
		l.register(t, "sbweb", "52:54:00:77:0d:10")
		l.serve(t, plain)
		if mf, err := os.ReadFile(filepath.Join(l.state, "assets", "9.2-1", "manifest.json")); err != nil || !regexp.MustCompile(`"grub_http":\s*true`).Match(mf) {
			t.Errorf("the manifest does not say the folder's grub has http: %v\n%s", err, mf)
		}
		m := l.boot(t, vmOptions{name: "sbweb", mac: "52:54:00:77:0d:10", uefi: true, secureBoot: true, httpBoot: true, limit: 300 * time.Second})
		win := l.serverIP() + ":8090"
		m.wantSerial(t, "URI: http://"+win+"/ipxe/shimx64.efi")
		m.wantOK(t, "sbweb.")
		m.wantDetail(t, "secureboot=true", "webhook=200")
		l.wantEvent(t, string(events.Shim), "shimx64.efi over HTTP")
		l.wantEvent(t, string(events.Grub), "grubx64.efi over HTTP")
		l.wantEvent(t, "installed", "Secure Boot on")
		l.wantSteps(t, events.Shim, events.Grub, events.Script, events.Kernel, events.Initrd, events.Installed)
		l.wantLog(t, "grub configuration sent")
		l.wantLog(t, "grub entry: install")
		l.wantNoLog(t, "file=grubx64.efi") // no TFTP
	})
	t.Run("SiteLeaseWithoutNextServer", func(t *testing.T) {
		t.Parallel()
		// The site's DHCP as plain as can be (no --dhcp-boot): shim,
		// reading the proxy offer, gets grub from the window by TFTP, but
		// Debian's grub 2.06 takes its server from the site's lease only:
		// its first read request (/grub/x86_64-efi/command.lst) goes to
		// the site's DHCP server, which serves no TFTP, never to the
		// window (no configuration the window could write reaches it,
		// whatever server it names). The test listens there and ends the
		// machine on that request. This is why the site's DHCP must name
		// the window as next-server.
		l := newLab(t, 16, labOptions{serveArgs: []string{"--secure-boot"}})
		l.register(t, "sbplain", "52:54:00:77:0b:10")
		l.serve(t, media)
		site := l.listenSiteTFTP(t)
		m := l.boot(t, vmOptions{name: "sbplain", mac: "52:54:00:77:0b:10", uefi: true, secureBoot: true, stop: site.asked, limit: 150 * time.Second})
		l.wantLog(t, "file=shimx64.efi")
		l.wantLog(t, "file=grubx64.efi")
		m.wantSerial(t, "Welcome to GRUB!")
		select {
		case <-site.asked:
			if !strings.HasPrefix(site.file, "/grub/") || !strings.HasPrefix(site.from, l.subnet+".") {
				t.Errorf("the site's DHCP server was asked for %q by %s; want grub's first file (/grub/…) from the machine", site.file, site.from)
			}
			t.Logf("grub asked the lease's server, not the window, for %s", site.file)
		default:
			t.Error("grub sent the site's DHCP server (its lease's server) no TFTP read request")
		}
		l.wantNoLog(t, "grub/")
		l.wantNoLog(t, "grub entry")
		if m.marker != "" {
			t.Errorf("grub went on without next-server (update docs/secure-boot.md and this test): %s %s", m.marker, m.detail)
		}
	})
	t.Run("PrepareRefusesABrokenFolder", func(t *testing.T) {
		t.Parallel()
		// prepare --secure-boot-dir with an unsigned shim or grub (the
		// shim-unsigned package's shimx64.efi) refuses with exit 2,
		// naming the piece, and stages no release.
		unsigned := "/usr/lib/shim/shimx64.efi"
		if _, err := os.Stat(unsigned); err != nil {
			skipOrFail(t, "the refusal needs %s (Debian package shim-unsigned)", unsigned)
		}
		for piece, files := range map[string][2]string{"shim": {unsigned, debianGrub}, "grub": {debianShim, unsigned}} {
			dir := t.TempDir()
			folder := filepath.Join(dir, "chain")
			os.Mkdir(folder, 0o755)
			copyFile(t, files[0], filepath.Join(folder, "shimx64.efi"))
			copyFile(t, files[1], filepath.Join(folder, "grubx64.efi"))
			c := exec.Command(filepath.Join(bin, "node-provisioner"), "--state-dir", filepath.Join(dir, "state"), "prepare", "--iso", media.iso,
				"--answer-url", "http://10.0.0.2:8090/answer", "--secure-boot-dir", folder)
			var stderr bytes.Buffer
			c.Stderr = &stderr
			err := c.Run()
			ee, ok := err.(*exec.ExitError)
			if !ok || ee.ExitCode() != 2 || !strings.Contains(stderr.String(), piece+": not signed") {
				t.Errorf("prepare with an unsigned %s: %v; want exit 2 naming the %s as not signed\n%s", piece, err, piece, stderr.String())
			}
			t.Logf("unsigned %s: %s", piece, strings.TrimSpace(stderr.String()))
			if _, err := os.Stat(filepath.Join(dir, "state", "assets", "9.2-1", "manifest.json")); err == nil {
				t.Errorf("prepare with an unsigned %s staged a release", piece)
			}
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
		// Grub's exit returns to the firmware, which loads its next boot
		// option (OVMF says "BdsDxe: loading Boot000N" on the serial
		// console for each): the machine is watched until it does.
		const exitLine = "booting the next device"
		m := l.boot(t, vmOptions{name: "sbinst", mac: "52:54:00:77:09:10", uefi: true, secureBoot: true, untilAfter: exitLine, until: "BdsDxe: loading Boot", limit: 200 * time.Second})
		m.wantSerial(t, "registration sbinst was consumed")
		m.wantSerial(t, "Welcome to GRUB!")
		l.wantLog(t, "file=shimx64.efi")
		if m.marker != "" {
			t.Errorf("an installed machine reached the installer: %s %s", m.marker, m.detail)
		}
		// The option shim came from (the NIC's PXE over IPv4), then
		// another one after grub's exit.
		re := regexp.MustCompile(`BdsDxe: loading (Boot[0-9A-F]{4}) "([^"]*)"`)
		before, after, _ := strings.Cut(m.serial, exitLine)
		first, next := re.FindAllStringSubmatch(before, -1), re.FindStringSubmatch(after)
		switch {
		case len(first) == 0 || next == nil:
			t.Errorf("the firmware did not load a boot option after grub's exit (before: %q, after: %q)", first, next)
		case next[1] == first[len(first)-1][1]:
			t.Errorf("after grub's exit the firmware loaded the same option again: %s", next[0])
		default:
			t.Logf("grub exited from %s %q; the firmware moved on to %s %q", first[len(first)-1][1], first[len(first)-1][2], next[1], next[2])
		}
		l.wantLog(t, "grub entry: exit")
		if strings.Contains(l.serveLog.String(), "grub entry: install") {
			t.Error("an installed machine got grub's install entry")
		}
		// Nothing consumed: the one install is the direct boot's, and
		// the other registration is still pending.
		installs := 0
		for _, e := range l.events(t) {
			if e["kind"] == string(events.Installed) {
				installs++
			}
		}
		if installs != 1 {
			t.Errorf("%d installed events; want the first install's only", installs)
		}
		if list := l.np(t, "list"); !strings.Contains(list, "sbwait") || !strings.Contains(list, "pending") {
			t.Errorf("the pending registration changed:\n%s", list)
		}
	})
}

// wantSteps wants the timeline to show each of kinds, first seen in this
// order.
func (l *bootLab) wantSteps(t *testing.T, kinds ...events.Kind) {
	t.Helper()
	first := map[string]int{}
	for i, e := range l.events(t) {
		if k, _ := e["kind"].(string); k != "" {
			if _, seen := first[k]; !seen {
				first[k] = i
			}
		}
	}
	last := -1
	for _, k := range kinds {
		i, ok := first[string(k)]
		if !ok {
			t.Errorf("the timeline has no %s step", k)
			continue
		}
		if i < last {
			t.Errorf("the timeline's %s step comes before the step it follows", k)
		}
		last = i
	}
}
