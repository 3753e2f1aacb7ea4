package netboot

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/plasmactl/plasma-node/pxe/bootassets"
	"github.com/plasmactl/plasma-node/pxe/events"
)

func TestGrubScript(t *testing.T) {
	tests := map[string]struct {
		in   BootScript
		want string
	}{
		"a pending machine gets the kernel and initrd over grub's http module": {
			in: BootScript{Node: "pve1", Release: "9.2-1", BaseURL: "http://10.0.0.2:8090", MAC: "52:54:00:AA:BB:CC", KernelArgs: "ramdisk_size=16777216 rw console=ttyS0,115200"},
			want: "# plasma-node: Proxmox VE automated installer for node pve1 (release 9.2-1), Secure Boot chain.\n" +
				"set timeout=0\n" +
				"echo 'plasma-node: installing Proxmox VE on pve1'\n" +
				"linux \"(http,10.0.0.2:8090)/assets/9.2-1/linux26?mac=52:54:00:aa:bb:cc\" 'ramdisk_size=16777216' 'rw' 'console=ttyS0,115200'\n" +
				"initrd \"(http,10.0.0.2:8090)/assets/9.2-1/initrd-netboot.img?mac=52:54:00:aa:bb:cc\"\n" +
				"boot\n",
		},
		"no kernel arguments are the installer's defaults": {
			in: BootScript{Node: "pve1", Release: "9.2-1", BaseURL: "http://10.0.0.2:8090", MAC: "52:54:00:aa:bb:cc"},
			want: "# plasma-node: Proxmox VE automated installer for node pve1 (release 9.2-1), Secure Boot chain.\n" +
				"set timeout=0\n" +
				"echo 'plasma-node: installing Proxmox VE on pve1'\n" +
				"linux \"(http,10.0.0.2:8090)/assets/9.2-1/linux26?mac=52:54:00:aa:bb:cc\" 'ramdisk_size=16777216' 'rw' 'quiet' 'splash=silent' 'proxmox-start-auto-installer'\n" +
				"initrd \"(http,10.0.0.2:8090)/assets/9.2-1/initrd-netboot.img?mac=52:54:00:aa:bb:cc\"\n" +
				"boot\n",
		},
		"a kernel argument cannot add a grub command": {
			in: BootScript{Node: "pve1", Release: "9.2-1", BaseURL: "http://10.0.0.2:8090", MAC: "52:54:00:aa:bb:cc", KernelArgs: "a;reboot b'c $x"},
			want: "# plasma-node: Proxmox VE automated installer for node pve1 (release 9.2-1), Secure Boot chain.\n" +
				"set timeout=0\n" +
				"echo 'plasma-node: installing Proxmox VE on pve1'\n" +
				"linux \"(http,10.0.0.2:8090)/assets/9.2-1/linux26?mac=52:54:00:aa:bb:cc\" 'a;reboot' 'b'\\''c' '$x'\n" +
				"initrd \"(http,10.0.0.2:8090)/assets/9.2-1/initrd-netboot.img?mac=52:54:00:aa:bb:cc\"\n" +
				"boot\n",
		},
		"an installed machine gets grub's exit, so the firmware boots the next device": {
			in: BootScript{Reason: "registration inst1 was consumed"},
			want: "# plasma-node: this machine is not installed now.\n" +
				"# Exiting returns to the firmware, which boots the next device, so an\n" +
				"# installed node never reinstalls.\n" +
				"echo 'plasma-node: registration inst1 was consumed; booting the next device'\n" +
				"exit\n",
		},
		"a reason cannot break out of its quotes or its line": {
			in: BootScript{Reason: "it's\nreboot"},
			want: "# plasma-node: this machine is not installed now.\n" +
				"# Exiting returns to the firmware, which boots the next device, so an\n" +
				"# installed node never reinstalls.\n" +
				"echo 'plasma-node: it'\\''s reboot; booting the next device'\n" +
				"exit\n",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, GrubScript(tc.in)); diff != "" {
				t.Errorf("GrubScript (-want +got):\n%s", diff)
			}
		})
	}
}

// TestGrubConfigurationOfAnIPv6Window: grub's http device names an IPv6
// window in brackets, its port after them ("(http,[2001:db8::2]:8090)"),
// in the machine's entry and in the loader served over HTTP.
func TestGrubConfigurationOfAnIPv6Window(t *testing.T) {
	goldenHTTP(t, "install-ipv6.grub", GrubScript(BootScript{Node: "pve1", Release: "9.2-1", BaseURL: testBase6, MAC: "52:54:00:AA:BB:CC"}))
	goldenHTTP(t, "loader-ipv6.grub", grubLoaderConfigHTTP(testBase6))
	if got := GrubDevice("https://[2001:db8:77::2]:8443"); got != "(http,[2001:db8:77::2]:8443)" {
		t.Errorf("GrubDevice of an https IPv6 base = %s", got)
	}
}

func TestGrubLoaderConfig(t *testing.T) {
	want := "# plasma-node: this machine's entry comes from the window, by its MAC.\n" +
		"set timeout=0\n" +
		"source \"(tftp)/grub/machine/${net_default_mac}.cfg\"\n" +
		"echo 'plasma-node: no boot entry from the window; booting the next device'\n" +
		"exit\n"
	if diff := cmp.Diff(want, GrubLoaderConfig()); diff != "" {
		t.Errorf("GrubLoaderConfig (-want +got):\n%s", diff)
	}
}

func TestGrubLoaderConfigHTTP(t *testing.T) {
	want := "# plasma-node: this machine's entry comes from the window, by its MAC.\n" +
		"set timeout=0\n" +
		"source \"(http,10.0.0.2:8090)/boot.grub?mac=${net_default_mac}\"\n" +
		"echo 'plasma-node: no boot entry from the window; booting the next device'\n" +
		"exit\n"
	for _, base := range []string{"http://10.0.0.2:8090", "https://10.0.0.2:8090"} {
		if diff := cmp.Diff(want, grubLoaderConfigHTTP(base)); diff != "" {
			t.Errorf("grubLoaderConfigHTTP(%s) (-want +got):\n%s", base, diff)
		}
	}
}

// writeManifest writes release 9.1-1's manifest, its Secure Boot chain's
// grub with or without the http module.
func writeManifest(t *testing.T, state string, chain *bootassets.SecureBootChain) {
	t.Helper()
	rel := bootassets.Release{Format: 1, Name: "9.1-1", SourceISO: "proxmox-ve_9.1-1.iso", SecureBoot: chain,
		Assets: []bootassets.Asset{{Name: bootassets.AssetKernel, Size: int64(len(testKernel)), SHA256: strings.Repeat("0", 64)}}}
	b, err := json.Marshal(rel)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(state, "assets", "9.1-1", bootassets.ManifestName), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestGrubEntryDevice: the entry a grub reads by TFTP fetches the kernel
// and initrd with grub's http module when the release's manifest says
// its grub carries it, else by TFTP; a grub loaded by UEFI HTTP boot reads
// /grub/grub.cfg, which sources its entry from /boot.grub over HTTP.
func TestGrubEntryDevice(t *testing.T) {
	httpEntry := "linux \"(http,10.77.0.2:8090)/assets/9.1-1/linux26?mac=" + testMAC1 + "\""
	tftpEntry := "linux \"(tftp)/assets/9.1-1/linux26\""
	for name, tc := range map[string]struct {
		chain *bootassets.SecureBootChain
		want  string
	}{
		"a grub with http":                 {&bootassets.SecureBootChain{Source: bootassets.ChainFromFolder, GrubHTTP: true}, httpEntry},
		"a grub without http":              {&bootassets.SecureBootChain{Source: bootassets.ChainFromFolder}, tftpEntry},
		"a release without a chain":        {nil, tftpEntry},
		"a release without a manifest yet": {&bootassets.SecureBootChain{GrubHTTP: true}, tftpEntry},
	} {
		t.Run(name, func(t *testing.T) {
			e := newBootEnv(t, Config{}, testReg(t, "pve1", "sda", testMAC1))
			if name != "a release without a manifest yet" {
				writeManifest(t, e.state, tc.chain)
			}
			data, _, ok, err := e.h.TFTPFile(context.Background(), "grub/machine/"+testMAC1+".cfg", netip.MustParseAddrPort("10.77.0.120:1069"))
			if err != nil || !ok || !strings.Contains(string(data), tc.want) {
				t.Errorf("entry by TFTP (ok %v, err %v) lacks %q:\n%s", ok, err, tc.want, data)
			}
		})
	}
	e := newBootEnv(t, Config{}, testReg(t, "pve1", "sda", testMAC1))
	code, body, _ := e.get(t, "/"+GrubConfigName)
	if code != 200 || body != grubLoaderConfigHTTP("http://10.77.0.2:8090") {
		t.Errorf("GET /%s: %d\n%s", GrubConfigName, code, body)
	}
	code, body, _ = e.get(t, grubScriptPath+"?mac="+testMAC1)
	if code != 200 || !strings.Contains(body, httpEntry) {
		t.Errorf("GET %s: %d\n%s", grubScriptPath, code, body)
	}
}

// TestGrubEntryServed asks the handler, as the TFTP server does, for a
// pending machine's, an installed machine's and a stranger's grub entry,
// and for the release's kernel; and over HTTP for a pending machine's
// entry. The timeline shows each entry served.
func TestGrubEntryServed(t *testing.T) {
	e := newBootEnv(t, Config{}, testReg(t, "pve1", "sda", testMAC1), testReg(t, "inst1", "sda", "52:54:00:00:00:22"))
	e.consume(t, "inst1", "52:54:00:00:00:22")
	ctx := context.Background()
	peer := netip.MustParseAddrPort("10.77.0.120:1069")
	entry := func(mac string) string {
		t.Helper()
		data, f, ok, err := e.h.TFTPFile(ctx, "grub/machine/"+mac+".cfg", peer)
		if err != nil || !ok || f != nil {
			t.Fatalf("TFTPFile %s: ok %v file %v err %v", mac, ok, f, err)
		}
		return string(data)
	}
	if body := entry(testMAC1); !strings.Contains(body, "linux \"(tftp)/assets/9.1-1/linux26\"") || !strings.HasSuffix(body, "boot\n") {
		t.Errorf("pending machine:\n%s", body)
	}
	for _, mac := range []string{"52:54:00:00:00:22", "02:00:00:00:00:99"} {
		if body := entry(mac); !strings.HasSuffix(body, "exit\n") || strings.Contains(body, "linux") {
			t.Errorf("machine %s:\n%s", mac, body)
		}
	}
	_, f, ok, err := e.h.TFTPFile(ctx, "assets/9.1-1/linux26", peer)
	if err != nil || !ok || f == nil {
		t.Fatalf("kernel: ok %v err %v", ok, err)
	}
	b, _ := io.ReadAll(f)
	f.Close()
	if !bytes.Equal(b, testKernel) {
		t.Errorf("kernel by TFTP: %q", b)
	}
	for _, name := range []string{"assets/9.1-1/manifest.json", "assets/../x/linux26", "grub/grub.cfg", "shimx64.efi"} {
		if _, _, ok, _ := e.h.TFTPFile(ctx, name, peer); ok {
			t.Errorf("TFTPFile %s: taken; want it left to the TFTP root", name)
		}
	}
	code, body, _ := e.get(t, "/boot.grub?mac="+testMAC1)
	if code != 200 || !strings.Contains(body, "linux \"(http,10.77.0.2:8090)/assets/9.1-1/linux26?mac="+testMAC1+"\"") {
		t.Errorf("over HTTP: %d\n%s", code, body)
	}
	evs := e.h.cfg.Timeline.Snapshot().Nodes["pve1"]
	if len(evs) == 0 || evs[0].Stage != events.Script || !strings.HasPrefix(evs[0].Detail, "grub install release 9.1-1") || evs[0].IP != "10.77.0.120" {
		t.Errorf("timeline of pve1: %+v", evs)
	}
}

// TestTFTPFileRefusesWhatIsNotAFile: the kernel or initrd grub fetches
// by TFTP is served from a regular file only: a FIFO in its place is
// refused at once (a plain open would wait for a writer), a folder too,
// and a missing one is not found.
func TestTFTPFileRefusesWhatIsNotAFile(t *testing.T) {
	e := newBootEnv(t, Config{}, testReg(t, "pve1", "sda", testMAC1))
	rel := filepath.Join(e.h.cfg.AssetsDir, "9.1-1")
	for name, mk := range map[string]func(string) error{
		bootassets.AssetNetbootInitrd: func(p string) error { return syscall.Mkfifo(p, 0o644) },
		bootassets.AssetKernel:        func(p string) error { return os.Mkdir(p, 0o755) },
	} {
		p := filepath.Join(rel, name)
		if err := os.Remove(p); err != nil {
			t.Fatal(err)
		}
		if err := mk(p); err != nil {
			t.Fatal(err)
		}
	}
	tests := map[string]string{
		"assets/9.1-1/" + bootassets.AssetNetbootInitrd: "access violation: not a regular file",
		"assets/9.1-1/" + bootassets.AssetKernel:        "access violation: not a regular file",
		"assets/9.9-9/" + bootassets.AssetKernel:        "file not found",
	}
	for name, want := range tests {
		type result struct {
			f   *os.File
			ok  bool
			err error
		}
		done := make(chan result, 1)
		go func() {
			_, f, ok, err := e.h.TFTPFile(context.Background(), name, netip.MustParseAddrPort("10.77.0.120:1069"))
			done <- result{f, ok, err}
		}()
		select {
		case r := <-done:
			if r.f != nil {
				r.f.Close()
			}
			if !r.ok || r.f != nil || r.err == nil || r.err.Error() != want {
				t.Errorf("TFTPFile %s: ok %v file %v err %v; want refused with %q", name, r.ok, r.f != nil, r.err, want)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("TFTPFile %s hangs", name)
		}
	}
}

func TestFileStage(t *testing.T) {
	for file, want := range map[string]events.Kind{"shimx64.efi": events.Shim, "/grubx64.efi": events.Grub, "assets/9.2-1/linux26": events.Kernel,
		"assets/9.2-1/initrd-netboot.img": events.Initrd, "snponly.efi": events.TFTP, "grub/grub.cfg": events.TFTP} {
		if got := fileStage(file); got != want {
			t.Errorf("fileStage(%q) = %s; want %s", file, got, want)
		}
	}
}

// TestPageShowsTheSecureBootSteps: a node that took the chain shows its
// shim and grub steps and a grub entry; one that took iPXE does not.
func TestPageShowsTheSecureBootSteps(t *testing.T) {
	e := newBootEnv(t, Config{}, testReg(t, "pve1", "sda", testMAC1), testReg(t, "pve2", "sda", "52:54:00:00:00:33"))
	peer := netip.MustParseAddrPort("10.77.0.120:1069")
	e.h.Net(NetEvent{Kind: events.TFTP, Peer: peer, File: "shimx64.efi", Bytes: 10})
	e.h.Net(NetEvent{Kind: events.TFTP, Peer: peer, File: "grubx64.efi", Bytes: 10})
	if _, _, _, err := e.h.TFTPFile(context.Background(), "grub/machine/"+testMAC1+".cfg", peer); err != nil {
		t.Fatal(err)
	}
	code, page, _ := e.get(t, "/")
	if code != 200 {
		t.Fatal(code)
	}
	i, j := strings.Index(page, `id="node-pve1"`), strings.Index(page, `id="node-pve2"`)
	if i < 0 || j < 0 {
		t.Fatalf("nodes missing from the page:\n%s", page)
	}
	pve1, pve2 := page[i:], page[j:]
	if i < j {
		pve1 = page[i:j]
	} else {
		pve2 = page[j:i]
	}
	for _, want := range []string{`<li data-step="shim" class="seen"`, `<li data-step="grub" class="seen"`, `grub entry</li>`} {
		if !strings.Contains(pve1, want) {
			t.Errorf("pve1 lacks %q:\n%s", want, pve1)
		}
	}
	if strings.Contains(pve2, `data-step="shim"`) || !strings.Contains(pve2, "iPXE script</li>") {
		t.Errorf("pve2 (no chain) shows the chain's steps:\n%s", pve2)
	}
}
